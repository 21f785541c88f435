#include "service/metrics.h"

#include <utility>

#include "analyzers/registry.h"
#include "compile_lens/v1/report.pb.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "google/protobuf/descriptor.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "proto/register_files.h"
#include "proto/report_words.h"

namespace cl {
namespace {

using ::prometheus::Counter;
using ::prometheus::Gauge;
using ::prometheus::Histogram;
using ::prometheus::Labels;

// ---- Label values ------------------------------------------------------------------------------

// grpc-go's codes/code_string.go, indexed by code: grpc_code must match it exactly or the
// queries written for Go services silently return nothing. Note "Canceled", one "l".
constexpr absl::string_view kGoCodeNames[kGrpcCodes] = {
    "OK",       "Canceled",       "Unknown",          "InvalidArgument",   "DeadlineExceeded",
    "NotFound", "AlreadyExists",  "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
    "Aborted",  "OutOfRange",     "Unimplemented",    "Internal",          "Unavailable",
    "DataLoss", "Unauthenticated"};

// Every method the server serves: gRPC's own health and reflection services, then ours, read off
// the CompileLens descriptor so that a new RPC gets its series with no change here.
struct ServedMethod {
  std::string service;
  std::string method;
  std::string type;  // go-grpc-prometheus grpc_type
};
std::vector<ServedMethod> ServedMethods() {
  std::vector<ServedMethod> methods = {
      {"grpc.health.v1.Health", "Check", "unary"},
      {"grpc.health.v1.Health", "Watch", "server_stream"},
      {"grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo", "bidi_stream"},
  };
  RegisterProtoFiles();  // the pool holds a file once a message of it is used: now
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          v1::CompileLens::service_full_name());
  for (int i = 0; service != nullptr && i < service->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* m = service->method(i);
    const char* type = m->client_streaming()
                           ? (m->server_streaming() ? "bidi_stream" : "client_stream")
                           : (m->server_streaming() ? "server_stream" : "unary");
    methods.push_back({service->full_name(), m->name(), type});
  }
  return methods;
}

constexpr absl::string_view kRejectionNames[] = {"max_inflight", "queue_full",     "too_large",
                                                 "invalid",      "upload_timeout", "idle"};
static_assert(std::size(kRejectionNames) == static_cast<size_t>(Rejection::kIdle) + 1);

// Lint patterns come from the lint pass's catalog; the cap only guards against a runaway one.
constexpr size_t kMaxLintPatterns = 64;
constexpr char kLintCandidate[] = "candidate";  // a finding the correctness DB did not rate

// ---- Buckets -----------------------------------------------------------------------------------

// Go's prometheus.DefBuckets (.005 … 10 s) plus 30, 60, 120: a client stream includes the upload.
// Every pod must use the same buckets for histogram_quantile across pods.
const std::vector<double> kRpcSecondsBuckets = {.005, .01, .025, .05, .1, .25, .5,
                                                1,    2.5, 5,    10,  30, 60,  120};
const std::vector<double> kAnalysisSecondsBuckets = {.001, .0025, .005, .01, .025, .05, .1, .25,
                                                     .5,   1,     2.5,  5,   10,   30,  60, 120};
// 1 KiB … 1 GiB by powers of 4 (the default --max_session_bytes is 256 MiB).
const std::vector<double> kCaptureBytesBuckets = {1 << 10, 1 << 12, 1 << 14, 1 << 16,
                                                  1 << 18, 1 << 20, 1 << 22, 1 << 24,
                                                  1 << 26, 1 << 28, 1 << 30};

// ---- Families ----------------------------------------------------------------------------------

prometheus::Family<Counter>& CounterFamily(prometheus::Registry& r, const char* name,
                                           const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}
prometheus::Family<Gauge>& GaugeFamily(prometheus::Registry& r, const char* name,
                                       const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}
prometheus::Family<Histogram>& HistogramFamily(prometheus::Registry& r, const char* name,
                                               const char* help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r);
}

}  // namespace

absl::string_view GoCodeName(int code) {
  return code >= 0 && static_cast<size_t>(code) < kGrpcCodes ? kGoCodeNames[code] : "Unknown";
}

absl::StatusOr<std::shared_ptr<ServiceMetrics>> ServiceMetrics::Create(
    const MetricsOptions& options) {
  if (options.max_label_values < 1) {
    return absl::InvalidArgumentError(
        "the cap on distinct metrics label values must be at least 1");
  }
  absl::StatusOr<FleetLabels::Allowlist> allowed = ParseLabelAllowlist(options.label_allowlist);
  if (!allowed.ok()) return allowed.status();
  absl::StatusOr<std::unique_ptr<FleetLabels>> fleet = FleetLabels::Create(
      options.fleet_labels, static_cast<size_t>(options.max_label_values), *allowed);
  if (!fleet.ok()) return fleet.status();
  std::shared_ptr<ServiceMetrics> metrics(new ServiceMetrics(std::move(*fleet)));
  // The sessions that carry no fleet label: their series exist from the first scrape.
  metrics->Fleet(v1::Session());
  return metrics;
}

ServiceMetrics::ServiceMetrics(std::unique_ptr<FleetLabels> fleet_labels)
    : registry_(std::make_shared<prometheus::Registry>()),
      fleet_labels_(std::move(fleet_labels)),
      // go-grpc-prometheus (server_metrics.go): names, help and labels as Go has them.
      grpc_started_(CounterFamily(*registry_, "grpc_server_started_total",
                                  "Total number of RPCs started on the server.")),
      grpc_handled_(CounterFamily(
          *registry_, "grpc_server_handled_total",
          "Total number of RPCs completed on the server, regardless of success or failure.")),
      grpc_msg_received_(
          CounterFamily(*registry_, "grpc_server_msg_received_total",
                        "Total number of RPC stream messages received on the server.")),
      grpc_msg_sent_(CounterFamily(*registry_, "grpc_server_msg_sent_total",
                                   "Total number of gRPC stream messages sent by the server.")),
      grpc_handling_seconds_(HistogramFamily(*registry_, "grpc_server_handling_seconds",
                                             "Histogram of response latency (seconds) of gRPC that "
                                             "had been application-level handled by the server.")),
      // compile_lens_*: what the analyses found, under the fleet labels (FleetCounters).
      fleet_families_{
          CounterFamily(*registry_, "compile_lens_sessions_analyzed_total",
                        "Sessions analyzed, by outcome: ok, partial (a pass failed; its section is "
                        "ERROR), failed (no report), cancelled (the caller gave up)."),
          CounterFamily(*registry_, "compile_lens_recompiles_total",
                        "Recompiles found in analyzed sessions, by the category of their guard "
                        "failure (the report's recompile clusters; a recompile whose reason fails "
                        "checks of several categories counts under each)."),
          CounterFamily(*registry_, "compile_lens_graph_breaks_total",
                        "Graph breaks found in analyzed sessions, by category."),
          CounterFamily(*registry_, "compile_lens_divergence_checked_sessions_total",
                        "Analyzed sessions that carried an eager-vs-compiled divergence check "
                        "(compile_lens.check_divergence)."),
          CounterFamily(*registry_, "compile_lens_divergent_sessions_total",
                        "Analyzed sessions whose compiled model diverged from eager, by severity: "
                        "error, low (expected low-precision rounding), info (RNG parity)."),
          CounterFamily(*registry_, "compile_lens_stale_cache_findings_total",
                        "Cache-stability findings in analyzed sessions, by verdict: stale (state "
                        "changed, no recompile, output diverged) or suspicious (changed state no "
                        "guard reads)."),
          HistogramFamily(*registry_, "compile_lens_compile_seconds",
                          "torch.compile seconds of each analyzed session, by cause (the compile "
                          "time section's ledger: first_compile, recompile, graph_break_fragment, "
                          "restart, failed, avoidable_cache_miss); one observation per session "
                          "and cause it has."),
          CounterFamily(*registry_, "compile_lens_cache_lookups_total",
                        "Compile cache lookups in analyzed sessions, by cache (fx_graph, "
                        "aot_autograd, triton: autotune) and outcome (hit, miss, bypass)."),
          CounterFamily(*registry_, "compile_lens_compile_failures_total",
                        "Failed compiles in analyzed sessions, by torch's fail_type (the common "
                        "ones; any other is \"other\")."),
          CounterFamily(*registry_, "compile_lens_export_findings_total",
                        "What torch.export (draft export, a non-strict trace) could not prove or "
                        "stopped at in analyzed sessions, by kind (data-dependent, "
                        "guard-evaluated, specialized, missing-fake-kernel, "
                        "mismatched-fake-kernel, trace-failed)."),
          CounterFamily(*registry_, "compile_lens_gated_sessions_total",
                        "Analyzed sessions whose request carried gates (cl-client check, run, "
                        "upload), by result: passed, or failed (at least one gate failed)."),
      },
      lint_findings_(CounterFamily(
          *registry_, "compile_lens_lint_findings_total",
          "Lint findings in analyzed sessions, by pattern and severity (candidate: not "
          "rated by a correctness DB).")),
      // compile_lens_*: how the service behaves.
      pass_seconds_(HistogramFamily(*registry_, "compile_lens_analysis_pass_duration_seconds",
                                    "Time one analysis pass took on one session, by pass.")),
      analysis_seconds_(HistogramFamily(*registry_, "compile_lens_analysis_duration_seconds",
                                        "Time one session's analysis took (passes and rendering; "
                                        "not the upload, not the queueing).")),
      capture_bytes_(HistogramFamily(
          *registry_, "compile_lens_capture_bytes",
          "Encoded size of each complete upload (what --max_session_bytes counts).")),
      rejected_(CounterFamily(*registry_, "compile_lens_analysis_rejected_total",
                              "Analyze calls refused before analysis, by reason: max_inflight, "
                              "queue_full (both load shedding), "
                              "too_large (--max_session_bytes), invalid (a malformed or truncated "
                              "stream), upload_timeout "
                              "(--upload_timeout: the capture did not arrive in time), idle "
                              "(--idle_timeout: nothing arrived for that long, or nothing for a "
                              "second while every slot was taken).")),
      label_folded_(CounterFamily(
          *registry_, "compile_lens_fleet_label_folded_total",
          "Analyzed sessions whose value of a fleet label was reported as \"other\", by label: "
          "a value past the first --metrics_label_values, outside --metrics_label_allow, over 64 "
          "bytes or not UTF-8.")),
      queue_depth_(GaugeFamily(*registry_, "compile_lens_analysis_queue_depth",
                               "Analysis pool tasks waiting for a thread.")),
      queue_capacity_(GaugeFamily(
          *registry_, "compile_lens_analysis_queue_capacity",
          "Analysis pool tasks that may wait before calls are refused (--analysis_queue).")),
      inflight_(GaugeFamily(*registry_, "compile_lens_sessions_inflight",
                            "Analyze calls being served (uploading or analyzing).")),
      inflight_limit_(
          GaugeFamily(*registry_, "compile_lens_sessions_inflight_limit",
                      "Analyze calls served at once before calls are refused (--max_inflight).")),
      lint_patterns_(kMaxLintPatterns) {
  CreateRpcSeries();
  for (const Pass* pass : RegisteredPasses()) {
    const std::string name(pass->Name());
    pass_series_[name] = &pass_seconds_.Add({{"pass", name}}, kAnalysisSecondsBuckets);
  }
  analysis_series_ = &analysis_seconds_.Add({}, kAnalysisSecondsBuckets);
  capture_series_ = &capture_bytes_.Add({}, kCaptureBytesBuckets);
  for (size_t i = 0; i < rejected_series_.size(); ++i) {
    rejected_series_[i] = &rejected_.Add({{"reason", std::string(kRejectionNames[i])}});
  }
  for (const std::string& key : fleet_labels_->keys())
    label_folded_series_.push_back(&label_folded_.Add({{"label", key}}));
  queue_depth_series_ = &queue_depth_.Add({});
  queue_capacity_series_ = &queue_capacity_.Add({});
  inflight_series_ = &inflight_.Add({});
  inflight_limit_series_ = &inflight_limit_.Add({});
}

ServiceMetrics::~ServiceMetrics() = default;

void ServiceMetrics::CreateRpcSeries() {
  // go-grpc-middleware's InitializeMetrics: every method × every code, so each reads 0 at first.
  for (const ServedMethod& m : ServedMethods()) {
    const Labels labels = {
        {"grpc_type", m.type}, {"grpc_service", m.service}, {"grpc_method", m.method}};
    RpcSeries& s = rpc_["/" + m.service + "/" + m.method];
    s.started = &grpc_started_.Add(labels);
    s.msg_received = &grpc_msg_received_.Add(labels);
    s.msg_sent = &grpc_msg_sent_.Add(labels);
    s.handling_seconds = &grpc_handling_seconds_.Add(labels, kRpcSecondsBuckets);
    for (size_t code = 0; code < kGrpcCodes; ++code) {
      Labels with_code = labels;
      with_code.emplace("grpc_code", std::string(kGoCodeNames[code]));
      s.handled[code] = &grpc_handled_.Add(with_code);
    }
  }
}

const RpcSeries* ServiceMetrics::Rpc(absl::string_view full_method) const {
  auto it = rpc_.find(full_method);
  return it == rpc_.end() ? nullptr : &it->second;
}

FleetCounters& ServiceMetrics::Fleet(const v1::Session& session) {
  std::vector<bool> folded;
  std::vector<std::string> values = fleet_labels_->Resolve(session.labels(), &folded);
  for (size_t i = 0; i < folded.size(); ++i) {
    if (folded[i]) label_folded_series_[i]->Increment();
  }
  absl::MutexLock lock(&mu_);
  std::unique_ptr<FleetCounters>& slot = fleet_[values];
  if (slot == nullptr) {
    Labels fleet;
    for (size_t i = 0; i < values.size(); ++i) fleet.emplace(fleet_labels_->keys()[i], values[i]);
    slot = std::make_unique<FleetCounters>(fleet_families_, fleet);
  }
  return *slot;
}

prometheus::Counter& ServiceMetrics::LintSeries(absl::string_view pattern,
                                                v1::LintFinding::Severity severity) {
  // Severities are the report's few words; patterns come from the findings, so they are capped.
  const absl::string_view rated = Word(severity);
  std::pair<std::string, std::string> key(
      lint_patterns_.Map(pattern.empty() ? kOverflowLabelValue : pattern),
      rated.empty() ? kLintCandidate : std::string(rated));
  absl::MutexLock lock(&mu_);
  prometheus::Counter*& slot = lint_[key];
  if (slot == nullptr)
    slot = &lint_findings_.Add({{"pattern", key.first}, {"severity", key.second}});
  return *slot;
}

void ServiceMetrics::RecordRejection(Rejection reason) {
  rejected_series_[static_cast<size_t>(reason)]->Increment();
}

void ServiceMetrics::RecordCaptureBytes(uint64_t bytes) {
  capture_series_->Observe(static_cast<double>(bytes));
}

void ServiceMetrics::RecordAnalysis(const v1::Session& session,
                                    const absl::StatusOr<v1::AnalyzeResponse>& result,
                                    absl::Duration elapsed) {
  analysis_series_->Observe(absl::ToDoubleSeconds(elapsed));
  FleetCounters& fleet = Fleet(session);
  if (!result.ok()) {
    fleet.CountFailure(result.status().code());
    return;
  }
  const v1::AnalysisReport& report = result->report();
  fleet.CountReport(report);
  for (const v1::PassTiming& timing : result->timings()) {
    auto it = pass_series_.find(timing.pass());
    if (it != pass_series_.end()) it->second->Observe(timing.seconds());
  }
  if (report.lint().status() == v1::OK) {
    for (const v1::LintFinding& f : report.lint().findings()) {
      LintSeries(f.pattern(), f.severity()).Increment();
    }
  }
}

void ServiceMetrics::SetLoadProbe(absl::AnyInvocable<ServiceLoad() const> probe) {
  absl::MutexLock lock(&mu_);
  load_probe_ = std::move(probe);
}

std::vector<prometheus::MetricFamily> ServiceMetrics::Collect() const {
  {
    absl::MutexLock lock(&mu_);
    if (load_probe_) {
      const ServiceLoad load = load_probe_();
      queue_depth_series_->Set(load.queue_depth);
      queue_capacity_series_->Set(load.queue_capacity);
      inflight_series_->Set(load.inflight);
      inflight_limit_series_->Set(load.inflight_limit);
    }
  }
  return registry_->Collect();
}

}  // namespace cl

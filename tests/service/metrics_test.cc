// ServiceMetrics and FleetLabels on their own: every series exists from the start, an analysis
// is counted under its session's bounded fleet labels, and the labels stay bounded whatever the
// sessions carry.
#include "service/metrics.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "analyzers/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/fleet_labels.h"
#include "tests/service/metrics_reader.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

using ::cl::testing::MetricsReader;
using ::cl::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Optional;

std::shared_ptr<ServiceMetrics> Make(MetricsOptions options = {}) {
  absl::StatusOr<std::shared_ptr<ServiceMetrics>> m = ServiceMetrics::Create(options);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : nullptr;
}

v1::Session Labeled(std::map<std::string, std::string> labels) {
  v1::Session s;
  for (const auto& [k, v] : labels) (*s.mutable_labels())[k] = v;
  return s;
}

// A report with a little of everything the fleet metrics count.
v1::AnalyzeResponse Findings() {
  v1::AnalyzeResponse r;
  v1::AnalysisReport& report = *r.mutable_report();
  v1::RecompileSection& rc = *report.mutable_recompile();
  rc.set_status(v1::OK);
  auto cluster = [&rc](v1::RecompileCategory::Value category, uint32_t count) {
    v1::RecompileCluster* c = rc.add_clusters();
    c->set_category(category);
    c->set_count(count);
  };
  cluster(v1::RecompileCategory::SIZE, 3);
  cluster(v1::RecompileCategory::SIZE, 2);  // another frame or axis, the same category
  cluster(v1::RecompileCategory::DTYPE, 1);
  cluster(static_cast<v1::RecompileCategory::Value>(99), 4);  // a category from a newer build
  v1::GraphBreakSummary* gb = rc.add_graph_breaks();
  gb->set_category(v1::GraphBreakCategory::LOGGING);
  gb->set_count(2);
  report.mutable_divergence()->set_status(v1::OK);
  report.mutable_divergence()->set_first_divergent_layer("blocks.0.norm");
  report.mutable_divergence()->set_severity(v1::DivergenceSection::ERROR);
  v1::CacheStabilitySection& cs = *report.mutable_cache_stability();
  cs.set_status(v1::OK);
  cs.add_findings()->set_verdict(v1::CacheStabilityFinding::STALE);
  cs.add_findings()->set_verdict(v1::CacheStabilityFinding::SUSPICIOUS);
  cs.add_findings()->set_verdict(v1::CacheStabilityFinding::SUSPICIOUS);
  v1::LintSection& lint = *report.mutable_lint();
  lint.set_status(v1::OK);
  lint.add_findings()->set_pattern("mutable_default_hook");
  v1::LintFinding* rated = lint.add_findings();
  rated->set_pattern("mutable_default_hook");
  rated->set_severity(v1::LintFinding::ERROR);
  v1::PassTiming* t = r.add_timings();
  t->set_pass("recompile");
  t->set_seconds(0.25);
  return r;
}

TEST(GoCodeNameTest, SpellsCodesAsGoDoes) {
  EXPECT_EQ(GoCodeName(0), "OK");
  EXPECT_EQ(GoCodeName(1), "Canceled");
  EXPECT_EQ(GoCodeName(3), "InvalidArgument");
  EXPECT_EQ(GoCodeName(4), "DeadlineExceeded");
  EXPECT_EQ(GoCodeName(8), "ResourceExhausted");
  EXPECT_EQ(GoCodeName(9), "FailedPrecondition");
  EXPECT_EQ(GoCodeName(16), "Unauthenticated");
  EXPECT_EQ(GoCodeName(17), "Unknown");
  EXPECT_EQ(GoCodeName(-1), "Unknown");
}

TEST(ServiceMetricsTest, EverySeriesKnownAtStartUpReadsZero) {
  MetricsReader m(Make()->Collect());
  const std::map<std::string, std::string> analyze = {
      {"grpc_type", "client_stream"},
      {"grpc_service", "compile_lens.v1.CompileLens"},
      {"grpc_method", "Analyze"}};
  EXPECT_THAT(m.Get("grpc_server_started_total", analyze), Optional(0.0));
  EXPECT_THAT(m.Get("grpc_server_handling_seconds", analyze), Optional(0.0));
  for (int code = 0; code < 17; ++code) {
    auto labels = analyze;
    labels["grpc_code"] = std::string(GoCodeName(code));
    EXPECT_THAT(m.Get("grpc_server_handled_total", labels), Optional(0.0)) << GoCodeName(code);
  }
  EXPECT_THAT(m.Get("grpc_server_started_total", {{"grpc_type", "unary"},
                                                  {"grpc_service", "grpc.health.v1.Health"},
                                                  {"grpc_method", "Check"}}),
              Optional(0.0));
  // 4 methods × 17 codes.
  EXPECT_EQ(m.Series("grpc_server_handled_total"), 4u * 17u);

  for (const Pass* pass : RegisteredPasses()) {
    EXPECT_THAT(
        m.Get("compile_lens_analysis_pass_duration_seconds", {{"pass", std::string(pass->Name())}}),
        Optional(0.0));
  }
  // Sessions without fleet labels: every outcome and category.
  EXPECT_THAT(m.Get("compile_lens_sessions_analyzed_total",
                    {{"cluster", ""}, {"model", ""}, {"outcome", "ok"}}),
              Optional(0.0));
  EXPECT_THAT(m.Get("compile_lens_recompiles_total",
                    {{"cluster", ""}, {"model", ""}, {"category", "global_state"}}),
              Optional(0.0));
  EXPECT_EQ(m.Series("compile_lens_recompiles_total"), 16u);
  EXPECT_EQ(m.Series("compile_lens_graph_breaks_total"), 15u);
  EXPECT_THAT(m.Get("compile_lens_analysis_rejected_total", {{"reason", "queue_full"}}),
              Optional(0.0));
  EXPECT_THAT(m.Get("compile_lens_capture_bytes"), Optional(0.0));
  EXPECT_THAT(m.Get("compile_lens_sessions_inflight"), Optional(0.0));
  // Lint patterns come from the lint pass's findings: none before the first.
  EXPECT_EQ(m.Series("compile_lens_lint_findings_total"), 0u);
}

// The category series are the report's category enums, labeled with their words: the label values
// deploy/monitoring's rules and dashboards read.
TEST(ServiceMetricsTest, CategorySeriesAreTheReportWords) {
  MetricsReader m(Make()->Collect());
  auto with = [](const char* category) {
    return std::map<std::string, std::string>{
        {"cluster", ""}, {"model", ""}, {"category", category}};
  };
  for (const char* category : {"size", "stride", "dtype", "device", "requires_grad", "value",
                               "identity", "type", "global_state", "symbolic_shape", "module_mode",
                               "aliasing", "backend_config", "container", "other", "unknown"}) {
    EXPECT_THAT(m.Get("compile_lens_recompiles_total", with(category)), Optional(0.0)) << category;
  }
  for (const char* category :
       {"data_dependent_branch", "scalar_extraction", "dynamic_output_shape", "logging",
        "unsupported_call", "user_requested", "context_manager", "exception", "nn_module",
        "generator", "fake_tensor", "bytecode", "recompile_limit", "frame_skip", "other"}) {
    EXPECT_THAT(m.Get("compile_lens_graph_breaks_total", with(category)), Optional(0.0))
        << category;
  }
}

TEST(ServiceMetricsTest, AnalysisIsCountedUnderItsFleetLabels) {
  std::shared_ptr<ServiceMetrics> metrics = Make();
  const v1::Session session = Labeled({{"cluster", "c1"}, {"model", "llama"}, {"user", "alice"}});
  metrics->RecordAnalysis(session, Findings(), absl::Milliseconds(300));
  metrics->RecordAnalysis(session, Findings(), absl::Milliseconds(300));
  MetricsReader m(metrics->Collect());

  const std::map<std::string, std::string> fleet = {{"cluster", "c1"}, {"model", "llama"}};
  auto with = [&fleet](const char* k, const char* v) {
    auto l = fleet;
    l[k] = v;
    return l;
  };
  EXPECT_THAT(m.Get("compile_lens_sessions_analyzed_total", with("outcome", "ok")), Optional(2.0));
  EXPECT_THAT(m.Get("compile_lens_sessions_analyzed_total", with("outcome", "failed")),
              Optional(0.0));
  EXPECT_THAT(m.Get("compile_lens_recompiles_total", with("category", "size")), Optional(10.0));
  EXPECT_THAT(m.Get("compile_lens_recompiles_total", with("category", "dtype")), Optional(2.0));
  EXPECT_THAT(m.Get("compile_lens_recompiles_total", with("category", "other")), Optional(8.0));
  EXPECT_THAT(m.Get("compile_lens_graph_breaks_total", with("category", "logging")), Optional(4.0));
  EXPECT_THAT(m.Get("compile_lens_divergence_checked_sessions_total", fleet), Optional(2.0));
  EXPECT_THAT(m.Get("compile_lens_divergent_sessions_total", with("severity", "error")),
              Optional(2.0));
  EXPECT_THAT(m.Get("compile_lens_divergent_sessions_total", with("severity", "info")),
              Optional(0.0));
  EXPECT_THAT(m.Get("compile_lens_stale_cache_findings_total", with("verdict", "stale")),
              Optional(2.0));
  EXPECT_THAT(m.Get("compile_lens_stale_cache_findings_total", with("verdict", "suspicious")),
              Optional(4.0));
  auto lint = [&m](const char* severity) {
    return m.Get("compile_lens_lint_findings_total",
                 {{"pattern", "mutable_default_hook"}, {"severity", severity}});
  };
  EXPECT_THAT(lint("candidate"), Optional(2.0));  // no severity: not rated by a correctness DB
  EXPECT_THAT(lint("error"), Optional(2.0));
  EXPECT_THAT(m.Get("compile_lens_analysis_pass_duration_seconds", {{"pass", "recompile"}}),
              Optional(2.0));
  EXPECT_THAT(m.Get("compile_lens_analysis_duration_seconds"), Optional(2.0));
  // Only allowlisted keys become labels: "user" is nowhere.
  EXPECT_EQ(m.Sum("compile_lens_sessions_analyzed_total", {{"user", "alice"}}), 0);
  // The unlabeled sessions' series are still there, still 0.
  EXPECT_THAT(m.Get("compile_lens_sessions_analyzed_total",
                    {{"cluster", ""}, {"model", ""}, {"outcome", "ok"}}),
              Optional(0.0));
}

TEST(ServiceMetricsTest, OutcomesOfFailedAndPartialAnalyses) {
  std::shared_ptr<ServiceMetrics> metrics = Make();
  const v1::Session none;
  metrics->RecordAnalysis(none, absl::InvalidArgumentError("unknown pass"), absl::Milliseconds(1));
  metrics->RecordAnalysis(none, absl::CancelledError("gone"), absl::Milliseconds(1));
  metrics->RecordAnalysis(none, absl::DeadlineExceededError("late"), absl::Milliseconds(1));
  v1::AnalyzeResponse partial;
  partial.mutable_report()->mutable_fusion()->set_status(v1::ERROR);
  metrics->RecordAnalysis(none, partial, absl::Milliseconds(1));
  MetricsReader m(metrics->Collect());
  auto outcome = [&m](const char* o) {
    return m.Get("compile_lens_sessions_analyzed_total",
                 {{"cluster", ""}, {"model", ""}, {"outcome", o}});
  };
  EXPECT_THAT(outcome("failed"), Optional(1.0));
  EXPECT_THAT(outcome("cancelled"), Optional(2.0));
  EXPECT_THAT(outcome("partial"), Optional(1.0));
  EXPECT_THAT(outcome("ok"), Optional(0.0));
}

TEST(ServiceMetricsTest, FleetLabelValuesAreCapped) {
  MetricsOptions options;
  options.max_label_values = 2;
  std::shared_ptr<ServiceMetrics> metrics = Make(options);
  for (const char* model : {"a", "b", "c", "d", "a"}) {
    metrics->RecordAnalysis(Labeled({{"cluster", "c1"}, {"model", model}}), v1::AnalyzeResponse(),
                            absl::ZeroDuration());
  }
  metrics->RecordAnalysis(Labeled({{"cluster", "c1"}, {"model", std::string(100, 'm')}}),
                          v1::AnalyzeResponse(), absl::ZeroDuration());
  metrics->RecordAnalysis(Labeled({{"cluster", "c1"}, {"model", "\xff\xfe"}}),
                          v1::AnalyzeResponse(), absl::ZeroDuration());
  MetricsReader m(metrics->Collect());
  auto ok = [&m](const char* model) {
    return m.Get("compile_lens_sessions_analyzed_total",
                 {{"cluster", "c1"}, {"model", model}, {"outcome", "ok"}});
  };
  EXPECT_THAT(ok("a"), Optional(2.0));
  EXPECT_THAT(ok("b"), Optional(1.0));
  EXPECT_EQ(ok("c"), std::nullopt);
  EXPECT_THAT(ok("other"), Optional(4.0));  // c, d, the over-long one, the non-UTF-8 one
  // (none, none), (c1, a), (c1, b), (c1, other): 4 tuples × 4 outcomes.
  EXPECT_EQ(m.Series("compile_lens_sessions_analyzed_total"), 16u);
}

TEST(ServiceMetricsTest, LoadGaugesAreReadAtEachScrape) {
  std::shared_ptr<ServiceMetrics> metrics = Make();
  double depth = 3;
  metrics->SetLoadProbe([&depth] { return ServiceLoad{depth, 64, 2, 32}; });
  EXPECT_THAT(MetricsReader(metrics->Collect()).Get("compile_lens_analysis_queue_depth"),
              Optional(3.0));
  depth = 5;
  MetricsReader m(metrics->Collect());
  EXPECT_THAT(m.Get("compile_lens_analysis_queue_depth"), Optional(5.0));
  EXPECT_THAT(m.Get("compile_lens_analysis_queue_capacity"), Optional(64.0));
  EXPECT_THAT(m.Get("compile_lens_sessions_inflight"), Optional(2.0));
  EXPECT_THAT(m.Get("compile_lens_sessions_inflight_limit"), Optional(32.0));
}

TEST(ServiceMetricsTest, RejectionsAndCaptureBytes) {
  std::shared_ptr<ServiceMetrics> metrics = Make();
  metrics->RecordRejection(Rejection::kTooLarge);
  metrics->RecordRejection(Rejection::kQueueFull);
  metrics->RecordRejection(Rejection::kQueueFull);
  metrics->RecordCaptureBytes(5000);
  MetricsReader m(metrics->Collect());
  EXPECT_THAT(m.Get("compile_lens_analysis_rejected_total", {{"reason", "too_large"}}),
              Optional(1.0));
  EXPECT_THAT(m.Get("compile_lens_analysis_rejected_total", {{"reason", "queue_full"}}),
              Optional(2.0));
  EXPECT_THAT(m.Get("compile_lens_analysis_rejected_total", {{"reason", "invalid"}}),
              Optional(0.0));
  EXPECT_THAT(m.Get("compile_lens_capture_bytes"), Optional(1.0));
}

TEST(FleetLabelsTest, RefusesKeysThatAreNotBoundedDimensions) {
  auto refused = [](std::vector<std::string> keys, const char* why) {
    EXPECT_THAT(FleetLabels::Create(std::move(keys), 4),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(why)));
  };
  refused({"session_id"}, "names an id");
  refused({"log_path"}, "a path");
  refused({"host"}, "a host");
  refused({"outcome"}, "reserved");
  refused({"grpc_code"}, "reserved");
  refused({"model-name"}, "not a Prometheus label name");
  refused({"__name__"}, "not a Prometheus label name");
  refused({"model", "model"}, "twice");
  // Words, not substrings: "profile" holds "file" but names no file.
  EXPECT_TRUE(FleetLabels::Create({"cluster", "model", "team", "profile"}, 4).ok());
  EXPECT_TRUE(FleetLabels::Create({}, 4).ok());
  MetricsOptions bad;
  bad.max_label_values = 0;
  EXPECT_THAT(ServiceMetrics::Create(bad),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
}

TEST(FleetLabelsTest, ResolvesInKeyOrderWithAbsentLabelsEmpty) {
  absl::StatusOr<std::unique_ptr<FleetLabels>> labels =
      FleetLabels::Create({"cluster", "model"}, 1);
  ASSERT_TRUE(labels.ok());
  v1::Session s = Labeled({{"model", "llama"}});
  EXPECT_EQ((*labels)->Resolve(s.labels()), (std::vector<std::string>{"", "llama"}));
  s = Labeled({{"model", "bert"}, {"cluster", "c9"}});
  EXPECT_EQ((*labels)->Resolve(s.labels()), (std::vector<std::string>{"c9", "other"}));
}

// An allowlisted label keeps exactly its values, whoever sends first; each session whose value
// became "other" is counted under the label it lost.
TEST(ServiceMetricsTest, AnAllowlistFixesALabelsValuesAndFoldsAreCounted) {
  MetricsOptions options;
  options.max_label_values = 1;
  options.label_allowlist = {"cluster=us-east|us-west"};
  std::shared_ptr<ServiceMetrics> metrics = Make(options);
  for (const char* cluster : {"eu-north", "us-west", "us-east", "eu-north", "other"}) {
    metrics->RecordAnalysis(Labeled({{"cluster", cluster}, {"model", "gpt"}}), Findings(),
                            absl::ZeroDuration());
  }
  metrics->RecordAnalysis(Labeled({{"cluster", "us-east"}, {"model", "llama"}}), Findings(),
                          absl::ZeroDuration());  // model's one first-come value is gpt
  MetricsReader m(metrics->Collect());
  auto ok = [&m](const char* cluster, const char* model) {
    return m.Get("compile_lens_sessions_analyzed_total",
                 {{"cluster", cluster}, {"model", model}, {"outcome", "ok"}});
  };
  EXPECT_THAT(ok("us-west", "gpt"), Optional(1.0));  // not taken by the first sender, eu-north
  EXPECT_THAT(ok("us-east", "gpt"), Optional(1.0));
  EXPECT_THAT(ok("other", "gpt"), Optional(3.0));  // eu-north twice, and "other" as sent
  EXPECT_THAT(ok("us-east", "other"), Optional(1.0));
  EXPECT_THAT(m.Get("compile_lens_fleet_label_folded_total", {{"label", "cluster"}}),
              Optional(2.0));  // a session that sent "other" lost nothing
  EXPECT_THAT(m.Get("compile_lens_fleet_label_folded_total", {{"label", "model"}}), Optional(1.0));
}

TEST(FleetLabelsTest, RefusesAnAllowlistThatCouldNeverMatch) {
  auto refused = [](std::vector<std::string> entries, const char* why) {
    MetricsOptions options;
    options.label_allowlist = std::move(entries);
    EXPECT_THAT(ServiceMetrics::Create(options),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(why)));
  };
  refused({"cluster"}, "\"cluster\": expected KEY=VALUE|VALUE|...");
  refused({"cluster="}, "expected KEY=VALUE");
  refused({"=a"}, "expected KEY=VALUE");
  refused({"cluster=a||b"}, "an empty value");
  refused({"cluster=a|other"}, "\"other\" is what other values become");
  refused({"cluster=a|a"}, "\"a\" is listed twice");
  refused({"cluster=a", "cluster=b"}, "\"cluster\" is given twice");
  refused({absl::StrCat("cluster=", std::string(65, 'x'))}, "over 64 bytes");
  refused({"team=infra"}, "\"team\", which is not one of the metrics labels (cluster,model)");
  EXPECT_THAT(FleetLabels::Create({"label"}, 4),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reserved")));
}

}  // namespace
}  // namespace cl

// Every metric cl-server exports, declared in one place (the tables at the top of metrics.cc).
//
// Two groups:
// - the go-grpc-prometheus RPC metrics (grpc_server_started_total, grpc_server_handled_total,
//   grpc_server_handling_seconds, grpc_server_msg_{received,sent}_total) with the label names and
//   values Go's middleware uses, so existing gRPC dashboards work unchanged. The gRPC server
//   interceptor (service/server/rpc_metrics_interceptor.h) feeds them.
// - compile_lens_*: what the analyses found across the fleet (recompiles and graph breaks by
//   category, divergent sessions, stale-cache findings, lint findings), how the service behaves
//   (outcomes, pass and analysis durations, capture sizes, in-flight sessions, queue, rejections).
//   The reactor feeds them after each call; passes never touch metrics. What a report counts for
//   under its session's fleet labels is service/fleet_counters.h.
//
// Every series is created once and then only incremented through a kept handle: at start-up for
// every label combination known then (RPC methods × codes, passes, categories, outcomes of
// sessions without fleet labels), so they read 0 from the first scrape; and, through bounded
// caches, the first time a new fleet-label tuple (FleetLabels) or lint pattern is seen. It is a
// prometheus::Collectable: the Exposer scrapes it, and the load gauges are read at each scrape.
// Thread-safe; owned by the AnalysisServer, outlives its gRPC server and its Exposer.
#ifndef SERVICE_METRICS_H_
#define SERVICE_METRICS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/service.pb.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "service/fleet_counters.h"
#include "service/fleet_labels.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// gRPC status codes 0..16, indexed by grpc::StatusCode.
inline constexpr size_t kGrpcCodes = 17;

// Go's spelling of a gRPC status code ("OK", "Canceled", "InvalidArgument", ...), as
// grpc_server_handled_total{grpc_code} carries it; "Unknown" past the table.
absl::string_view GoCodeName(int code);

// The go-grpc-prometheus series of one RPC method.
struct RpcSeries {
  prometheus::Counter* started = nullptr;
  std::array<prometheus::Counter*, kGrpcCodes> handled{};  // by code
  prometheus::Counter* msg_received = nullptr;
  prometheus::Counter* msg_sent = nullptr;
  prometheus::Histogram* handling_seconds = nullptr;
};

// Why an Analyze call was refused before its session was analyzed.
enum class Rejection { kMaxInflight, kQueueFull, kTooLarge, kInvalid, kUploadTimeout, kIdle };

// The service's load, read at each scrape.
struct ServiceLoad {
  double queue_depth = 0;     // analysis pool tasks waiting for a thread
  double queue_capacity = 0;  // --analysis_queue
  double inflight = 0;        // Analyze calls admitted (uploading or analyzing)
  double inflight_limit = 0;  // --max_inflight
};

struct MetricsOptions {
  std::vector<std::string> fleet_labels = {"cluster", "model"};  // session.labels keys
  int max_label_values = 16;  // distinct values kept per fleet label; later ones are "other"
  // The only values some fleet labels keep, as --metrics_label_allow gives them: "KEY=V1|V2|...".
  std::vector<std::string> label_allowlist;
};

class ServiceMetrics final : public prometheus::Collectable {
 public:
  // INVALID_ARGUMENT for a fleet label or allowlist FleetLabels refuses, or a cap below 1.
  static absl::StatusOr<std::shared_ptr<ServiceMetrics>> Create(const MetricsOptions& options);
  ~ServiceMetrics() override;

  // The series of a method this server serves ("/compile_lens.v1.CompileLens/Analyze"); null for
  // any other name, which is never made into a label.
  const RpcSeries* Rpc(absl::string_view full_method) const;

  void RecordRejection(Rejection reason);
  // The encoded size of one complete upload (what --max_session_bytes counts).
  void RecordCaptureBytes(uint64_t bytes);
  // One analysis that ran: its outcome and findings under the session's fleet labels, its
  // per-pass timings, and `elapsed` (the analysis alone: no upload, no queueing).
  void RecordAnalysis(const v1::Session& session, const absl::StatusOr<v1::AnalyzeResponse>& result,
                      absl::Duration elapsed);

  // Where the load gauges come from; unset, they read 0.
  void SetLoadProbe(absl::AnyInvocable<ServiceLoad() const> probe) ABSL_LOCKS_EXCLUDED(mu_);

  // prometheus::Collectable: the load gauges refreshed, then every family.
  std::vector<prometheus::MetricFamily> Collect() const override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  ServiceMetrics(std::unique_ptr<FleetLabels> fleet_labels);

  void CreateRpcSeries();
  FleetCounters& Fleet(const v1::Session& session) ABSL_LOCKS_EXCLUDED(mu_);
  prometheus::Counter& LintSeries(absl::string_view pattern, v1::LintFinding::Severity severity)
      ABSL_LOCKS_EXCLUDED(mu_);

  const std::shared_ptr<prometheus::Registry> registry_;
  const std::unique_ptr<FleetLabels> fleet_labels_;

  // The families, in the order metrics.cc declares them.
  prometheus::Family<prometheus::Counter>& grpc_started_;
  prometheus::Family<prometheus::Counter>& grpc_handled_;
  prometheus::Family<prometheus::Counter>& grpc_msg_received_;
  prometheus::Family<prometheus::Counter>& grpc_msg_sent_;
  prometheus::Family<prometheus::Histogram>& grpc_handling_seconds_;
  const FleetFamilies fleet_families_;
  prometheus::Family<prometheus::Counter>& lint_findings_;
  prometheus::Family<prometheus::Histogram>& pass_seconds_;
  prometheus::Family<prometheus::Histogram>& analysis_seconds_;
  prometheus::Family<prometheus::Histogram>& capture_bytes_;
  prometheus::Family<prometheus::Counter>& rejected_;
  prometheus::Family<prometheus::Counter>& label_folded_;
  prometheus::Family<prometheus::Gauge>& queue_depth_;
  prometheus::Family<prometheus::Gauge>& queue_capacity_;
  prometheus::Family<prometheus::Gauge>& inflight_;
  prometheus::Family<prometheus::Gauge>& inflight_limit_;

  // Handles made at start-up; read-only afterwards.
  absl::flat_hash_map<std::string, RpcSeries> rpc_;                       // by "/service/method"
  absl::flat_hash_map<std::string, prometheus::Histogram*> pass_series_;  // by pass name
  prometheus::Histogram* analysis_series_ = nullptr;
  prometheus::Histogram* capture_series_ = nullptr;
  std::array<prometheus::Counter*, 6> rejected_series_{};  // by Rejection
  std::vector<prometheus::Counter*> label_folded_series_;  // by fleet label, in key order
  prometheus::Gauge* queue_depth_series_ = nullptr;
  prometheus::Gauge* queue_capacity_series_ = nullptr;
  prometheus::Gauge* inflight_series_ = nullptr;
  prometheus::Gauge* inflight_limit_series_ = nullptr;

  // Made on first sight, bounded by FleetLabels and by the lint caps.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::vector<std::string>, std::unique_ptr<FleetCounters>> fleet_
      ABSL_GUARDED_BY(mu_);
  BoundedLabelValues lint_patterns_;
  absl::flat_hash_map<std::pair<std::string, std::string>, prometheus::Counter*> lint_
      ABSL_GUARDED_BY(mu_);
  absl::AnyInvocable<ServiceLoad() const> load_probe_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cl

#endif  // SERVICE_METRICS_H_

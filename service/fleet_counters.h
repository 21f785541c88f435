// What the analyses found, counted under one fleet-label tuple: the report → fleet counters step.
//
// One FleetCounters holds every series of one tuple of fleet labels (FleetLabels: cluster, model,
// ...) in the compile_lens_* families that ServiceMetrics declares (service/metrics.cc):
// sessions by outcome, recompiles and graph breaks by category, divergence checks and divergent
// sessions by severity, cache-stability findings by verdict, compile seconds by cause, cache
// lookups by cache and outcome, failed compiles by type, sessions whose gates passed or failed.
// They are all made when the tuple is first seen, so each reads 0 from then on. The category series
// are one per value of the report's category enums (report.proto), labeled with the value's word: a
// category added to the proto gets its series with no change here. ServiceMetrics owns one per
// tuple it has seen; thread-safe (counters are atomic, the handles fixed once made).
#ifndef SERVICE_FLEET_COUNTERS_H_
#define SERVICE_FLEET_COUNTERS_H_

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "compile_lens/v1/report.pb.h"
#include "google/protobuf/descriptor.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/labels.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// The families the fleet counters live in, declared and owned by ServiceMetrics.
struct FleetFamilies {
  prometheus::Family<prometheus::Counter>& sessions_analyzed;
  prometheus::Family<prometheus::Counter>& recompiles;
  prometheus::Family<prometheus::Counter>& graph_breaks;
  prometheus::Family<prometheus::Counter>& divergence_checked;
  prometheus::Family<prometheus::Counter>& divergent_sessions;
  prometheus::Family<prometheus::Counter>& stale_cache_findings;
  prometheus::Family<prometheus::Histogram>& compile_seconds;
  prometheus::Family<prometheus::Counter>& cache_lookups;
  prometheus::Family<prometheus::Counter>& compile_failures;
  prometheus::Family<prometheus::Counter>& export_findings;
  prometheus::Family<prometheus::Counter>& gated_sessions;
};

// compile_lens_compile_seconds{cause}: the compile-time ledger's causes (report.proto
// CompileCost.cause), in this order; a cause this build does not know counts as the last.
inline constexpr absl::string_view kCompileCauses[] = {
    "first_compile", "recompile", "graph_break_fragment",
    "restart",       "failed",    "avoidable_cache_miss"};
// compile_lens_cache_lookups_total{cache, outcome}.
inline constexpr absl::string_view kCaches[] = {"fx_graph", "aot_autograd", "triton"};
inline constexpr absl::string_view kCacheOutcomes[] = {"hit", "miss", "bypass"};
// compile_lens_compile_failures_total{fail_type}: the exception types torch fails a compile with
// most; any other is "other", so the label stays bounded.
inline constexpr absl::string_view kFailTypes[] = {"Unsupported",
                                                   "BackendCompilerFailed",
                                                   "RecompileLimitExceeded",
                                                   "InternalTorchDynamoError",
                                                   "TorchRuntimeError",
                                                   "UserError",
                                                   "ConstraintViolationError",
                                                   "AssertionError",
                                                   "other"};
// The buckets of compile_lens_compile_seconds: one session's seconds for one cause.
inline constexpr double kCompileSecondsBuckets[] = {1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600};

// One series per value of a category enum, labeled {<label>="<word>"}, but for the values a
// report never counts under; those, and numbers this build does not know (a newer analyzer's),
// count as the enum's `other` value, or not at all without one.
class CategoryCounters {
 public:
  CategoryCounters(prometheus::Family<prometheus::Counter>& family, const prometheus::Labels& fleet,
                   const google::protobuf::EnumDescriptor& categories, std::vector<int> uncounted,
                   std::optional<int> other, absl::string_view label = "category");

  void Add(int category, double n);

 private:
  std::vector<prometheus::Counter*> by_number_;  // null where uncounted
  prometheus::Counter* other_ = nullptr;         // null: an unknown category is not counted
};

class FleetCounters {
 public:
  FleetCounters(const FleetFamilies& families, const prometheus::Labels& fleet);

  // An analysis that gave no report (`code` is not OK): cancelled when its caller gave up
  // (CANCELLED, DEADLINE_EXCEEDED), failed otherwise.
  void CountFailure(absl::StatusCode code);

  // An analysis that gave `report`: ok, or partial when a section is ERROR; and what its OK
  // sections found.
  void CountReport(const v1::AnalysisReport& report);

 private:
  // compile_lens_sessions_analyzed_total{outcome}.
  enum Outcome { kOk, kPartial, kFailed, kCancelled, kOutcomes };
  // compile_lens_divergent_sessions_total{severity}: INFO is RNG parity, LOW expected rounding.
  enum DivergenceSeverity { kDivError, kDivLow, kDivInfo, kDivSeverities };
  // compile_lens_stale_cache_findings_total{verdict}.
  enum Verdict { kStale, kSuspicious, kVerdicts };

  std::array<prometheus::Counter*, kOutcomes> sessions_{};
  CategoryCounters recompiles_;
  CategoryCounters graph_breaks_;
  prometheus::Counter* divergence_checked_ = nullptr;
  std::array<prometheus::Counter*, kDivSeverities> divergent_{};
  std::array<prometheus::Counter*, kVerdicts> stale_{};
  std::array<prometheus::Histogram*, std::size(kCompileCauses)> compile_seconds_{};
  std::array<std::array<prometheus::Counter*, std::size(kCacheOutcomes)>, std::size(kCaches)>
      cache_lookups_{};
  std::array<prometheus::Counter*, std::size(kFailTypes)> compile_failures_{};
  // compile_lens_export_findings_total{kind}: one series per ExportFinding.Kind but the
  // unspecified; a kind this build does not know is not counted.
  CategoryCounters export_findings_;
  // compile_lens_gated_sessions_total{result}: passed, failed (sessions whose request had gates).
  std::array<prometheus::Counter*, 2> gated_{};
};

}  // namespace cl

#endif  // SERVICE_FLEET_COUNTERS_H_

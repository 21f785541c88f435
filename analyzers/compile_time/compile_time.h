// The Compile time section: where a session's compile seconds went, by cause (first compiles,
// recompiles by the recompile pass's clusters, graph-break fragments, restarts, failures, cache
// misses the session itself shows were avoidable), by compile and phase, what each cache did
// (hits, misses, bypasses with their reasons, seconds saved), and, with a base capture, which
// parts of a missed graph's cache key changed.
//
// Times are torch's own: compilation_metrics (`entire_frame_compile_time_s` or
// `dynamo_cumulative_compile_time_us` and the phases under it), else the chromium trace events a
// compile's `phases` hold. Where both time a phase and disagree, a diagnostic says so; neither is
// silently preferred past the gap.
#ifndef ANALYZERS_COMPILE_TIME_COMPILE_TIME_H_
#define ANALYZERS_COMPILE_TIME_COMPILE_TIME_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "analyzers/pass.h"

namespace cl {

// One block's code repeated through a lowered graph: a deep model compiled whole, whose every
// layer Inductor lowers again.
struct RepeatedBlock {
  int times = 0;
  std::string file;
  uint32_t first_line = 0, last_line = 0;
  int nodes = 0;  // the graph's call nodes in the repeated lines
};

// The block `graph`'s calls repeat, if they are one block's code repeated (twice or more).
std::optional<RepeatedBlock> FindRepeatedBlock(const v1::Graph& graph);

class CompileTimePass : public Pass {
 public:
  absl::string_view Name() const override { return "compile_time"; }
  absl::string_view Section() const override { return "compile_time"; }
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override;
};

// One phase of a compile, in seconds, as this pass reads it.
struct PhaseSeconds {
  std::string name;
  double seconds = 0;
};

// A compile's phases: compilation_metrics' where it has them, then the chromium events' phases
// that no metric times, in a fixed order (whole frame first).
std::vector<PhaseSeconds> CompilePhases(const v1::Compile& compile);

// A compile's whole-frame compile time: metrics, else its chromium entire_frame_compile phase;
// 0 when neither timed it (an attempt that restarted: its time is in the next attempt's).
double CompileSeconds(const v1::Compile& compile);

// A bypass reason's class: unsupported_op, autocast, custom_pass_no_uuid, freezing,
// non_cacheable_config, unpicklable, dynamic_shapes, user_triton_kernel, other.
absl::string_view ClassifyBypassReason(absl::string_view reason);

}  // namespace cl

#endif  // ANALYZERS_COMPILE_TIME_COMPILE_TIME_H_

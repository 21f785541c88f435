// The recompile pass: why torch.compile recompiled, and what to change (docs/design.md §5.2).
//
// It reads every compile's recompile reasons (analyzers/recompile/reason.h), clusters the
// recompiles by frame × category × axis with the value transitions each saw, and writes one
// concrete remedy per cluster with its evidence (docs/torch-semantics.md §1.6, §1.7). The
// same section carries the cache-limit hits (torch's own messages, and frames whose cache-entry
// count reached the configured limit) and the deduplicated graph breaks
// (analyzers/recompile/graph_breaks.h).
//
// Which bullet explains a recompile: torch lists one bullet per failing cache entry, newest
// first. The bullet against the frame's first cache entry is the one whose expected→actual pair
// users recognise ("16→64": the shape they compiled for first), so it is the recompile's primary
// reason; when no bullet names that entry, the newest bullet is.
#ifndef ANALYZERS_RECOMPILE_RECOMPILE_H_
#define ANALYZERS_RECOMPILE_RECOMPILE_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analyzers/pass.h"

namespace cl {

class RecompilePass : public Pass {
 public:
  absl::string_view Name() const override { return "recompile"; }
  absl::string_view Section() const override { return "recompile"; }
  // SKIPPED when the head capture has no compiles; CancelledError when `in` is cancelled.
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override;
};

}  // namespace cl

#endif  // ANALYZERS_RECOMPILE_RECOMPILE_H_

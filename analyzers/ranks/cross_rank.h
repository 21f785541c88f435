// The cross-rank pass: do the ranks of a multi-rank session agree on what torch.compile did?
//
// Ranks of one data-parallel job run the same program, so they should compile the same frames,
// hit and miss the caches in the same order and recompile the same number of times. A rank that
// did not (it recompiled in a storm, missed a cache the others hit, failed a compile) is the usual
// cause of a collective that hangs: the others wait in an all-reduce the odd rank has not reached.
// These are the checks of tlparse's multi-rank page (`tlparse --all-ranks-html`).
//
// The pass reads the rank digests the importer attached to the capture (SessionCapture.ranks,
// one per rank log, this rank's included). For each compared value (compile_ids as an ordered
// list, cache_sequence, recompiles, failed, graph_breaks) it groups the ranks by value; the
// largest group is the norm (a tie goes to the group holding the lowest rank), and every other
// group becomes one RankDivergence whose detail says concretely how it differs.
#ifndef ANALYZERS_RANKS_CROSS_RANK_H_
#define ANALYZERS_RANKS_CROSS_RANK_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analyzers/pass.h"

namespace cl {

class CrossRankPass : public Pass {
 public:
  absl::string_view Name() const override { return "ranks"; }
  absl::string_view Section() const override { return "ranks"; }
  // SKIPPED ("single-rank session") with fewer than two digests; CancelledError when `in` is
  // cancelled.
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override;
};

}  // namespace cl

#endif  // ANALYZERS_RANKS_CROSS_RANK_H_

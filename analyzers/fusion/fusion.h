// The fusion pass: algebraic fusions Inductor leaves unfused, found on the post-grad graph, each
// with an analytical memory-bound byte model and an upper-bound speedup for ranking
// (docs/design.md §5.6, docs/torch-semantics.md §6).
//
// It reads the post-grad graphs Inductor lowered for each frame's first compile (forward and
// backward, in training: LoweredGraphsPerFrame in analyzers/common/post_grad_graph.h), matches the
// patterns of analyzers/fusion/patterns.h, groups repeated instances (the same pattern, source
// span, shape and bytes: the blocks of a model) into one opportunity with a count, and ranks them
// by the HBM bytes they would save in all. The speedup bound is before / after bytes: the kernels
// are taken as purely memory-bound, so the real gain is smaller. Suggest-only: nothing is rewritten
// or run.
#ifndef ANALYZERS_FUSION_FUSION_H_
#define ANALYZERS_FUSION_FUSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analyzers/common/post_grad_graph.h"
#include "analyzers/fusion/bytes.h"
#include "analyzers/fusion/patterns.h"
#include "analyzers/pass.h"

namespace cl {

// What the pass reads of one post-grad graph's nodes: its matches, each with where its anchors
// are (the file as the nodes name it; the report's location is made from it, the compile's stack
// and the session's project root when the pass runs).
struct FusionMatchFacts {
  FusionPattern pattern;
  std::string label;
  uint64_t m = 0, n = 0, k0 = 0, k1 = 0;
  HbmBytes bytes;
  std::string size_hints;  // the symbols the shape was evaluated at ("s0 = 4"), if any
  bool residual_addmm = false;
  // The span of the anchors' lines in the first anchor's file; empty when none names one.
  std::string file;
  uint32_t first_line = 0, last_line = 0;
};

struct FusionGraphFacts {
  bool unknown_size = false;  // a shape holds a size with no value, even at a hint
  std::vector<FusionMatchFacts> matches;
};

FusionGraphFacts ComputeFusionFacts(const PostGradGraph& graph);

class FusionPass : public Pass {
 public:
  absl::string_view Name() const override { return "fusion"; }
  absl::string_view Section() const override { return "fusion"; }
  // SKIPPED when the head capture has no post-grad graph; CancelledError when `in` is cancelled.
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override;
};

}  // namespace cl

#endif  // ANALYZERS_FUSION_FUSION_H_

// The IR diff pass: what changed, base → head, in what torch.compile actually runs
// (docs/design.md §5.1).
//
// "My model (or my torch) changed: what changed in the compiled graph?" A textual diff of FX dumps
// drowns in renamed temporaries; this pass pairs nodes by meaning. Per frame compiled on both
// sides it takes one graph stage and one compile (analyzers/ir_diff/plan.h), pairs the nodes of the
// two graphs by anchors, propagation and similarity (analyzers/ir_diff/matcher.h), and compares
// each pair (analyzers/ir_diff/node_diff.h). The section lists the added, removed and modified
// nodes (with the head location, the base location for a removed node, and the pairing's
// confidence), the match coverage (paired / max(|base|, |head|) over the diffed graphs), the anchor
// uniqueness (analyzers/ir_diff/anchors.h), which stage and compiles were diffed, and the frames
// only one side compiled.
#ifndef ANALYZERS_IR_DIFF_IR_DIFF_H_
#define ANALYZERS_IR_DIFF_IR_DIFF_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analyzers/pass.h"

namespace cl {

class IrDiffPass : public Pass {
 public:
  absl::string_view Name() const override { return "ir_diff"; }
  absl::string_view Section() const override { return "ir_diff"; }
  // SKIPPED without a base capture ("no base capture"), or without graphs to compare ("no graphs
  // in the captures", "no graphs in the base capture", ...); CancelledError when `in` is
  // cancelled.
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override;
};

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_IR_DIFF_H_

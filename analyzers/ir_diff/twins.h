// Twins: nodes alike in everything the graph matcher sees (anchor, literals, tensor meta), such
// as two `relu(x)` on one line. Only where their users take them tells them apart, and a round
// that paired them before any user was paired may have paired them crosswise, which the diff
// would report as reordered operands. UntangleTwins swaps such pairs back: wherever a paired user
// takes, in one operand slot, the base twin of one pair and the head twin of another, the two
// pairs exchange partners.
#ifndef ANALYZERS_IR_DIFF_TWINS_H_
#define ANALYZERS_IR_DIFF_TWINS_H_

#include "absl/functional/function_ref.h"
#include "analyzers/ir_diff/anchors.h"
#include "analyzers/ir_diff/correspondence.h"
#include "analyzers/ir_diff/index.h"

namespace cl {

// `swapped(x, y)` is called for each pair of base twins whose partners were exchanged.
void UntangleTwins(const GraphIndex& base, const GraphAnchors& base_anchors, const GraphIndex& head,
                   const GraphAnchors& head_anchors, NodeCorrespondence* pairs,
                   absl::FunctionRef<void(int, int)> swapped);

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_TWINS_H_

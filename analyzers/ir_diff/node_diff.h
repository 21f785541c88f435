// What changed between a base node and the head node the matcher paired it with.
//
// The comparison goes through the pairing, never through names: an operand is unchanged when it
// is the partner of the base operand, whatever either is called. It reports, in this order:
//
//   op_changed          the target differs ("aten.gelu.default → aten.silu.default")
//   operand_removed     a base operand has no partner in the head (`addmm(bias, x, w)` →
//                       `mm(x, w)` drops `bias`); operand_added: the reverse
//   operands_reordered  the same operands and literals, in another order (`sub(a, b)` →
//                       `sub(b, a)`)
//   operand_changed     an operand is another node than the base operand's partner
//   literal_changed     a literal argument differs ("-1 → 1")
//   kwargs_changed      a keyword argument was added, removed or changed
//   dtype_changed, shape_changed, and stride_changed (only when the shape did not change: a new
//                       shape brings new strides with it)
//
// An operand that is an added node (or a base operand that is a removed one) is explained by that
// addition or removal, which the diff lists on its own: inserting `h = h * 0.5` before `out(h)`
// reports one added node, not also a changed `out`. Only a node whose operands are otherwise the
// same (the same count, partnered) can have them "reordered".
#ifndef ANALYZERS_IR_DIFF_NODE_DIFF_H_
#define ANALYZERS_IR_DIFF_NODE_DIFF_H_

#include <string>
#include <vector>

#include "analyzers/ir_diff/correspondence.h"
#include "analyzers/ir_diff/index.h"

namespace cl {

namespace node_change {
inline constexpr char kOpChanged[] = "op_changed";
inline constexpr char kOperandRemoved[] = "operand_removed";
inline constexpr char kOperandAdded[] = "operand_added";
inline constexpr char kOperandsReordered[] = "operands_reordered";
inline constexpr char kOperandChanged[] = "operand_changed";
inline constexpr char kLiteralChanged[] = "literal_changed";
inline constexpr char kKwargsChanged[] = "kwargs_changed";
inline constexpr char kDtypeChanged[] = "dtype_changed";
inline constexpr char kShapeChanged[] = "shape_changed";
inline constexpr char kStrideChanged[] = "stride_changed";
}  // namespace node_change

struct NodeDelta {
  std::vector<std::string> kinds;  // node_change::k*, in the order above
  std::vector<std::string>
      details;  // one per kind: "operands reordered", "shape changed ([8] → [9])"
  bool changed() const { return !kinds.empty(); }
};

NodeDelta CompareNodes(const GraphIndex& base, int b, const GraphIndex& head, int h,
                       const NodeCorrespondence& pairs);

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_NODE_DIFF_H_

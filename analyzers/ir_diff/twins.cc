#include "analyzers/ir_diff/twins.h"

#include "absl/types/span.h"

namespace cl {
namespace {

bool Twins(const GraphIndex& g, const GraphAnchors& anchors, int x, int y) {
  const NodeFacts& fx = g.facts(x);
  const NodeFacts& fy = g.facts(y);
  return anchors.strict[x] == anchors.strict[y] && fx.literals == fy.literals && fx.meta == fy.meta;
}

}  // namespace

void UntangleTwins(const GraphIndex& base, const GraphAnchors& base_anchors, const GraphIndex& head,
                   const GraphAnchors& head_anchors, NodeCorrespondence* pairs,
                   absl::FunctionRef<void(int, int)> swapped) {
  for (int h = 0; h < head.size(); ++h) {
    const int b = pairs->head_to_base[h];
    if (b < 0) continue;
    const absl::Span<const int32_t> ib = base.inputs(b);
    const absl::Span<const int32_t> ih = head.inputs(h);
    if (ib.size() != ih.size()) continue;
    for (size_t k = 0; k < ib.size(); ++k) {
      const int32_t x = ib[k];   // the base operand; x2 is its partner
      const int32_t y2 = ih[k];  // the head operand; y is its partner
      const int32_t x2 = pairs->base_to_head[x];
      const int32_t y = pairs->head_to_base[y2];
      if (x2 < 0 || y < 0 || x2 == y2 || x == y) continue;
      if (!Twins(base, base_anchors, x, y) || !Twins(head, head_anchors, x2, y2)) continue;
      pairs->Pair(x, y2);
      pairs->Pair(y, x2);
      pairs->matched -= 2;  // two pairs exchanged partners: no new pair
      swapped(x, y);
    }
  }
}

}  // namespace cl

#include "analyzers/ir_diff/anchors.h"

#include "absl/container/flat_hash_map.h"
#include "analyzers/ir_diff/fingerprint.h"

namespace cl {
namespace {

// Adds the operands' anchors to `local` as a multiset: a sum of scrambled values does not depend
// on the order of the operands, and a repeated operand counts twice.
uint64_t WithOperands(uint64_t local, absl::Span<const int32_t> inputs,
                      const std::vector<uint64_t>& previous) {
  uint64_t sum = 0;
  for (const int32_t in : inputs) sum += MixBits(previous[in]);
  return Combine(local, sum);
}

std::vector<uint64_t> Deepen(const GraphIndex& graph, std::vector<uint64_t> local, int depth) {
  // Level d holds each node's anchor over d operand steps; level 0 is the node alone.
  std::vector<uint64_t> previous = local;
  std::vector<uint64_t> next(local.size());
  for (int d = 0; d < depth; ++d) {
    for (int i = 0; i < graph.size(); ++i) {
      next[i] = WithOperands(local[i], graph.inputs(i), previous);
    }
    previous.swap(next);
  }
  return previous;
}

}  // namespace

GraphAnchors ComputeAnchors(const GraphIndex& graph, int depth) {
  const int n = graph.size();
  std::vector<uint64_t> strict(n), loose(n);
  for (int i = 0; i < n; ++i) {
    const NodeFacts& f = graph.facts(i);
    const uint64_t where = Combine(f.site, f.module);
    loose[i] = Combine(f.target, where);
    strict[i] = Combine(loose[i], f.line);
  }
  return GraphAnchors{Deepen(graph, std::move(strict), depth),
                      Deepen(graph, std::move(loose), depth)};
}

AnchorUniqueness CountAnchorUniqueness(absl::Span<const uint64_t> base,
                                       absl::Span<const uint64_t> head) {
  struct Count {
    int32_t base = 0;
    int32_t head = 0;
  };
  absl::flat_hash_map<uint64_t, Count> counts;
  counts.reserve(base.size() + head.size());
  for (const uint64_t a : base) ++counts[a].base;
  for (const uint64_t a : head) ++counts[a].head;
  AnchorUniqueness out;
  out.distinct = static_cast<int64_t>(counts.size());
  for (const auto& [anchor, c] : counts) out.unique_on_both_sides += c.base == 1 && c.head == 1;
  return out;
}

}  // namespace cl

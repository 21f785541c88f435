// Anchors: what names a node of a compiled graph independently of its FX name.
//
// FX names are temporaries (mm_3 in one trace is mm_4 in the next) and node order shifts when
// independent nodes are reordered, so neither can pair the nodes of two versions of a graph. An
// anchor is a fingerprint of what a node means:
//
//   - its op and target ("call_function aten.sub.Tensor");
//   - where it came from: source file (relative to the project root), function and line;
//   - its module path;
//   - its structure: the anchors of its operands, to a bounded depth (kAnchorDepth).
//
// A placeholder's anchor is its target (FX writes the argument's name there: "arg3_1",
// "primals_3", "L_x_"), which stays put across versions of a model. Operands enter as a multiset,
// so `sub(a, b)` and `sub(b, a)` share an anchor: the matcher pairs them, and the comparison
// (graph_node_diff.h) then says "operands reordered". Literals and tensor meta stay out of the
// anchor for the same reason: they are what the comparison reports, not what pairs nodes.
//
// The depth bound keeps a change local: it moves the anchors of the nodes within kAnchorDepth
// operand steps downstream of it and no others. Computing anchors is O(depth × edges).
#ifndef ANALYZERS_IR_DIFF_ANCHORS_H_
#define ANALYZERS_IR_DIFF_ANCHORS_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "analyzers/ir_diff/index.h"

namespace cl {

// Deep enough that the repeated blocks of a model (the same source lines, layer after layer)
// get apart through their own weights: a weight enters every block a few steps from each node.
inline constexpr int kAnchorDepth = 8;

struct GraphAnchors {
  std::vector<uint64_t> strict;  // with source lines
  std::vector<uint64_t> loose;   // without source lines: survives edits that shift lines
};

GraphAnchors ComputeAnchors(const GraphIndex& graph, int depth = kAnchorDepth);

// Anchor uniqueness: of the distinct anchors of both graphs, how many name exactly one node on
// each side. An anchor found on one side only (a changed node) is not unique on both.
struct AnchorUniqueness {
  int64_t unique_on_both_sides = 0;
  int64_t distinct = 0;
};
AnchorUniqueness CountAnchorUniqueness(absl::Span<const uint64_t> base,
                                       absl::Span<const uint64_t> head);

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_ANCHORS_H_

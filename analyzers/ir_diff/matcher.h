// The graph matcher: which node of a base graph is which node of a head graph.
//
// The two graphs are two versions of one compiled frame (an older commit of the model, another
// torch version). FX names and node order carry no meaning across versions, so the matcher pairs
// nodes by what they are (their anchors, graph_anchors.h) and by whom they are connected to, in
// rounds, each one pairing only nodes the earlier rounds left:
//
//   1. Anchors: an anchor that names exactly one node on each side pairs the two (confidence
//      factor 1.0).
//   2. Propagation, from every pair: operands in the same slot pair up, then the remaining
//      unpaired operands of the two nodes are candidates for each other, and so are their unpaired
//      users; within those, a target that occurs once on each side pairs its two nodes. Always from
//      the same place: the same source site and line, or lines as far apart as the pair they were
//      reached from (an edit above moved both). One node left on each side, of different targets
//      but from the same place, pairs last (an op changed: tanh → sigmoid). (0.9)
//   3. Line-free anchors among what is left, for code an edit moved (0.95); then propagation again.
//   4. Similarity, for the rest: nodes of the same target, or from the same source line, are
//      scored (graph_similarity.h) and paired best first above a threshold (0.8). New pairs
//      propagate (2.), and 4. repeats while it pairs anything, a few times at most.
//
// Last, twins (nodes alike in everything: anchor, literals, meta) that were paired crosswise swap
// partners to follow their users' operand order, so that they never show as reordered.
//
// A pair's confidence is its round's factor times PairAgreement: the share of the evidence
// (target, source, module path, paired operands and users) that agrees. An unpaired node's
// confidence (that it really was added or removed) is 1 minus the best similarity any candidate
// partner reached.
//
// Cost: near-linear in the size of the graphs. Rounds 1 to 3 touch each node and edge a bounded
// number of times; round 4 scores only unpaired nodes, all pairs within small groups and a window
// of neighbours by graph position within large ones.
#ifndef ANALYZERS_IR_DIFF_MATCHER_H_
#define ANALYZERS_IR_DIFF_MATCHER_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzers/ir_diff/anchors.h"
#include "analyzers/ir_diff/correspondence.h"
#include "analyzers/ir_diff/index.h"

namespace cl {

enum class MatchRound : uint8_t { kUnmatched, kAnchor, kLooseAnchor, kPropagation, kSimilarity };

struct GraphMatch {
  explicit GraphMatch(int base_size, int head_size)
      : pairs(base_size, head_size),
        round(base_size, MatchRound::kUnmatched),
        base_confidence(base_size, 1.0),
        head_confidence(head_size, 1.0) {}

  NodeCorrespondence pairs;
  std::vector<MatchRound> round;        // per base node: the round that paired it
  std::vector<double> base_confidence;  // paired: the pairing's; unpaired: that it was removed
  std::vector<double> head_confidence;  // paired: the pairing's; unpaired: that it was added
};

// CancelledError when `cancelled` flips while it runs.
absl::StatusOr<GraphMatch> MatchGraphs(const GraphIndex& base, const GraphAnchors& base_anchors,
                                       const GraphIndex& head, const GraphAnchors& head_anchors,
                                       const std::atomic<bool>* cancelled = nullptr);

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_MATCHER_H_

// LineShifts: how far an edit moved source lines, base → head, per source site.
//
// An edit above a function moves the lines of every node below it by as much, so "the same line"
// between two versions of a model means "the same line after the shift". The matcher estimates
// the shift of each site (file and function, NodeFacts::site) as the most common line distance
// among the pairs made so far, and uses it where a node has no paired neighbour to read a local
// shift from (graph_similarity.h, graph_matcher.cc).
#ifndef ANALYZERS_IR_DIFF_LINE_SHIFT_H_
#define ANALYZERS_IR_DIFF_LINE_SHIFT_H_

#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyzers/ir_diff/correspondence.h"
#include "analyzers/ir_diff/index.h"

namespace cl {

class LineShifts {
 public:
  // Re-estimates every site's shift from the pairs in `pairs` whose nodes both have a source.
  void Estimate(const GraphIndex& base, const GraphIndex& head, const NodeCorrespondence& pairs);

  // The same, one vote at a time: Clear(), Vote() for each pair, then Decide().
  void Clear() { votes_.clear(); }
  void Vote(const NodeFacts& base, const NodeFacts& head);
  void Decide();

  // The shift of `site` (head line − base line), 0 when no pair from that site is known.
  int64_t Of(uint64_t site) const {
    auto it = shift_.find(site);
    return it == shift_.end() ? 0 : it->second;
  }

 private:
  absl::flat_hash_map<std::pair<uint64_t, int64_t>, int32_t> votes_;  // (site, shift) → pairs
  absl::flat_hash_map<uint64_t, int64_t> shift_;
};

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_LINE_SHIFT_H_

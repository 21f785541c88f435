#include "analyzers/ir_diff/similarity.h"

#include <algorithm>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace cl {
namespace {

// Neighbour lists this long are compared through a hash map rather than pairwise.
constexpr size_t kPairwiseLimit = 16;

// The share of paired neighbours that correspond: base neighbour x agrees when its partner is one
// of the head node's neighbours (as a multiset). Neighbours without a partner were added or
// removed: they say nothing either way. With no paired neighbour at all, nodes that have no
// neighbours agree (two placeholders' operands) and others are undecided.
double NeighbourAgreement(absl::Span<const int32_t> base_side, absl::Span<const int32_t> head_side,
                          const NodeCorrespondence& pairs) {
  int base_paired = 0;
  int head_paired = 0;
  for (const int32_t h : head_side) head_paired += pairs.HeadMatched(h);
  int agree = 0;
  if (head_side.size() <= kPairwiseLimit) {
    absl::InlinedVector<bool, kPairwiseLimit> used(head_side.size(), false);
    for (const int32_t b : base_side) {
      if (!pairs.BaseMatched(b)) continue;
      ++base_paired;
      for (size_t j = 0; j < head_side.size(); ++j) {
        if (!used[j] && head_side[j] == pairs.base_to_head[b]) {
          used[j] = true;
          ++agree;
          break;
        }
      }
    }
  } else {
    absl::flat_hash_map<int32_t, int32_t> remaining;
    for (const int32_t h : head_side) ++remaining[h];
    for (const int32_t b : base_side) {
      if (!pairs.BaseMatched(b)) continue;
      ++base_paired;
      auto it = remaining.find(pairs.base_to_head[b]);
      if (it != remaining.end() && it->second > 0) {
        --it->second;
        ++agree;
      }
    }
  }
  const int paired = std::max(base_paired, head_paired);
  if (paired == 0) return base_side.empty() && head_side.empty() ? 1.0 : 0.5;
  return static_cast<double>(agree) / paired;
}

// How far an edit above moved the code around base node b: the line distance between a paired
// neighbour of b and its partner; without one, the estimate for b's site.
int64_t LocalShift(const GraphIndex& base, int b, const GraphIndex& head,
                   const NodeCorrespondence& pairs, const LineShifts& shifts) {
  for (const absl::Span<const int32_t> side : {base.inputs(b), base.users(b)}) {
    for (const int32_t x : side) {
      const int32_t x2 = pairs.base_to_head[x];
      if (x2 < 0 || base.facts(x).site == 0 || head.facts(x2).site == 0) continue;
      return int64_t{head.facts(x2).line} - base.facts(x).line;
    }
  }
  return shifts.Of(base.facts(b).site);
}

// Same site and the line where the shift puts it: 1. Same site elsewhere: a little, since the node
// may have moved on its own. Neither has a source: they agree.
double SourceAgreement(const GraphIndex& base, int b, const GraphIndex& head, int h,
                       const NodeCorrespondence& pairs, const LineShifts& shifts) {
  const NodeFacts& fb = base.facts(b);
  const NodeFacts& fh = head.facts(h);
  if (fb.site != fh.site) return 0.0;
  if (fb.site == 0) return 1.0;
  const int64_t moved = int64_t{fh.line} - fb.line;
  return moved == LocalShift(base, b, head, pairs, shifts) ? 1.0 : 0.25;
}

struct Weighted {
  double sum = 0;
  double weight = 0;
  void Add(double value, double w) {
    sum += value * w;
    weight += w;
  }
  double Mean() const { return weight == 0 ? 0 : sum / weight; }
};

Weighted PairingEvidence(const GraphIndex& base, int b, const GraphIndex& head, int h,
                         const NodeCorrespondence& pairs, const LineShifts& shifts) {
  const NodeFacts& fb = base.facts(b);
  const NodeFacts& fh = head.facts(h);
  Weighted w;
  w.Add(fb.target == fh.target, 2);
  // Where a node came from weighs as much as what it reads: a chain `pow(pow(x))` that lost one
  // pow is told apart only by the line that disappeared.
  w.Add(SourceAgreement(base, b, head, h, pairs, shifts), 3);
  w.Add(fb.module == fh.module, 1);
  w.Add(NeighbourAgreement(base.inputs(b), head.inputs(h), pairs), 3);
  w.Add(NeighbourAgreement(base.users(b), head.users(h), pairs), 2);
  return w;
}

}  // namespace

double NodeSimilarity(const GraphIndex& base, int b, const GraphIndex& head, int h,
                      const NodeCorrespondence& pairs, const LineShifts& shifts) {
  Weighted w = PairingEvidence(base, b, head, h, pairs, shifts);
  w.Add(base.facts(b).literals == head.facts(h).literals, 1);
  w.Add(base.facts(b).meta == head.facts(h).meta, 1);
  return w.Mean();
}

double PairAgreement(const GraphIndex& base, int b, const GraphIndex& head, int h,
                     const NodeCorrespondence& pairs, const LineShifts& shifts) {
  return PairingEvidence(base, b, head, h, pairs, shifts).Mean();
}

}  // namespace cl

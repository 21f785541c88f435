#include "analyzers/ir_diff/matcher.h"

#include <algorithm>
#include <deque>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "analyzers/ir_diff/candidates.h"
#include "analyzers/ir_diff/fingerprint.h"
#include "analyzers/ir_diff/line_shift.h"
#include "analyzers/ir_diff/similarity.h"
#include "analyzers/ir_diff/twins.h"

namespace cl {
namespace {

// How much each round's pairing is trusted before the evidence is weighed.
double RoundFactor(MatchRound round) {
  switch (round) {
    case MatchRound::kAnchor:
      return 1.0;
    case MatchRound::kLooseAnchor:
      return 0.95;
    case MatchRound::kPropagation:
      return 0.9;
    case MatchRound::kSimilarity:
      return 0.8;
    case MatchRound::kUnmatched:
      break;
  }
  return 0.0;
}

// Below this similarity two nodes are different nodes (one removed, one added), not one changed
// node. The same target from the same line, and nothing else in common, scores about 0.4.
constexpr double kMinSimilarity = 0.6;
// Candidates from a propagation step that share a target need less: their neighbourhood already
// put them side by side.
constexpr double kMinNeighbourSimilarity = 0.4;
constexpr int kMaxSimilarityRounds = 4;

class Matcher {
 public:
  Matcher(const GraphIndex& base, const GraphAnchors& base_anchors, const GraphIndex& head,
          const GraphAnchors& head_anchors, const std::atomic<bool>* cancelled)
      : base_(base),
        head_(head),
        base_anchors_(base_anchors),
        head_anchors_(head_anchors),
        cancelled_(cancelled),
        match_(base.size(), head.size()),
        scorer_(base, head) {}

  absl::StatusOr<GraphMatch> Run() && {
    PairUniqueAnchors(base_anchors_.strict, head_anchors_.strict, MatchRound::kAnchor);
    shifts_.Estimate(base_, head_, match_.pairs);
    Propagate();
    // Line-free anchors only among what is left (round 3, not 2): where an exact line can still
    // pair a node, it must win over a look-alike from another line.
    PairUniqueAnchors(base_anchors_.loose, head_anchors_.loose, MatchRound::kLooseAnchor);
    shifts_.Estimate(base_, head_, match_.pairs);
    Propagate();
    if (Cancelled()) return absl::CancelledError("ir_diff pass cancelled");
    for (int i = 0; i < kMaxSimilarityRounds && !Cancelled(); ++i) {
      shifts_.Estimate(base_, head_, match_.pairs);
      if (!PairBySimilarity()) break;
      Propagate();
    }
    if (Cancelled()) return absl::CancelledError("ir_diff pass cancelled");
    UntangleTwins(base_, base_anchors_, head_, head_anchors_, &match_.pairs,
                  [&](int x, int y) { std::swap(match_.round[x], match_.round[y]); });
    SetConfidences();
    return std::move(match_);
  }

 private:
  bool Cancelled() const {
    return cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed);
  }

  void Pair(int b, int h, MatchRound round) {
    match_.pairs.Pair(b, h);
    match_.round[b] = round;
    queue_.emplace_back(b, h);
  }

  // Rounds 1 and 3: anchors that name exactly one unpaired node on each side.
  void PairUniqueAnchors(const std::vector<uint64_t>& base_anchors,
                         const std::vector<uint64_t>& head_anchors, MatchRound round) {
    struct Seen {
      int32_t base = -1;
      int32_t head = -1;
      int32_t base_count = 0;
      int32_t head_count = 0;
    };
    absl::flat_hash_map<uint64_t, Seen> seen;
    seen.reserve(base_.size() + head_.size());
    for (int b = 0; b < base_.size(); ++b) {
      if (match_.pairs.BaseMatched(b)) continue;
      Seen& s = seen[base_anchors[b]];
      s.base = b;
      ++s.base_count;
    }
    for (int h = 0; h < head_.size(); ++h) {
      if (match_.pairs.HeadMatched(h)) continue;
      Seen& s = seen[head_anchors[h]];
      s.head = h;
      ++s.head_count;
    }
    std::vector<std::pair<int32_t, int32_t>> candidates;
    for (int b = 0; b < base_.size(); ++b) {
      if (match_.pairs.BaseMatched(b)) continue;
      const Seen& s = seen.find(base_anchors[b])->second;
      if (s.base_count == 1 && s.head_count == 1) candidates.emplace_back(b, s.head);
    }
    if (round == MatchRound::kLooseAnchor) KeepMovedCode(&candidates);
    for (const auto& [b, h] : candidates) Pair(b, h, round);
  }

  // Of the pairs line-free anchors propose, keeps those that look like code an edit moved.
  // Without lines, `h * 2` inserted before `h * 0.5` has the anchor the old `h * 0.5` had, and a
  // node removed from a chain has its successor's: code that only moved keeps its literals, and
  // moved as far as the rest of its site (the shift the proposals themselves show), unless no
  // unpaired node waits at that place.
  void KeepMovedCode(std::vector<std::pair<int32_t, int32_t>>* candidates) {
    LineShifts moved;
    for (int b = 0; b < base_.size(); ++b) {
      if (match_.pairs.BaseMatched(b)) {
        moved.Vote(base_.facts(b), head_.facts(match_.pairs.base_to_head[b]));
      }
    }
    for (const auto& [b, h] : *candidates) moved.Vote(base_.facts(b), head_.facts(h));
    moved.Decide();
    absl::flat_hash_set<uint64_t> base_at, head_at;  // places of unpaired nodes
    for (int b = 0; b < base_.size(); ++b) {
      if (!match_.pairs.BaseMatched(b)) base_at.insert(PlaceKey(base_.facts(b), 0));
    }
    for (int h = 0; h < head_.size(); ++h) {
      if (!match_.pairs.HeadMatched(h)) head_at.insert(PlaceKey(head_.facts(h), 0));
    }
    std::vector<std::pair<int32_t, int32_t>> kept;
    for (const auto& [b, h] : *candidates) {
      const NodeFacts& fb = base_.facts(b);
      const NodeFacts& fh = head_.facts(h);
      if (fb.literals != fh.literals) continue;
      const int64_t shift = moved.Of(fb.site);
      if (int64_t{fh.line} - fb.line != shift &&
          (base_at.contains(PlaceKey(fh, -shift)) || head_at.contains(PlaceKey(fb, shift)))) {
        continue;
      }
      kept.emplace_back(b, h);
    }
    candidates->swap(kept);
  }

  // A node's target and place, its line moved by `shift`.
  static uint64_t PlaceKey(const NodeFacts& f, int64_t shift) {
    return Combine(Combine(f.target, f.site), static_cast<uint64_t>(int64_t{f.line} + shift));
  }

  // Round 2: from each new pair to its neighbours, until nothing more pairs. Pairs of different
  // targets (an op changed) wait until no pair of one target is left to make: a node that was
  // removed from a chain on one line must not take its successor's place.
  void Propagate() {
    int steps = 0;
    while (!Cancelled()) {
      while (!queue_.empty()) {
        if ((++steps & 1023) == 0 && Cancelled()) return;
        const auto [b, h] = queue_.front();
        queue_.pop_front();
        PairOperandsBySlot(b, h);
        PairNeighbours(b, h, base_.inputs(b), head_.inputs(h));
        PairNeighbours(b, h, base_.users(b), head_.users(h));
      }
      if (deferred_.empty()) return;
      std::vector<ScoredPair> deferred = std::move(deferred_);
      deferred_.clear();
      SortBestFirst(&deferred);
      for (const ScoredPair& c : deferred) {
        if (match_.pairs.BaseMatched(c.base) || match_.pairs.HeadMatched(c.head)) continue;
        if (NodeSimilarity(base_, c.base, head_, c.head, match_.pairs, shifts_) < kMinSimilarity) {
          continue;
        }
        Pair(c.base, c.head, MatchRound::kPropagation);
      }
    }
  }

  // Operands are positional: when the two nodes take as many, the unpaired operands in the same
  // slot pair up if they agree on target and place. This is what tells twins apart (two nodes
  // computing the same thing from the same inputs on one line), and what pairs the many operands
  // of an output node, where one target rarely occurs once.
  void PairOperandsBySlot(int b, int h) {
    const absl::Span<const int32_t> ib = base_.inputs(b);
    const absl::Span<const int32_t> ih = head_.inputs(h);
    if (ib.size() != ih.size()) return;
    for (size_t k = 0; k < ib.size(); ++k) {
      const int32_t x = ib[k];
      const int32_t y = ih[k];
      if (match_.pairs.BaseMatched(x) || match_.pairs.HeadMatched(y)) continue;
      if (base_.facts(x).target != head_.facts(y).target || !SamePlace(x, y, b, h)) continue;
      if (NodeSimilarity(base_, x, head_, y, match_.pairs, shifts_) < kMinNeighbourSimilarity) {
        continue;
      }
      Pair(x, y, MatchRound::kPropagation);
    }
  }

  // The unpaired nodes of `side`, each once, sorted by (target, index).
  template <typename IsPaired>
  static void Candidates(absl::Span<const int32_t> side, const GraphIndex& graph, IsPaired paired,
                         absl::InlinedVector<int32_t, 8>* out) {
    out->clear();
    for (const int32_t n : side) {
      if (!paired(n)) out->push_back(n);
    }
    std::sort(out->begin(), out->end(), [&](int32_t x, int32_t y) {
      return std::make_pair(graph.facts(x).target, x) < std::make_pair(graph.facts(y).target, y);
    });
    out->erase(std::unique(out->begin(), out->end()), out->end());
  }

  // The neighbours `base_side` of base node `from_b` against `head_side` of its partner `from_h`.
  void PairNeighbours(int from_b, int from_h, absl::Span<const int32_t> base_side,
                      absl::Span<const int32_t> head_side) {
    auto& cb = base_candidates_;
    auto& ch = head_candidates_;
    Candidates(
        base_side, base_, [&](int32_t b) { return match_.pairs.BaseMatched(b); }, &cb);
    if (cb.empty()) return;
    Candidates(
        head_side, head_, [&](int32_t h) { return match_.pairs.HeadMatched(h); }, &ch);
    if (ch.empty()) return;

    // A target that occurs once among the candidates of each side pairs its two nodes, when they
    // also come from the same place. (A node inserted before its user has the user's target
    // often enough, and never its line.)
    int left_base = 0, left_head = 0;
    int32_t last_base = -1, last_head = -1;
    size_t i = 0, j = 0;
    while (i < cb.size() || j < ch.size()) {
      const uint64_t tb = i < cb.size() ? base_.facts(cb[i]).target : UINT64_MAX;
      const uint64_t th = j < ch.size() ? head_.facts(ch[j]).target : UINT64_MAX;
      const uint64_t t = std::min(tb, th);
      size_t ie = i, je = j;
      while (ie < cb.size() && base_.facts(cb[ie]).target == t) ++ie;
      while (je < ch.size() && head_.facts(ch[je]).target == t) ++je;
      if (ie - i == 1 && je - j == 1 && SamePlace(cb[i], ch[j], from_b, from_h) &&
          NodeSimilarity(base_, cb[i], head_, ch[j], match_.pairs, shifts_) >=
              kMinNeighbourSimilarity) {
        Pair(cb[i], ch[j], MatchRound::kPropagation);
      } else {
        left_base += static_cast<int>(ie - i);
        left_head += static_cast<int>(je - j);
        if (ie > i) last_base = cb[ie - 1];
        if (je > j) last_head = ch[je - 1];
      }
      i = ie;
      j = je;
    }
    // One node left on each side, of different targets, from the same source line: the op at
    // that line changed. Decided once no pair of one target is left (see Propagate).
    if (left_base == 1 && left_head == 1 && MayBeOneOp(last_base, last_head) &&
        SamePlace(last_base, last_head, from_b, from_h)) {
      const double s = NodeSimilarity(base_, last_base, head_, last_head, match_.pairs, shifts_);
      if (s >= kMinSimilarity) deferred_.push_back({s, last_base, last_head});
    }
  }

  // Same source site, and lines as far apart as those of the pair they were reached from (an
  // edit above them moved both by as much; from a pair without a source, as far as the site's
  // estimated shift); or neither has a source (nodes a compiler pass made).
  bool SamePlace(int b, int h, int from_b, int from_h) const {
    const NodeFacts& fb = base_.facts(b);
    const NodeFacts& fh = head_.facts(h);
    if (fb.site != fh.site) return false;
    if (fb.site == 0) return true;
    const NodeFacts& pb = base_.facts(from_b);
    const NodeFacts& ph = head_.facts(from_h);
    const int64_t shift =
        pb.site != 0 && ph.site != 0 ? int64_t{ph.line} - pb.line : shifts_.Of(fb.site);
    return int64_t{fh.line} - fb.line == shift;
  }

  // Whether two nodes of different targets can be one node whose op changed: both computations
  // (not placeholders or outputs) with a source to place them by.
  bool MayBeOneOp(int b, int h) const {
    const NodeFacts& fb = base_.facts(b);
    const NodeFacts& fh = head_.facts(h);
    return fb.target != fh.target && fb.kind == NodeKind::kOther && fh.kind == NodeKind::kOther &&
           fb.site != 0;
  }

  // Round 4. Returns whether it paired anything.
  bool PairBySimilarity() {
    bool paired = false;
    for (const ScoredPair& c : scorer_.Score(match_.pairs, shifts_, kMinSimilarity, cancelled_)) {
      if (match_.pairs.BaseMatched(c.base) || match_.pairs.HeadMatched(c.head)) continue;
      Pair(c.base, c.head, MatchRound::kSimilarity);
      paired = true;
    }
    return paired && !Cancelled();
  }

  void SetConfidences() {
    for (int b = 0; b < base_.size(); ++b) {
      const int h = match_.pairs.base_to_head[b];
      if (h < 0) {
        match_.base_confidence[b] = 1.0 - scorer_.best_base(b);
        continue;
      }
      const double c =
          RoundFactor(match_.round[b]) * PairAgreement(base_, b, head_, h, match_.pairs, shifts_);
      match_.base_confidence[b] = c;
      match_.head_confidence[h] = c;
    }
    for (int h = 0; h < head_.size(); ++h) {
      if (!match_.pairs.HeadMatched(h)) match_.head_confidence[h] = 1.0 - scorer_.best_head(h);
    }
  }

  const GraphIndex& base_;
  const GraphIndex& head_;
  const GraphAnchors& base_anchors_;
  const GraphAnchors& head_anchors_;
  const std::atomic<bool>* cancelled_;
  GraphMatch match_;
  LineShifts shifts_;                              // re-estimated before each round that reads it
  std::deque<std::pair<int32_t, int32_t>> queue_;  // pairs whose neighbours are still to visit
  CandidateScorer scorer_;            // round 4, and the best score each node reached there
  std::vector<ScoredPair> deferred_;  // round 2's pairs of different targets, not yet decided
  absl::InlinedVector<int32_t, 8> base_candidates_;
  absl::InlinedVector<int32_t, 8> head_candidates_;
};

}  // namespace

absl::StatusOr<GraphMatch> MatchGraphs(const GraphIndex& base, const GraphAnchors& base_anchors,
                                       const GraphIndex& head, const GraphAnchors& head_anchors,
                                       const std::atomic<bool>* cancelled) {
  return Matcher(base, base_anchors, head, head_anchors, cancelled).Run();
}

}  // namespace cl

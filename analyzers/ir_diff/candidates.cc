#include "analyzers/ir_diff/candidates.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "analyzers/ir_diff/similarity.h"

namespace cl {
namespace {

// Groups up to this many candidate pairs are scored in full; larger ones by window.
constexpr int64_t kAllPairsBudget = 4096;
// In a large group, a node meets this many nodes on either side of its relative position.
constexpr int kWindow = 8;

bool Stopped(const std::atomic<bool>* cancelled) {
  return cancelled != nullptr && cancelled->load(std::memory_order_relaxed);
}

// The unpaired nodes of one side, in graph order.
std::vector<int32_t> Unpaired(int size, const std::vector<int32_t>& partner) {
  std::vector<int32_t> out;
  for (int n = 0; n < size; ++n) {
    if (partner[n] < 0) out.push_back(n);
  }
  return out;
}

// Those of `nodes` that are computations with a source: the ones an op change can be told by.
std::vector<int32_t> Sourced(const GraphIndex& g, const std::vector<int32_t>& nodes) {
  std::vector<int32_t> out;
  for (const int32_t n : nodes) {
    if (g.facts(n).site != 0 && g.facts(n).kind == NodeKind::kOther) out.push_back(n);
  }
  return out;
}

}  // namespace

void SortBestFirst(std::vector<ScoredPair>* pairs) {
  std::sort(pairs->begin(), pairs->end(), [](const ScoredPair& x, const ScoredPair& y) {
    return std::tie(y.score, x.base, x.head) < std::tie(x.score, y.base, y.head);
  });
}

CandidateScorer::CandidateScorer(const GraphIndex& base, const GraphIndex& head)
    : base_(base), head_(head), best_base_(base.size(), 0.0), best_head_(head.size(), 0.0) {}

std::vector<ScoredPair> CandidateScorer::Score(const NodeCorrespondence& pairs,
                                               const LineShifts& shifts, double min_score,
                                               const std::atomic<bool>* cancelled) {
  pairs_ = &pairs;
  shifts_ = &shifts;
  min_score_ = min_score;
  cancelled_ = cancelled;
  scored_.clear();
  const std::vector<int32_t> ub = Unpaired(base_.size(), pairs.base_to_head);
  const std::vector<int32_t> uh = Unpaired(head_.size(), pairs.head_to_base);
  if (ub.empty() || uh.empty()) return {};
  ScoreGroupsBy(
      ub, uh,
      [](const GraphIndex& g, int32_t n) { return std::make_pair(g.facts(n).target, uint32_t{0}); },
      /*cross_target=*/false);
  ScoreGroupsBy(
      Sourced(base_, ub), Sourced(head_, uh),
      [](const GraphIndex& g, int32_t n) {
        return std::make_pair(g.facts(n).site, g.facts(n).line);
      },
      /*cross_target=*/true);
  SortBestFirst(&scored_);
  return std::move(scored_);
}

// Groups the nodes of each side by `key` (graph order within a group) and scores each group
// present on both sides.
template <typename Key>
void CandidateScorer::ScoreGroupsBy(const std::vector<int32_t>& ub, const std::vector<int32_t>& uh,
                                    Key key, bool cross_target) {
  std::vector<int32_t> sb = ub, sh = uh;
  auto order = [&](const GraphIndex& g) {
    return [&g, &key](int32_t x, int32_t y) {
      return std::make_pair(key(g, x), x) < std::make_pair(key(g, y), y);
    };
  };
  std::sort(sb.begin(), sb.end(), order(base_));
  std::sort(sh.begin(), sh.end(), order(head_));
  size_t i = 0, j = 0;
  while (i < sb.size() && j < sh.size()) {
    const auto kb = key(base_, sb[i]);
    const auto kh = key(head_, sh[j]);
    if (kb < kh) {
      ++i;
    } else if (kh < kb) {
      ++j;
    } else {
      size_t ie = i, je = j;
      while (ie < sb.size() && key(base_, sb[ie]) == kb) ++ie;
      while (je < sh.size() && key(head_, sh[je]) == kb) ++je;
      ScoreGroup(sb.data() + i, ie - i, sh.data() + j, je - j, cross_target);
      i = ie;
      j = je;
    }
  }
}

void CandidateScorer::ScoreGroup(const int32_t* bg, size_t nb, const int32_t* hg, size_t nh,
                                 bool cross_target) {
  const bool all_pairs = static_cast<int64_t>(nb) * static_cast<int64_t>(nh) <= kAllPairsBudget;
  for (size_t i = 0; i < nb; ++i) {
    if (Stopped(cancelled_)) return;
    const int32_t b = bg[i];
    size_t from = 0, to = nh;
    if (!all_pairs) {
      // hg is in graph order: find the head node at b's relative position.
      const double at = static_cast<double>(b) / base_.size() * head_.size();
      const size_t mid = static_cast<size_t>(
          std::lower_bound(hg, hg + nh, at, [](int32_t h, double x) { return h < x; }) - hg);
      from = mid > static_cast<size_t>(kWindow) ? mid - kWindow : 0;
      to = std::min(nh, mid + kWindow);
    }
    for (size_t k = from; k < to; ++k) {
      const int32_t h = hg[k];
      if (cross_target && base_.facts(b).target == head_.facts(h).target) continue;
      const double s = NodeSimilarity(base_, b, head_, h, *pairs_, *shifts_);
      best_base_[b] = std::max(best_base_[b], s);
      best_head_[h] = std::max(best_head_[h], s);
      if (s >= min_score_) scored_.push_back({s, b, h});
    }
  }
}

}  // namespace cl

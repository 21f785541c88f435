// Candidate pairs for the nodes that anchors and propagation could not pair: the similarity round
// of the graph matcher (graph_matcher.h).
//
// Unpaired nodes are scored (NodeSimilarity, graph_similarity.h) against the unpaired nodes of
// the other graph that could be them: those of the same target, and, for an op that changed,
// those of another target from the same source line. Within a small group every pair is scored;
// within a large one (kAllPairsBudget) each node against the few nodes nearest its relative
// position in the other graph, which keeps the round near-linear whatever the graphs.
#ifndef ANALYZERS_IR_DIFF_CANDIDATES_H_
#define ANALYZERS_IR_DIFF_CANDIDATES_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "analyzers/ir_diff/correspondence.h"
#include "analyzers/ir_diff/index.h"
#include "analyzers/ir_diff/line_shift.h"

namespace cl {

struct ScoredPair {
  double score;
  int32_t base;
  int32_t head;
};

// Best score first; ties in graph order, so that no result depends on a hash map's order.
void SortBestFirst(std::vector<ScoredPair>* pairs);

class CandidateScorer {
 public:
  CandidateScorer(const GraphIndex& base, const GraphIndex& head);

  // The candidate pairs of the nodes `pairs` leaves unpaired that score at least `min_score`,
  // best first. Stops early (with what it has) when `cancelled` flips.
  std::vector<ScoredPair> Score(const NodeCorrespondence& pairs, const LineShifts& shifts,
                                double min_score, const std::atomic<bool>* cancelled);

  // The best score a node reached over every Score() so far; 0 when it never was a candidate.
  double best_base(int b) const { return best_base_[b]; }
  double best_head(int h) const { return best_head_[h]; }

 private:
  template <typename Key>
  void ScoreGroupsBy(const std::vector<int32_t>& ub, const std::vector<int32_t>& uh, Key key,
                     bool cross_target);
  void ScoreGroup(const int32_t* bg, size_t nb, const int32_t* hg, size_t nh, bool cross_target);

  const GraphIndex& base_;
  const GraphIndex& head_;
  std::vector<double> best_base_;
  std::vector<double> best_head_;
  // The state of one Score() call.
  const NodeCorrespondence* pairs_ = nullptr;
  const LineShifts* shifts_ = nullptr;
  double min_score_ = 0;
  const std::atomic<bool>* cancelled_ = nullptr;
  std::vector<ScoredPair> scored_;
};

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_CANDIDATES_H_

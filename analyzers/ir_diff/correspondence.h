// NodeCorrespondence: which node of a base graph is which node of a head graph.
//
// The state the graph matcher builds up round by round, and what the similarity measure and the
// node comparison read: a pairing is one-to-one, and a node without a partner was removed (base)
// or added (head).
#ifndef ANALYZERS_IR_DIFF_CORRESPONDENCE_H_
#define ANALYZERS_IR_DIFF_CORRESPONDENCE_H_

#include <cstdint>
#include <vector>

namespace cl {

struct NodeCorrespondence {
  NodeCorrespondence(int base_size, int head_size)
      : base_to_head(base_size, -1), head_to_base(head_size, -1) {}

  bool BaseMatched(int b) const { return base_to_head[b] >= 0; }
  bool HeadMatched(int h) const { return head_to_base[h] >= 0; }
  void Pair(int b, int h) {
    base_to_head[b] = h;
    head_to_base[h] = b;
    ++matched;
  }

  std::vector<int32_t> base_to_head;  // -1: no partner (removed)
  std::vector<int32_t> head_to_base;  // -1: no partner (added)
  int matched = 0;
};

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_CORRESPONDENCE_H_

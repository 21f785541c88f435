#include "analyzers/ir_diff/line_shift.h"

#include <tuple>

namespace cl {

void LineShifts::Estimate(const GraphIndex& base, const GraphIndex& head,
                          const NodeCorrespondence& pairs) {
  Clear();
  for (int b = 0; b < base.size(); ++b) {
    const int h = pairs.base_to_head[b];
    if (h >= 0) Vote(base.facts(b), head.facts(h));
  }
  Decide();
}

void LineShifts::Vote(const NodeFacts& base, const NodeFacts& head) {
  if (base.site == 0 || base.site != head.site) return;
  ++votes_[{base.site, int64_t{head.line} - base.line}];
}

void LineShifts::Decide() {
  // The most common shift per site; ties go to the smaller shift, so that the estimate does not
  // depend on the order of a hash map.
  absl::flat_hash_map<uint64_t, std::pair<int32_t, int64_t>> best;  // site → (votes, shift)
  for (const auto& [key, count] : votes_) {
    const auto& [site, shift] = key;
    auto [it, inserted] = best.try_emplace(site, count, shift);
    if (!inserted &&
        std::make_tuple(count, -shift) > std::make_tuple(it->second.first, -it->second.second)) {
      it->second = {count, shift};
    }
  }
  shift_.clear();
  for (const auto& [site, choice] : best) shift_[site] = choice.second;
}

}  // namespace cl

#include "analyzers/recompile/cause.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "capture/validate.h"

namespace cl {

using Category = v1::RecompileCategory;

std::vector<const GuardFailure*> CauseFailures(
    const std::vector<std::vector<GuardFailure>>& bullets) {
  std::map<std::pair<Category::Value, std::string>, int> entries;  // key -> entries failing on it
  for (const std::vector<GuardFailure>& bullet : bullets) {
    std::set<std::pair<Category::Value, std::string>> keys;
    for (const GuardFailure& f : bullet) {
      for (std::string& axis : f.ChangedAxes()) keys.emplace(f.category, std::move(axis));
    }
    for (const auto& key : keys) ++entries[key];
  }
  int most = 0;
  for (const auto& [key, n] : entries) most = std::max(most, n);
  // The bullets newest entry first, each entry's number parsed once.
  std::vector<std::pair<int64_t, size_t>> order;  // (entry number or -1, bullet)
  for (size_t i = 0; i < bullets.size(); ++i) {
    int64_t number = -1;
    for (const GuardFailure& f : bullets[i]) {
      if (auto parts = ParseCompileId(f.entry_id)) {
        number = parts->frame_compile_id;
        break;
      }
    }
    order.emplace_back(number, i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  // A failure that names several changes at once (a global state guard: "allow_tf32
  // num_threads") is the cause where each of them is; failing that, where any is.
  const auto named_most = [&](const GuardFailure& f, bool all) {
    for (const std::string& axis : f.ChangedAxes()) {
      if ((entries[{f.category, axis}] == most) != all) return !all;
    }
    return all;
  };
  std::vector<const GuardFailure*> out;
  for (bool all : {true, false}) {
    for (const auto& [number, i] : order) {
      for (const GuardFailure& f : bullets[i]) {
        if (named_most(f, all)) out.push_back(&f);
      }
      if (!out.empty()) return out;
    }
  }
  return out;
}

RecompileCause ParseRecompileCause(const v1::Compile& compile) {
  RecompileCause out;
  for (const std::string& reason : compile.recompile_reasons())
    out.bullets.push_back(ParseRecompileReason(reason));
  if (!out.bullets.empty()) out.causes = CauseFailures(out.bullets);
  return out;
}

}  // namespace cl

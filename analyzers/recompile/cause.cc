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
    for (const GuardFailure& f : bullet) keys.emplace(f.category, f.Axis());
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
  std::vector<const GuardFailure*> out;
  for (const auto& [number, i] : order) {
    for (const GuardFailure& f : bullets[i]) {
      if (entries[{f.category, f.Axis()}] == most) out.push_back(&f);
    }
    if (!out.empty()) break;
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

// A short list of names for a report line: "a, b, c and 2 more".
#ifndef ANALYZERS_COMMON_NAMED_LIST_H_
#define ANALYZERS_COMMON_NAMED_LIST_H_

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cl {

// The first `shown` of `names`, then how many more there are.
inline std::string NamedList(const std::vector<std::string>& names, size_t shown = 3) {
  std::string out =
      absl::StrJoin(names.begin(), names.begin() + std::min(names.size(), shown), ", ");
  if (names.size() > shown) absl::StrAppend(&out, " and ", names.size() - shown, " more");
  return out;
}

}  // namespace cl

#endif  // ANALYZERS_COMMON_NAMED_LIST_H_

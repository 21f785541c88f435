#include "lint/suppressions.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cl::lint {

Suppressions Suppressions::Scan(absl::string_view source) {
  static constexpr absl::string_view kMarker = "compile-lens:";
  Suppressions out;
  size_t line_start = 0;
  uint32_t line = 1;
  size_t counted = 0;  // newlines counted up to here
  for (size_t at = source.find(kMarker); at != absl::string_view::npos;
       at = source.find(kMarker, at + 1)) {
    line += static_cast<uint32_t>(std::count(source.begin() + counted, source.begin() + at, '\n'));
    counted = at;
    const size_t nl = source.rfind('\n', at);
    line_start = nl == absl::string_view::npos ? 0 : nl + 1;
    if (source.substr(line_start, at - line_start).find('#') == absl::string_view::npos) continue;
    absl::string_view rest = source.substr(at + kMarker.size());
    rest = absl::StripLeadingAsciiWhitespace(rest);
    bool whole_file = false;
    if (absl::ConsumePrefix(&rest, "ignore-file[")) {
      whole_file = true;
    } else if (!absl::ConsumePrefix(&rest, "ignore[")) {
      continue;
    }
    const size_t close = rest.find_first_of("]\n");
    if (close == absl::string_view::npos || rest[close] != ']') continue;
    for (absl::string_view id : absl::StrSplit(rest.substr(0, close), ',')) {
      id = absl::StripAsciiWhitespace(id);
      if (id.empty()) continue;
      if (whole_file) {
        out.file_.emplace(id);
      } else {
        out.lines_[line].emplace_back(id);
      }
    }
  }
  return out;
}

bool Suppressions::Suppressed(absl::string_view pattern, uint32_t line) const {
  if (file_.contains(pattern) || file_.contains("*")) return true;
  auto it = lines_.find(line);
  if (it == lines_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&](const std::string& id) { return id == pattern || id == "*"; });
}

}  // namespace cl::lint

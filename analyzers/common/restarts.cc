#include "analyzers/common/restarts.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace cl {

bool IsGraphBreakRestart(absl::string_view reason) {
  reason = absl::StripAsciiWhitespace(reason);
  return !reason.empty() && !absl::StartsWith(reason, "<class ");
}

GraphBreakRestarts::GraphBreakRestarts(const compile_lens::v1::SessionCapture& capture) {
  for (const compile_lens::v1::Compile& c : capture.compiles()) {
    if (c.graph_breaks().empty()) continue;
    auto& breaks = recorded_[{c.frame_id(), c.frame_compile_id()}];
    for (const compile_lens::v1::GraphBreak& gb : c.graph_breaks()) breaks.push_back(&gb);
  }
}

std::vector<absl::string_view> GraphBreakRestarts::Of(
    const compile_lens::v1::Compile& compile) const {
  // Pair each restart with a record of the same break: by text first (torch writes the reason as
  // a Python repr, "'skip function ...'", and the record holds the text inside it), then, as the
  // wording of the two often differs ("Dynamic control flow is not supported" against
  // "Data-dependent jump"), with any record left over. Only restarts no record accounts for are
  // breaks of their own.
  std::vector<absl::string_view> unpaired;
  const auto it = recorded_.find({compile.frame_id(), compile.frame_compile_id()});
  std::vector<bool> used(it == recorded_.end() ? 0 : it->second.size(), false);
  for (const std::string& reason : compile.restart_reasons()) {
    if (!IsGraphBreakRestart(reason)) continue;
    absl::string_view text = absl::StripAsciiWhitespace(reason);
    if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
        text.back() == text.front()) {
      text = text.substr(1, text.size() - 2);
    }
    bool paired = false;
    for (size_t i = 0; i < used.size() && !paired; ++i) {
      if (!used[i] && absl::StrContains(it->second[i]->reason(), text)) used[i] = paired = true;
    }
    if (!paired) unpaired.push_back(reason);
  }
  size_t left = static_cast<size_t>(std::count(used.begin(), used.end(), false));
  std::vector<absl::string_view> out;
  for (absl::string_view reason : unpaired) {
    if (left > 0) {
      --left;
      continue;
    }
    out.push_back(reason);
  }
  return out;
}

}  // namespace cl

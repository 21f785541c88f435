#include "analyzers/common/restarts.h"

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
  std::vector<absl::string_view> out;
  const auto it = recorded_.find({compile.frame_id(), compile.frame_compile_id()});
  for (const std::string& reason : compile.restart_reasons()) {
    if (!IsGraphBreakRestart(reason)) continue;
    // torch writes the reason as a Python repr ("'skip function ...'"); a graph-break record of the
    // same break holds the text inside it.
    absl::string_view text = absl::StripAsciiWhitespace(reason);
    if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
        text.back() == text.front()) {
      text = text.substr(1, text.size() - 2);
    }
    bool recorded = false;
    if (it != recorded_.end()) {
      for (const compile_lens::v1::GraphBreak* gb : it->second) {
        recorded = recorded || absl::StrContains(gb->reason(), text);
      }
    }
    if (!recorded) out.push_back(reason);
  }
  return out;
}

}  // namespace cl

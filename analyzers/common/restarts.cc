#include "analyzers/common/restarts.h"

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace cl {

bool IsGraphBreakRestart(absl::string_view reason) {
  reason = absl::StripAsciiWhitespace(reason);
  return !reason.empty() && !absl::StartsWith(reason, "<class ");
}

std::vector<absl::string_view> RestartGraphBreaks(const compile_lens::v1::Compile& compile,
                                                  const compile_lens::v1::SessionCapture& capture) {
  std::vector<absl::string_view> out;
  for (const std::string& reason : compile.restart_reasons()) {
    if (!IsGraphBreakRestart(reason)) continue;
    // torch writes the reason as a Python repr ("'skip function ...'"); a graph-break record of the
    // same break holds the text inside it.
    absl::string_view text = absl::StripAsciiWhitespace(reason);
    if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
        text.back() == text.front()) {
      text = text.substr(1, text.size() - 2);
    }
    const auto records = [&](const compile_lens::v1::Compile& c) {
      for (const compile_lens::v1::GraphBreak& gb : c.graph_breaks()) {
        if (absl::StrContains(gb.reason(), text)) return true;
      }
      return false;
    };
    bool recorded = records(compile);
    for (const compile_lens::v1::Compile& other : capture.compiles()) {
      if (recorded) break;
      if (&other != &compile && other.frame_id() == compile.frame_id() &&
          other.frame_compile_id() == compile.frame_compile_id()) {
        recorded = records(other);
      }
    }
    if (!recorded) out.push_back(reason);
  }
  return out;
}

}  // namespace cl

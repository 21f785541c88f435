#include "service/render/html_escape.h"

#include "service/render/untrusted_text.h"

namespace cl {

std::string EscapeHtml(absl::string_view untrusted) {
  const std::string scrubbed = ScrubUntrusted(untrusted, Newlines::kKeep);
  std::string out;
  out.reserve(scrubbed.size() + scrubbed.size() / 8);
  for (const char c : scrubbed) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace cl

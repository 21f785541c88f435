#include "service/render/html_escape.h"

#include "service/render/untrusted_text.h"

namespace cl {

std::string EscapeHtml(absl::string_view untrusted) {
  std::string out;
  AppendEscapedHtml(untrusted, &out);
  return out;
}

void AppendEscapedHtml(absl::string_view untrusted, std::string* out) {
  AppendScrubbed(untrusted, Newlines::kKeep, Escape::kHtml, out);
}

}  // namespace cl

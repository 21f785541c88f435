#include "service/render/untrusted_text.h"

#include <cstdint>
#include <cstdio>

#include "common/utf8.h"

namespace cl {
namespace {

bool IsBidiControl(char32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

bool IsControl(char32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

void AppendVisibleEscape(char32_t cp, std::string& out) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "[U+%04X]", static_cast<unsigned>(cp));
  out += buf;
}

}  // namespace

std::string ScrubUntrusted(absl::string_view in, Newlines newlines) {
  return RewriteUtf8(in, [newlines](char32_t cp, absl::string_view bytes, std::string& out) {
    if (cp == '\n' || cp == '\t') {
      out += newlines == Newlines::kKeep ? static_cast<char>(cp) : ' ';
    } else if (IsControl(cp) || IsBidiControl(cp)) {
      AppendVisibleEscape(cp, out);
    } else {
      out.append(bytes.data(), bytes.size());
    }
  });
}

}  // namespace cl

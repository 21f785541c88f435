#include "common/utf8.h"

#include <cstdint>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace cl {

size_t DecodeUtf8(absl::string_view in, char32_t& cp) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(in[i]); };
  const uint8_t b0 = byte(0);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  size_t len;
  char32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;  // a continuation byte or 0xF8..0xFF where a sequence should start
  }
  if (in.size() < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

bool IsValidUtf8(absl::string_view in) {
  while (!in.empty()) {
    char32_t cp = 0;
    const size_t len = DecodeUtf8(in, cp);
    if (len == 0) return false;
    in.remove_prefix(len);
  }
  return true;
}

std::string ToValidUtf8(absl::string_view in) {
  return RewriteUtf8(in, [](char32_t, absl::string_view bytes, std::string& out) {
    out.append(bytes.data(), bytes.size());
  });
}

absl::string_view Utf8Prefix(absl::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  // Only a character that starts at most 3 bytes before the cut can straddle it: the nearest byte
  // there that is not a continuation byte starts it, if anything does.
  for (size_t back = 1; back <= 3 && back <= max_bytes; ++back) {
    const size_t start = max_bytes - back;
    if ((static_cast<uint8_t>(s[start]) & 0xC0) == 0x80) continue;
    char32_t cp = 0;
    if (DecodeUtf8(s.substr(start), cp) > back) return s.substr(0, start);
    break;
  }
  return s.substr(0, max_bytes);
}

std::string ClipUtf8(absl::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  return absl::StrCat(Utf8Prefix(s, max_bytes), kEllipsis);
}

std::string EscapedExcerpt(absl::string_view s, size_t max_bytes) {
  const absl::string_view kept = Utf8Prefix(s, max_bytes);
  return absl::StrCat(absl::CHexEscape(kept), kept.size() < s.size() ? kEllipsis : "");
}

}  // namespace cl

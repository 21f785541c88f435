#include "service/render/untrusted_text.h"

#include <cstdint>
#include <cstdio>

namespace cl {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Decodes one UTF-8 scalar value at the start of `in`. Returns its length in bytes and sets
// `cp`, or returns 0 when the bytes there are not a well-formed sequence (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF).
size_t DecodeOne(absl::string_view in, char32_t& cp) {
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

bool IsBidiControl(char32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

bool IsControl(char32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

void AppendVisibleEscape(char32_t cp, std::string& out) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "[U+%04X]", static_cast<unsigned>(cp));
  out += buf;
}

// Copies `in`, replacing each byte that does not start a well-formed character with U+FFFD and
// letting `on_char(cp, bytes, out)` append each good character.
template <typename OnChar>
std::string Rewrite(absl::string_view in, OnChar on_char) {
  std::string out;
  out.reserve(in.size());
  while (!in.empty()) {
    char32_t cp = 0;
    const size_t len = DecodeOne(in, cp);
    if (len == 0) {
      // One replacement per bad byte: simple, and it never swallows a good character after it.
      out += kReplacement;
      in.remove_prefix(1);
      continue;
    }
    on_char(cp, in.substr(0, len), out);
    in.remove_prefix(len);
  }
  return out;
}

}  // namespace

std::string ScrubUntrusted(absl::string_view in, Newlines newlines) {
  return Rewrite(in, [newlines](char32_t cp, absl::string_view bytes, std::string& out) {
    if (cp == '\n' || cp == '\t') {
      out += newlines == Newlines::kKeep ? static_cast<char>(cp) : ' ';
    } else if (IsControl(cp) || IsBidiControl(cp)) {
      AppendVisibleEscape(cp, out);
    } else {
      out.append(bytes.data(), bytes.size());
    }
  });
}

std::string ToValidUtf8(absl::string_view in) {
  return Rewrite(in, [](char32_t, absl::string_view bytes, std::string& out) {
    out.append(bytes.data(), bytes.size());
  });
}

bool IsValidUtf8(absl::string_view in) {
  while (!in.empty()) {
    char32_t cp = 0;
    const size_t len = DecodeOne(in, cp);
    if (len == 0) return false;
    in.remove_prefix(len);
  }
  return true;
}

}  // namespace cl

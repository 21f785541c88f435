// UTF-8 checks, repair and clipping. Proto3 `string` fields must hold valid UTF-8, but bytes from
// logs and uploads may not be: importers and renderers repair them here (bad bytes become U+FFFD),
// and every text cut to a size is cut here, on a character boundary.
#ifndef COMMON_UTF8_H_
#define COMMON_UTF8_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace cl {

inline constexpr char kUtf8Replacement[] = "\xEF\xBF\xBD";  // U+FFFD
// What a clipped text ends with, everywhere: U+2026 "…", one character where "..." is three, and
// the mark the report's own lists already write ("a, b, … (12 more)").
inline constexpr char kEllipsis[] = "\xE2\x80\xA6";  // U+2026

// Decodes one UTF-8 scalar value at the start of `in`: returns its length in bytes and sets `cp`,
// or returns 0 when the bytes there are not a well-formed sequence (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF).
size_t DecodeUtf8(absl::string_view in, char32_t& cp);

bool IsValidUtf8(absl::string_view in);
// `in` with every byte that is not part of a well-formed sequence replaced by U+FFFD.
std::string ToValidUtf8(absl::string_view in);

// The longest prefix of `s` no longer than `max_bytes` that does not end inside a well-formed
// UTF-8 character: for a byte budget that must not grow (a chunk, a capped field flagged as
// truncated). Bytes that are not part of a well-formed character count as one-byte characters,
// so a prefix of valid UTF-8 is valid UTF-8 and invalid input is cut at `max_bytes` or just before
// a character that straddles it.
absl::string_view Utf8Prefix(absl::string_view s, size_t max_bytes);

// `s` when it fits in `max_bytes`; otherwise Utf8Prefix(s, max_bytes) followed by kEllipsis, so a
// clipped text is up to 3 bytes longer than `max_bytes`: the budget is the text's, the mark says
// that it was cut.
std::string ClipUtf8(absl::string_view s, size_t max_bytes);

// Untrusted text to quote in a message: at most `max_bytes` of `s` (cut as Utf8Prefix cuts) with
// every byte that is not printable ASCII C-escaped (absl::CHexEscape), then kEllipsis when cut.
// The escaping leaves no other non-ASCII byte, so the mark cannot be mistaken for the text's own.
std::string EscapedExcerpt(absl::string_view s, size_t max_bytes);

// Copies `in`, replacing each byte that does not start a well-formed character with U+FFFD (one
// per bad byte, so it never swallows a good character after it) and letting
// `on_char(cp, bytes, out)` append each good character.
template <typename OnChar>
std::string RewriteUtf8(absl::string_view in, OnChar on_char) {
  std::string out;
  out.reserve(in.size());
  while (!in.empty()) {
    char32_t cp = 0;
    const size_t len = DecodeUtf8(in, cp);
    if (len == 0) {
      out += kUtf8Replacement;
      in.remove_prefix(1);
      continue;
    }
    on_char(cp, in.substr(0, len), out);
    in.remove_prefix(len);
  }
  return out;
}

}  // namespace cl

#endif  // COMMON_UTF8_H_

// UTF-8 checks and repair. Proto3 `string` fields must hold valid UTF-8, but bytes from logs and
// uploads may not be: importers and renderers repair them here (bad bytes become U+FFFD).
#ifndef COMMON_UTF8_H_
#define COMMON_UTF8_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace cl {

inline constexpr char kUtf8Replacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Decodes one UTF-8 scalar value at the start of `in`: returns its length in bytes and sets `cp`,
// or returns 0 when the bytes there are not a well-formed sequence (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF).
size_t DecodeUtf8(absl::string_view in, char32_t& cp);

bool IsValidUtf8(absl::string_view in);
// `in` with every byte that is not part of a well-formed sequence replaced by U+FFFD.
std::string ToValidUtf8(absl::string_view in);

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

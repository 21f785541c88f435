// The character-level vocabulary of the FX text parser (fx_graph.h): whitespace, brackets, string
// literals and identifiers as FX's printed Python writes them, and the bounds every part of the
// parser keeps. Inline: these run on almost every byte of a graph.
#ifndef CAPTURE_TORCH_TRACE_FX_TEXT_H_
#define CAPTURE_TORCH_TRACE_FX_TEXT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"

namespace cl::fx {

inline constexpr size_t kNpos = absl::string_view::npos;
// List arguments nested deeper than this are kept as one literal: the parser's recursion is
// bounded by this, never by the input.
inline constexpr int kMaxArgNesting = 32;

// What absl::ascii_isspace accepts.
inline bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// absl::StripAsciiWhitespace, inlined: it runs several times on each part of each statement, and
// most parts have nothing to strip.
inline absl::string_view Strip(absl::string_view s) {
  size_t end = s.size();
  while (end > 0 && IsSpace(s[end - 1])) --end;
  size_t begin = 0;
  while (begin < end && IsSpace(s[begin])) ++begin;
  return absl::string_view(s.data() + begin, end - begin);
}

// Sets a proto string field from a view without building a temporary std::string first.
inline void Assign(std::string* field, absl::string_view value) {
  field->assign(value.data(), value.size());
}

inline bool IsOpen(char c) { return c == '(' || c == '[' || c == '{'; }
inline bool IsClose(char c) { return c == ')' || c == ']' || c == '}'; }
inline char CloserOf(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

// The characters that can change a scan's state; the scanning loops step over all others quickly.
enum CharClass : uint8_t { kPlain = 0, kQuote = 1, kOpen = 2, kClose = 4, kHash = 8 };
inline constexpr std::array<uint8_t, 256> kCharClass = [] {
  std::array<uint8_t, 256> classes{};
  for (const char c : {'\'', '"'}) classes[static_cast<uint8_t>(c)] = kQuote;
  for (const char c : {'(', '[', '{'}) classes[static_cast<uint8_t>(c)] = kOpen;
  for (const char c : {')', ']', '}'}) classes[static_cast<uint8_t>(c)] = kClose;
  classes['#'] = kHash;
  return classes;
}();
inline uint8_t ClassOf(char c) { return kCharClass[static_cast<uint8_t>(c)]; }

// The index of the quote closing the string literal that opens at `text[open]`, stepping over
// escaped characters; kNpos when the literal runs to the end of `text`.
inline size_t LiteralEnd(absl::string_view text, size_t open) {
  const char quote = text[open];
  size_t end = open + 1;
  while (end < text.size() && text[end] != quote) end += text[end] == '\\' ? 2 : 1;
  return end < text.size() ? end : kNpos;
}

inline bool IsIdentifier(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(s[0])) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

inline bool IsQuoted(absl::string_view s) {
  return s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front();
}

}  // namespace cl::fx

#endif  // CAPTURE_TORCH_TRACE_FX_TEXT_H_

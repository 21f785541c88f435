#include "service/render/untrusted_text.h"

#include <array>
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

// The bytes that come out as they went in: printable ASCII, and '\n' and '\t' where they are kept;
// with Escape::kHtml, not & < > " '. Almost all of a log is such bytes, copied a run at a time.
using ByteSet = std::array<bool, 256>;

constexpr ByteSet PlainBytes(Newlines newlines, Escape escape) {
  ByteSet plain{};
  for (int c = 0x20; c < 0x7F; ++c) plain[c] = true;
  for (const char c : {'\n', '\t'}) plain[static_cast<uint8_t>(c)] = newlines == Newlines::kKeep;
  if (escape == Escape::kHtml) {
    for (const char c : {'&', '<', '>', '"', '\''}) plain[static_cast<uint8_t>(c)] = false;
  }
  return plain;
}

constexpr ByteSet kPlain[2][2] = {
    {PlainBytes(Newlines::kKeep, Escape::kNone), PlainBytes(Newlines::kKeep, Escape::kHtml)},
    {PlainBytes(Newlines::kFlatten, Escape::kNone), PlainBytes(Newlines::kFlatten, Escape::kHtml)},
};

// The character reference of an HTML special byte, or null.
const char* HtmlReference(char c) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return "&quot;";
    case '\'':
      return "&#39;";
    default:
      return nullptr;
  }
}

}  // namespace

void AppendScrubbed(absl::string_view in, Newlines newlines, Escape escape, std::string* out) {
  const ByteSet& plain =
      kPlain[newlines == Newlines::kFlatten ? 1 : 0][escape == Escape::kHtml ? 1 : 0];
  out->reserve(out->size() + in.size());
  size_t i = 0;
  while (i < in.size()) {
    size_t end = i;
    while (end < in.size() && plain[static_cast<uint8_t>(in[end])]) ++end;
    out->append(in.data() + i, end - i);
    if (end == in.size()) return;
    i = end;
    if (const char* reference = escape == Escape::kHtml ? HtmlReference(in[i]) : nullptr) {
      *out += reference;
      ++i;
      continue;
    }
    // A control, '\n' or '\t' to flatten, or a non-ASCII character: nothing any of these becomes
    // is HTML markup.
    char32_t cp = 0;
    const size_t len = DecodeUtf8(in.substr(i), cp);
    if (len == 0) {
      *out += kUtf8Replacement;  // one per bad byte, so no good character after it is swallowed
      ++i;
      continue;
    }
    if (cp == '\n' || cp == '\t') {
      *out += newlines == Newlines::kKeep ? static_cast<char>(cp) : ' ';
    } else if (IsControl(cp) || IsBidiControl(cp)) {
      AppendVisibleEscape(cp, *out);
    } else {
      out->append(in.data() + i, len);
    }
    i += len;
  }
}

std::string ScrubUntrusted(absl::string_view in, Newlines newlines) {
  std::string out;
  AppendScrubbed(in, newlines, Escape::kNone, &out);
  return out;
}

}  // namespace cl

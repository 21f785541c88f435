// Makes an untrusted string (anything from an uploaded capture) safe to *display*: valid UTF-8,
// with the characters that change how surrounding text reads shown as visible escapes.
//
// This is not HTML escaping (html_escape.h builds on it); it is what both the HTML page and the
// terminal summary need before any byte of capture data reaches a reader:
//   - invalid UTF-8 (bad lead bytes, truncated or overlong sequences, surrogates) becomes U+FFFD,
//     so the page stays valid UTF-8 and nothing decodes differently in another reader;
//   - C0 controls, DEL and C1 controls (ESC starts terminal escape sequences) become "[U+001B]";
//   - bidirectional overrides, embeddings and isolates (U+202A-U+202E, U+2066-U+2069) become
//     "[U+202E]": they reorder what the reader sees ("Trojan Source", CVE-2021-42574).
#ifndef SERVICE_RENDER_UNTRUSTED_TEXT_H_
#define SERVICE_RENDER_UNTRUSTED_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cl {

enum class Newlines {
  kKeep,     // '\n' and '\t' pass through (HTML collapses them into spaces).
  kFlatten,  // '\n' and '\t' become a space: one terminal line stays one line.
};

enum class Escape {
  kNone,
  kHtml,  // & < > " ' also become character references (html_escape.h)
};

// Returns `in` as valid UTF-8 with controls and bidi overrides made visible (see above).
std::string ScrubUntrusted(absl::string_view in, Newlines newlines);

// The same, appended to `out`, with `escape`'s special characters escaped too: one pass, which
// copies the runs of printable ASCII (almost all of a log) whole.
void AppendScrubbed(absl::string_view in, Newlines newlines, Escape escape, std::string* out);

}  // namespace cl

#endif  // SERVICE_RENDER_UNTRUSTED_TEXT_H_

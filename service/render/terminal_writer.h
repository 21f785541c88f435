// TerminalWriter builds the terminal summary the way HtmlWriter builds the page: literal text
// from the renderer, and capture strings through one path that makes them inert. For a terminal
// that path is ScrubUntrusted with newlines flattened: an ESC from a capture cannot start an
// escape sequence, and a newline cannot forge a line of the summary.
#ifndef SERVICE_RENDER_TERMINAL_WRITER_H_
#define SERVICE_RENDER_TERMINAL_WRITER_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cl {

enum class Style { kPlain, kTitle, kGood, kWarn, kError, kMuted };

class TerminalWriter {
 public:
  // ANSI SGR colour codes are written only when `color` is true.
  explicit TerminalWriter(bool color) : color_(color) {}

  // Appends untrusted text, scrubbed.
  TerminalWriter& Text(absl::string_view untrusted);
  // Appends untrusted text in `style`.
  TerminalWriter& Styled(Style style, absl::string_view untrusted);
  TerminalWriter& EndLine();

  std::string Release();

 private:
  bool color_;
  std::string out_;
};

}  // namespace cl

#endif  // SERVICE_RENDER_TERMINAL_WRITER_H_

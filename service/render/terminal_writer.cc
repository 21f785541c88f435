#include "service/render/terminal_writer.h"

#include <utility>

#include "service/render/untrusted_text.h"

namespace cl {
namespace {

const char* StyleCode(Style style) {
  switch (style) {
    case Style::kTitle:
      return "\x1b[1m";
    case Style::kGood:
      return "\x1b[32m";
    case Style::kWarn:
      return "\x1b[33m";
    case Style::kError:
      return "\x1b[1;31m";
    case Style::kMuted:
      return "\x1b[2m";
    case Style::kPlain:
      break;
  }
  return "";
}

}  // namespace

TerminalWriter& TerminalWriter::Text(absl::string_view untrusted) {
  AppendScrubbed(untrusted, Newlines::kFlatten, Escape::kNone, &out_);
  return *this;
}

TerminalWriter& TerminalWriter::Styled(Style style, absl::string_view untrusted) {
  if (!color_ || style == Style::kPlain) return Text(untrusted);
  out_ += StyleCode(style);
  Text(untrusted);
  out_ += "\x1b[0m";
  return *this;
}

TerminalWriter& TerminalWriter::EndLine() {
  out_ += '\n';
  return *this;
}

std::string TerminalWriter::Release() { return std::exchange(out_, {}); }

}  // namespace cl

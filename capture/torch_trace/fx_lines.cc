#include "capture/torch_trace/fx_lines.h"

#include <algorithm>
#include <limits>

#include "absl/strings/ascii.h"
#include "capture/torch_trace/fx_text.h"

namespace cl::fx {

bool LineReader::Next(Line* line) {
  while (!rest_.empty()) {
    const Physical first = Take();
    if (first.body.empty()) continue;
    *line = Line{first.number, first.indent, first.body[0] == '#', false, false, first.body};
    if (line->comment) return true;
    // What Code() finds, found while indexing the line.
    int depth = 0;
    absl::string_view code;
    if (const size_t code_end = index_->Reset(first.body, /*to_comment=*/true); code_end == kNpos) {
      code = Code(first.body, &depth);
    } else {
      code = code_end == first.body.size()
                 ? first.body
                 : absl::StripTrailingAsciiWhitespace(first.body.substr(0, code_end));
      depth = static_cast<int>(
          std::min<size_t>(index_->open_brackets(), std::numeric_limits<int>::max()));
      line->indexed = depth == 0;
    }
    if (code.empty()) continue;
    line->text = code;
    if (depth == 0) {
      if (line->indexed) index_->Narrow(code);
      return true;
    }
    buffer_.assign(code.data(), code.size());
    while (depth > 0 && !rest_.empty()) {
      const Physical next = Peek();
      if (!next.body.empty() && next.body[0] != '#' && next.indent <= first.indent &&
          !IsClose(next.body[0])) {
        break;
      }
      Take();
      if (next.body.empty() || next.body[0] == '#') continue;
      const absl::string_view more = Code(next.body, &depth);
      if (more.empty()) continue;
      buffer_.push_back(' ');
      buffer_.append(more.data(), more.size());
    }
    line->unbalanced = depth > 0;
    line->text = buffer_;
    return true;
  }
  return false;
}

LineReader::Physical LineReader::Peek() const {
  Physical p;
  p.number = number_;
  const size_t nl = rest_.find('\n');
  absl::string_view raw = rest_.substr(0, nl);
  p.length = nl == kNpos ? rest_.size() : nl + 1;
  while (p.indent < raw.size() && (raw[p.indent] == ' ' || raw[p.indent] == '\t')) ++p.indent;
  p.body = absl::StripTrailingAsciiWhitespace(raw.substr(p.indent));
  return p;
}

LineReader::Physical LineReader::Take() {
  Physical p = Peek();
  rest_.remove_prefix(p.length);
  ++number_;
  return p;
}

absl::string_view LineReader::Code(absl::string_view body, int* depth) {
  for (size_t i = 0; i < body.size(); ++i) {
    const uint8_t cls = ClassOf(body[i]);
    if (cls == kPlain) continue;
    if (cls == kQuote) {
      i = LiteralEnd(body, i);
      if (i == kNpos) return body;  // an unterminated literal ends with its line
    } else if (cls == kHash) {
      return absl::StripTrailingAsciiWhitespace(body.substr(0, i));
    } else if (cls == kOpen) {
      ++*depth;
    } else if (*depth > 0) {
      --*depth;
    }
  }
  return body;
}

}  // namespace cl::fx

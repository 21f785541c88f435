// The logical lines of FX's printed Python, for the FX text parser (fx_graph.h).
#ifndef CAPTURE_TORCH_TRACE_FX_LINES_H_
#define CAPTURE_TORCH_TRACE_FX_LINES_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "capture/torch_trace/fx_scan.h"

namespace cl::fx {

struct Line {
  size_t number = 0;        // of its first physical line, 1-based
  size_t indent = 0;        // of its first physical line
  bool comment = false;     // a comment line: `text` starts with '#'
  bool unbalanced = false;  // it opens brackets it never closes
  bool indexed = false;     // the reader's StatementIndex holds `text` (a one-line statement)
  // The code without indentation, trailing comment or trailing space; a statement spread over
  // several physical lines (open brackets) is joined with single spaces.
  absl::string_view text;
};

// Cuts the text into logical lines the way Python does (a statement continues while brackets are
// open), skipping blank lines. A continuation line indented no deeper than the statement's first
// line, that does not start by closing a bracket, starts a new statement instead: that keeps one
// unbalanced bracket in cut-off or hostile text from swallowing the rest of the graph.
class LineReader {
 public:
  // The statements are indexed into `index` as they are cut: a one-line statement (almost all of
  // them) is then read in one pass.
  LineReader(absl::string_view text, StatementIndex* index) : rest_(text), index_(index) {}

  // The next logical line; false at the end. `line->text` is valid until the next call.
  bool Next(Line* line);

 private:
  struct Physical {
    size_t number = 0;
    size_t indent = 0;
    absl::string_view body;  // after the indentation, without a trailing '\r' or spaces
    size_t length = 0;       // bytes to consume, newline included
  };

  Physical Peek() const;
  Physical Take();
  // The code part of one physical line (before a comment), tracking the bracket depth across
  // lines. Strings cannot span lines, so an unterminated one ends with its line.
  static absl::string_view Code(absl::string_view body, int* depth);

  absl::string_view rest_;
  StatementIndex* index_;
  size_t number_ = 1;
  std::string buffer_;  // a statement joined from several physical lines
};

}  // namespace cl::fx

#endif  // CAPTURE_TORCH_TRACE_FX_LINES_H_

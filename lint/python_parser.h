// Parses Python source with tree-sitter (Debian's libtree-sitter 0.20.7 and the
// tree-sitter-python 0.23.6 grammar the build compiles) into a SyntaxTree.
//
// Hostile input is the normal case here: capture sources come from users' machines. Invalid UTF-8
// is repaired first (bad bytes become U+FFFD), files over a size limit are not parsed, each parse
// runs under a time budget (ts_parser_set_timeout_micros), and nesting past SyntaxTree::kMaxDepth
// is cut. Each of those, and every syntax error tree-sitter recovered from, becomes a diagnostic;
// whatever did parse is still scanned.
#ifndef LINT_PYTHON_PARSER_H_
#define LINT_PYTHON_PARSER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lint/syntax_tree.h"

struct TSParser;

namespace cl::lint {

// What one file may cost the scan. A file over either size is not scanned (the report says so):
// the largest hand-written modules of public model code are a few thousand lines, and the scan's
// time grows with the file (bench/README.md has the figures).
struct ParseLimits {
  size_t max_bytes = size_t{4} << 20;
  uint32_t max_lines = 100'000;
  // The parse's time budget; 0: 2 s plus 1 s per MiB of source, many times what tree-sitter takes
  // to parse it (bench/README.md), so that a real file never comes near it.
  uint64_t timeout_micros = 0;
};

struct SourceDiagnostic {
  uint32_t line = 0;  // 0: the whole file
  std::string message;
};

struct ParsedSource {
  SyntaxTree tree;  // empty when nothing could be parsed
  std::vector<SourceDiagnostic> diagnostics;
  uint32_t lines = 0;  // lines in the source
  bool has_errors = false;
};

// One tree-sitter parser, reused across files. Not thread-safe; cheap to create.
class PythonParser {
 public:
  PythonParser();
  ~PythonParser();
  PythonParser(const PythonParser&) = delete;
  PythonParser& operator=(const PythonParser&) = delete;

  ParsedSource Parse(absl::string_view text, const ParseLimits& limits = {});

 private:
  struct Deleter {
    void operator()(TSParser* p) const;
  };
  std::unique_ptr<TSParser, Deleter> parser_;
};

}  // namespace cl::lint

#endif  // LINT_PYTHON_PARSER_H_

// The static scan end to end: parse each source, index it, find the compiled region across the
// files, run every pattern's detector, drop suppressed findings, and rate the rest against the
// correctness DB when there is one (severity, escalation rules, assume-compiled lowering, version
// gating, issue links). Pure: no I/O, deterministic output order.
#ifndef LINT_LINTER_H_
#define LINT_LINTER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lint/correctness_db.h"
#include "lint/parse_cache.h"
#include "lint/python_parser.h"
#include "lint/scope.h"

namespace cl::lint {

struct LintSource {
  std::string path;  // as the capture names it
  absl::string_view text;
};

struct LintOptions {
  const CorrectnessDb* db = nullptr;  // null: candidates, not rated
  std::string torch_version;  // the capture's; gates DB entries by fixed_in / affected_versions
  std::vector<CompiledFrame> frames;  // roots the capture knows of
  ParseLimits limits;
  // The source one scan reads in all: files past it are not scanned (each says so), so a session
  // of many files within `limits` still costs a bounded time (a 100,000-line file, the most
  // `limits` allow, is about 2.6 MB and 1 s; bench/README.md).
  uint64_t max_total_bytes = uint64_t{8} << 20;
  const std::atomic<bool>* cancelled = nullptr;
  ParseCache* cache = nullptr;  // parsed files kept across scans; null: parse every file
};

struct Finding {
  std::string pattern;
  std::string file;
  uint32_t line = 0;
  std::string snippet;  // the triggering source, one line
  std::string message;
  std::string function;  // "Scene.forward"; empty at module level
  std::string form;      // the detector's sub-form
  bool assumed_compiled = false;
  std::string remedy;
  // Rated (a DB was given):
  Severity severity = Severity::kNone;
  std::string title;
  std::string category;
  std::string version_note;
  std::vector<std::string> links;
  double confidence = 0;  // the DB's precision estimate for the pattern
};

struct LintDiagnostic {
  std::string file;
  uint32_t line = 0;
  std::string message;
};

struct RootInfo {
  std::string file;
  uint32_t line = 0;
  std::string function;
  std::string why;
};

struct LintResult {
  std::vector<Finding> findings;
  std::vector<LintDiagnostic> diagnostics;
  std::vector<RootInfo> roots;
  std::vector<std::string> assumed_files;  // scanned as if compiled
  uint32_t files = 0;
  uint64_t lines = 0;
  uint32_t suppressed = 0;
  bool cancelled = false;
};

LintResult Lint(const std::vector<LintSource>& sources, const LintOptions& options);

}  // namespace cl::lint

#endif  // LINT_LINTER_H_

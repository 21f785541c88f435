// The lint pass: a static scan of the captured Python sources for patterns known to break compiled
// correctness (docs/design.md §5.5; the scan itself is lint/).
//
// It reads SessionCapture.sources (the files the trace's stacks name), the compiled frames (extra
// roots of the compiled region), the session's torch version (version gating) and the graph
// breaks (a finding where the capture recorded a break gets it as its `trigger`). Without a
// correctness DB the findings are candidates; with one (the request's, else the server's) each
// carries a severity, remedy and issue links. Parse problems become report diagnostics. The DB is
// the pass's one setting: Prepare parses AnalyzeOptions.correctness_db (the text of a
// correctness.toml) into PassOptions.correctness_db.
//
// The pass keeps the files it parsed (lint/parse_cache.h; by default at most 256 files and 4 MiB of
// their text, whose trees and indexes take many times that: bench/README.md) for the sessions that
// send them again: its results do not change, only how often tree-sitter runs. The cache is the
// process's (LintParseCache()): cl-server sizes it from its flags.
#ifndef ANALYZERS_LINT_LINT_H_
#define ANALYZERS_LINT_LINT_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analyzers/pass.h"
#include "lint/parse_cache.h"

namespace cl {

// The files every LintPass in the process keeps, bounded by default to these.
inline constexpr size_t kLintCacheFiles = 256;
inline constexpr size_t kLintCacheBytes = 4 << 20;  // of source text
lint::ParseCache& LintParseCache();

class LintPass : public Pass {
 public:
  absl::string_view Name() const override { return "lint"; }
  absl::string_view Section() const override { return "lint"; }
  // The request's correctness DB, when it carries one, replaces the server's; INVALID_ARGUMENT
  // naming the line when it does not parse.
  absl::Status Prepare(const v1::AnalyzeOptions& request, PassOptions* options) const override;
  // SKIPPED when the capture holds no source files.
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override;
};

}  // namespace cl

#endif  // ANALYZERS_LINT_LINT_H_

#include "analyzers/lint/lint.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzers/common/location.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "lint/correctness_db.h"
#include "lint/linter.h"

namespace cl {
namespace {

v1::LintFinding::Severity ReportSeverity(lint::Severity severity) {
  switch (severity) {
    case lint::Severity::kError:
      return v1::LintFinding::ERROR;
    case lint::Severity::kWarning:
      return v1::LintFinding::WARNING;
    case lint::Severity::kInfo:
      return v1::LintFinding::INFO;
    case lint::Severity::kNone:
      break;
  }
  return v1::LintFinding::UNRATED;
}

// The first line of a graph-break reason, short enough for a table cell.
std::string ShortReason(absl::string_view reason) {
  return ClipUtf8(reason.substr(0, reason.find('\n')), 120);
}

}  // namespace

lint::ParseCache& LintParseCache() {
  static lint::ParseCache* const cache = new lint::ParseCache(kLintCacheFiles, kLintCacheBytes);
  return *cache;
}

absl::Status LintPass::Prepare(const v1::AnalyzeOptions& request, PassOptions* options) const {
  if (request.correctness_db().empty()) return absl::OkStatus();  // the server's, if it has one
  CL_ASSIGN_OR_RETURN(lint::CorrectnessDb db, lint::CorrectnessDb::Parse(request.correctness_db()));
  options->correctness_db = std::make_shared<const lint::CorrectnessDb>(std::move(db));
  return absl::OkStatus();
}

absl::Status LintPass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  v1::LintSection* section = out->mutable_lint();
  if (in.head.sources().empty()) {
    section->set_status(v1::SKIPPED);
    section->set_reason(
        "no source files in the capture (compile_lens.record_sources(), or import the trace where "
        "its files are readable)");
    return absl::OkStatus();
  }

  lint::LintOptions options;
  const lint::CorrectnessDb* const db = in.options.correctness_db.get();
  options.db = db;
  options.torch_version = in.head.session().torch_version();
  options.cancelled = in.cancelled;
  options.cache = &LintParseCache();
  for (const v1::Frame& frame : in.head.frames()) {
    options.frames.push_back({frame.file(), frame.name(), frame.line()});
  }
  std::vector<lint::LintSource> sources;
  sources.reserve(in.head.sources_size());
  for (const v1::SourceFile& file : in.head.sources())
    sources.push_back({file.path(), file.text()});

  lint::LintResult result = lint::Lint(sources, options);
  if (result.cancelled || in.Cancelled())
    return absl::CancelledError("the lint pass was cancelled");

  // Graph breaks the capture recorded, by the breaking frame's place: a finding there has a
  // trigger.
  absl::flat_hash_map<std::pair<std::string, uint32_t>, std::string> breaks;
  for (const v1::Compile& compile : in.head.compiles()) {
    for (const v1::GraphBreak& brk : compile.graph_breaks()) {
      if (brk.user_stack().empty()) continue;
      const v1::StackFrame& at = brk.user_stack(brk.user_stack_size() - 1);
      breaks.emplace(std::make_pair(at.file(), at.line()), brk.reason());
    }
  }

  const v1::Session& session = in.head.session();
  section->set_status(v1::OK);
  section->set_escalated(db != nullptr);
  if (db != nullptr) section->set_db_updated(db->updated());
  section->set_files_scanned(result.files);
  section->set_lines_scanned(static_cast<uint32_t>(std::min<uint64_t>(result.lines, UINT32_MAX)));
  section->set_suppressed(result.suppressed);
  if (db != nullptr) {
    // The most serious first; unrated findings (patterns the DB does not list) last.
    std::stable_sort(
        result.findings.begin(), result.findings.end(),
        [](const lint::Finding& a, const lint::Finding& b) { return a.severity > b.severity; });
  }
  for (lint::Finding& f : result.findings) {
    v1::LintFinding* finding = section->add_findings();
    finding->set_pattern(f.pattern);
    *finding->mutable_location() = MakeLocation(session, f.file, f.line);
    if (auto it = breaks.find(std::make_pair(f.file, f.line)); it != breaks.end()) {
      finding->set_trigger(absl::StrCat("graph break: ", ShortReason(it->second)));
    }
    finding->set_confidence("ast_match");
    finding->set_severity(ReportSeverity(f.severity));
    for (std::string& link : f.links) finding->add_links(std::move(link));
    finding->set_snippet(std::move(f.snippet));
    finding->set_message(std::move(f.message));
    finding->set_function(std::move(f.function));
    finding->set_remedy(std::move(f.remedy));
    finding->set_title(std::move(f.title));
    finding->set_category(std::move(f.category));
    finding->set_confidence_score(f.confidence);
    finding->set_assumed_compiled(f.assumed_compiled);
    finding->set_version_note(std::move(f.version_note));
    finding->set_form(std::move(f.form));
  }
  for (const lint::RootInfo& root : result.roots) {
    v1::LintRoot* r = section->add_roots();
    *r->mutable_location() = MakeLocation(session, root.file, root.line);
    r->set_function(root.function);
    r->set_why(root.why);
  }
  for (const std::string& file : result.assumed_files) {
    section->add_assumed_files(RelativeToProjectRoot(session.project_root(), file));
  }
  for (const lint::LintDiagnostic& d : result.diagnostics) {
    v1::Diagnostic* diagnostic = out->add_diagnostics();
    diagnostic->set_severity(v1::Diagnostic::WARNING);
    const std::string file = RelativeToProjectRoot(session.project_root(), d.file);
    diagnostic->set_where(d.line > 0 ? absl::StrCat("lint ", file, ":", d.line)
                                     : absl::StrCat("lint ", file));
    diagnostic->set_message(d.message);
  }
  return absl::OkStatus();
}

}  // namespace cl

#include "service/analysis.h"

#include "absl/strings/str_cat.h"
#include "common/number_format.h"
#include "common/status_macros.h"
#include "lint/linter.h"
#include "lint/python_parser.h"
#include "service/render/render.h"

namespace cl {

std::string AnalysisLimitsText() {
  const lint::ParseLimits file;
  // Three lines, as the help texts around it are wrapped.
  return absl::StrCat("A string longer than ", FormatBytes(kMaxReportStringBytes),
                      " (a frame name, a recompile reason) comes back clipped in the report,\n"
                      "saying its full length; the lint pass skips a source file over ",
                      FormatBytes(file.max_bytes), " or ",
                      FormatCount(file.max_lines, "line", "lines"), ", and the\nfiles past ",
                      FormatBytes(lint::LintOptions().max_total_bytes),
                      " of source in one session, naming each in the report's diagnostics.");
}

absl::StatusOr<v1::AnalyzeResponse> RunAnalysis(const Engine& engine, CaptureRefs captures,
                                                const v1::AnalyzeOptions& options,
                                                const std::atomic<bool>* cancelled) {
  CL_ASSIGN_OR_RETURN(EngineResult result,
                      engine.Analyze(*captures.head, captures.base, options, cancelled));
  // A call cancelled (or past its deadline) while the passes ran is not rendered for nobody.
  const auto stop = [cancelled] { return cancelled != nullptr && cancelled->load(); };
  v1::AnalyzeResponse response;
  if (options.render_html() && !stop()) response.set_html(RenderHtml(result.report));
  if (options.render_text() && !stop())
    response.set_text(RenderText(result.report, /*color=*/false));
  if (stop()) return absl::CancelledError("the analysis was cancelled");
  *response.mutable_report() = std::move(result.report);
  for (v1::PassTiming& t : result.timings) *response.add_timings() = std::move(t);
  return response;
}

}  // namespace cl

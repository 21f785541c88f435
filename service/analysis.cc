#include "service/analysis.h"

#include "common/status_macros.h"
#include "service/render/render.h"

namespace cl {

absl::StatusOr<v1::AnalyzeResponse> RunAnalysis(const Engine& engine, CaptureRefs captures,
                                                const v1::AnalyzeOptions& options,
                                                const std::atomic<bool>* cancelled) {
  CL_ASSIGN_OR_RETURN(EngineResult result,
                      engine.Analyze(*captures.head, captures.base, options, cancelled));
  v1::AnalyzeResponse response;
  if (options.render_html()) response.set_html(RenderHtml(result.report));
  if (options.render_text()) response.set_text(RenderText(result.report, /*color=*/false));
  *response.mutable_report() = std::move(result.report);
  for (v1::PassTiming& t : result.timings) *response.add_timings() = std::move(t);
  return response;
}

}  // namespace cl

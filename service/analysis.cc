#include "service/analysis.h"

#include "absl/strings/str_cat.h"
#include "common/number_format.h"
#include "common/status_macros.h"
#include "lint/linter.h"
#include "lint/python_parser.h"
#include "service/render/html_site.h"
#include "service/render/render.h"

namespace cl {
namespace {

// Collects the site into the response, up to kMaxSiteBytes.
class ResponseSink : public SiteSink {
 public:
  explicit ResponseSink(v1::AnalyzeResponse* response) : response_(response) {}
  absl::Status Write(const std::string& path, absl::string_view content) override {
    bytes_ += path.size() + content.size();
    if (bytes_ > kMaxSiteBytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the site is over ", FormatBytes(kMaxSiteBytes), " (",
          FormatCount(response_->site_size(), "file", "files"),
          " so far); render it from the capture instead: cl-client analyze LOG --html-dir DIR "
          "(without --raw)"));
    }
    v1::SiteFile* file = response_->add_site();
    file->set_path(path);
    file->set_content(std::string(content));
    return absl::OkStatus();
  }

 private:
  v1::AnalyzeResponse* response_;
  uint64_t bytes_ = 0;
};

}  // namespace

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
  CL_ASSIGN_OR_RETURN(EngineResult result, engine.Analyze(*captures.head, captures.base, options,
                                                          cancelled, captures.head_lowered));
  // A call cancelled (or past its deadline) while the passes ran is not rendered for nobody.
  const auto stop = [cancelled] { return cancelled != nullptr && cancelled->load(); };
  v1::AnalyzeResponse response;
  if (options.render_html() && !stop()) response.set_html(RenderHtml(result.report));
  if (options.render_text() && !stop())
    response.set_text(RenderText(result.report, /*color=*/false));
  if (stop()) return absl::CancelledError("the analysis was cancelled");
  if (options.render_site()) {
    ResponseSink sink(&response);
    if (absl::Status s = RenderHtmlSite(*captures.head, result.report, sink); !s.ok()) {
      response.clear_site();
      response.set_site_error(std::string(s.message()));
    }
    if (stop()) return absl::CancelledError("the analysis was cancelled");
  }
  *response.mutable_report() = std::move(result.report);
  for (v1::PassTiming& t : result.timings) *response.add_timings() = std::move(t);
  return response;
}

}  // namespace cl

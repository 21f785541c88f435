// The page frame every HTML page shares (the report page, the site's pages): the head with its
// CSP and style sheet, and the collapsible sections. Internal to the renderer.
#ifndef SERVICE_RENDER_HTML_PAGE_H_
#define SERVICE_RENDER_HTML_PAGE_H_

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/report.pb.h"
#include "service/render/html_writer.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// "<!DOCTYPE html>…<head>…</head>\n": the CSP allows only the inline style sheet (no script, no
// external resource), so even markup that slipped through could neither run nor load anything.
void WritePageHead(absl::string_view title, HtmlWriter& w);

// "<details open id=…><summary><h2>title</h2></summary><div class="body">" … and its end.
void OpenSection(Markup id, Markup title, HtmlWriter& w);
void OpenFoldedSection(Markup id, Markup title, HtmlWriter& w);  // starts closed
void CloseSection(HtmlWriter& w);

// The report page (html.h) with `more` written after the analysis sections, before Raw artifacts:
// the site's index (html_site.h).
std::string RenderHtmlWith(const v1::AnalysisReport& report,
                           absl::FunctionRef<void(HtmlWriter&)> more);

}  // namespace cl

#endif  // SERVICE_RENDER_HTML_PAGE_H_

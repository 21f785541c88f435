// A short Markdown summary of a report, for a pull-request comment or $GITHUB_STEP_SUMMARY
// (cl-client --markdown): the gates' outcome, the compile-health table, the graph breaks new since
// the base, the verdict's top findings, and links to the HTML reports when they were written.
#ifndef SERVICE_RENDER_MARKDOWN_H_
#define SERVICE_RENDER_MARKDOWN_H_

#include <string>

#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

struct MarkdownLinks {
  std::string html;  // the self-contained report, as the reader reaches it (a path or URL)
  std::string site;  // the site's index.html
};

// Capture strings are escaped: none can open a link, an image, raw HTML or a table cell.
std::string RenderMarkdown(const v1::AnalysisReport& report, const MarkdownLinks& links);

// `in` as literal Markdown text on one line (exposed for the tests).
std::string MarkdownText(absl::string_view in);

}  // namespace cl

#endif  // SERVICE_RENDER_MARKDOWN_H_

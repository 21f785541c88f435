// The report page (docs/design.md §6). Layers, as in pprof: the model (report.proto) → this
// page, with the terminal summary (text.h) and the JSON report (json.h) as sibling renderings.
#ifndef SERVICE_RENDER_HTML_H_
#define SERVICE_RENDER_HTML_H_

#include <string>

#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// One self-contained HTML page in seed/hero.html's structure and wording: no scripts, no
// external resources, a CSP that allows only the inline style sheet, light and dark colour
// schemes. Every string in the report is treated as untrusted (it comes from an uploaded
// capture) and escaped; a section that was skipped or failed shows why.
std::string RenderHtml(const v1::AnalysisReport& report);

}  // namespace cl

#endif  // SERVICE_RENDER_HTML_H_

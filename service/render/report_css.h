// The report page's style sheet: service/render/report.css, embedded into the binary at build
// time (embed_text.cmake generates report_css.cc), so a page is self-contained and the CSS stays
// a real file that editors and linters understand.
#ifndef SERVICE_RENDER_REPORT_CSS_H_
#define SERVICE_RENDER_REPORT_CSS_H_

#include "service/render/markup.h"

namespace cl {

// A Markup: the style sheet is a build-time constant of this program, not run-time text.
Markup ReportCss();

}  // namespace cl

#endif  // SERVICE_RENDER_REPORT_CSS_H_

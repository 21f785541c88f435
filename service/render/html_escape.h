// The one escaping path for HTML. Every run-time string that reaches the report page, as element
// text or as an attribute value, passes through EscapeHtml (HtmlWriter calls it; nothing else
// writes run-time text into the page).
#ifndef SERVICE_RENDER_HTML_ESCAPE_H_
#define SERVICE_RENDER_HTML_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cl {

// Scrubs `untrusted` (untrusted_text.h) and escapes & < > " ' as character references, so the
// result is inert both as element content and inside a double- or single-quoted attribute.
std::string EscapeHtml(absl::string_view untrusted);
// The same, appended to `out` (no string in between: the site escapes megabytes of log text).
void AppendEscapedHtml(absl::string_view untrusted, std::string* out);

}  // namespace cl

#endif  // SERVICE_RENDER_HTML_ESCAPE_H_

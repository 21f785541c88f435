// HtmlWriter builds the report page so that markup can come only from the renderer's own source
// and every run-time string is escaped: the page's whole defence against hostile captures.
//
//   w.Tag("<tr><td><code>").Text(change.node()).Tag("</code></td></tr>\n");
//
// Tag() takes a Markup (markup.h), which only a literal in the source can become, so a capture
// string handed to Tag() does not compile. Text() and the attribute value in Link() go
// through EscapeHtml, the one escaping function. The writer keeps no element stack: the section
// renderers are straight-line code whose nesting is visible at a glance, and the tests parse the
// result in a real browser.
#ifndef SERVICE_RENDER_HTML_WRITER_H_
#define SERVICE_RENDER_HTML_WRITER_H_

#include <initializer_list>
#include <string>

#include "absl/strings/string_view.h"
#include "service/render/markup.h"

namespace cl {

class HtmlWriter {
 public:
  // Appends markup from the renderer's source.
  HtmlWriter& Tag(Markup markup);
  // Appends untrusted text, escaped.
  HtmlWriter& Text(absl::string_view untrusted);
  // Appends untrusted prose in which `spans` between backticks become <code> elements, the
  // convention the analyzers use to mark identifiers in their remedy texts. A lone backtick
  // stays a backtick.
  HtmlWriter& TextWithCode(absl::string_view untrusted);
  // Appends a link for an http(s) URL. Any other scheme (javascript:, data:, file:) is written
  // as plain text instead: an issue link from a correctness DB is data, never behaviour.
  HtmlWriter& Link(absl::string_view untrusted_url);

  // The seed's table layout: "<table>\n<thead><tr><th>a</th>…</tr></thead>\n<tbody>\n" … and
  // "</tbody>\n</table>\n". Rows in between are written with Tag/Text.
  HtmlWriter& BeginTable(std::initializer_list<Markup> headers);
  HtmlWriter& EndTable();

  // The page so far; the writer is empty afterwards.
  std::string Release();

 private:
  std::string out_;
};

}  // namespace cl

#endif  // SERVICE_RENDER_HTML_WRITER_H_

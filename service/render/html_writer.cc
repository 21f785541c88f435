#include "service/render/html_writer.h"

#include <utility>

#include "absl/strings/match.h"
#include "service/render/html_escape.h"

namespace cl {

HtmlWriter& HtmlWriter::Tag(Markup markup) {
  out_.append(markup.view().data(), markup.view().size());
  return *this;
}

HtmlWriter& HtmlWriter::Text(absl::string_view untrusted) {
  AppendEscapedHtml(untrusted, &out_);
  return *this;
}

HtmlWriter& HtmlWriter::TextWithCode(absl::string_view untrusted) {
  while (!untrusted.empty()) {
    const size_t open = untrusted.find('`');
    const size_t close = open == absl::string_view::npos ? open : untrusted.find('`', open + 1);
    if (close == absl::string_view::npos) break;
    Text(untrusted.substr(0, open));
    Tag("<code>").Text(untrusted.substr(open + 1, close - open - 1)).Tag("</code>");
    untrusted.remove_prefix(close + 1);
  }
  return Text(untrusted);
}

HtmlWriter& HtmlWriter::Link(absl::string_view untrusted_url) {
  const bool web = absl::StartsWithIgnoreCase(untrusted_url, "https://") ||
                   absl::StartsWithIgnoreCase(untrusted_url, "http://");
  if (!web) return Text(untrusted_url);
  // rel=noreferrer: opening an issue link must not tell the tracker where the report lives.
  return Tag("<a rel=\"noreferrer\" href=\"")
      .Text(untrusted_url)
      .Tag("\">")
      .Text(untrusted_url)
      .Tag("</a>");
}

HtmlWriter& HtmlWriter::BeginTable(std::initializer_list<Markup> headers) {
  Tag("<table>\n<thead><tr>");
  for (const Markup header : headers) Tag("<th>").Tag(header).Tag("</th>");
  return Tag("</tr></thead>\n<tbody>\n");
}

HtmlWriter& HtmlWriter::EndTable() { return Tag("</tbody>\n</table>\n"); }

std::string HtmlWriter::Release() { return std::exchange(out_, {}); }

}  // namespace cl

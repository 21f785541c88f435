#include "service/render/html_fragments.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/number_format.h"
#include "service/render/location_format.h"

namespace cl {

std::string CauseWords(absl::string_view cause) { return absl::StrReplaceAll(cause, {{"_", " "}}); }

absl::string_view OrDash(absl::string_view value) { return value.empty() ? "—" : value; }

void WriteCodeLocation(const v1::Location& location, HtmlWriter& w) {
  w.Tag("<code>").Text(FormatLocation(location, LocationStyle::kPage)).Tag("</code>");
}

void WriteMetaRow(Markup term, absl::string_view value, HtmlWriter& w) {
  w.Tag("<dt>").Tag(term).Tag("</dt><dd>").Text(OrDash(value)).Tag("</dd>");
}

void WriteOmittedRows(int total, HtmlWriter& w) {
  if (total <= kMaxTableRows) return;
  w.Tag("<p class=\"muted\">… and ")
      .Text(FormatCount(total - kMaxTableRows, "more row", "more rows"))
      .Tag(" in the JSON report.</p>\n");
}

void WriteSuggestions(const google::protobuf::RepeatedPtrField<v1::Suggestion>& suggestions,
                      HtmlWriter& w) {
  if (suggestions.empty()) return;
  w.Tag("<h3>Top suggestions</h3>\n<ol>\n");
  for (const v1::Suggestion& suggestion : suggestions) {
    w.Tag("<li>").Text(suggestion.text());
    if (!suggestion.evidence().empty()) {
      w.Tag("<br><span class=\"muted\">evidence: ").Text(suggestion.evidence()).Tag("</span>");
    }
    w.Tag("</li>\n");
  }
  w.Tag("</ol>\n");
}

}  // namespace cl

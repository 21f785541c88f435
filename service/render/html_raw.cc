// Raw artifacts (the capture's counts) and the diagnostics the import and validation recorded.
#include "absl/strings/str_cat.h"
#include "common/number_format.h"
#include "proto/report_words.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {

void WriteRawBody(const v1::RawSection& raw, HtmlWriter& w) {
  w.Tag("<dl class=\"meta\">");
  WriteMetaRow("schema", raw.schema(), w);
  WriteMetaRow("recompilations", absl::StrCat(raw.recompilations()), w);
  WriteMetaRow("compiled graphs", absl::StrCat(raw.compiled_graphs()), w);
  if (raw.empty_graphs() > 0) WriteMetaRow("empty graphs", absl::StrCat(raw.empty_graphs()), w);
  WriteMetaRow("graph breaks", absl::StrCat(raw.graph_breaks()), w);
  WriteMetaRow("iterations", absl::StrCat(raw.iterations()), w);
  w.Tag(
      "</dl><p class=\"muted\">The machine-readable <code>.cls.json</code> is the source of "
      "truth for this report.</p>");
}

void WriteDiagnosticsBody(const google::protobuf::RepeatedPtrField<v1::Diagnostic>& diagnostics,
                          HtmlWriter& w) {
  w.Tag("<p class=\"muted\">")
      .Text(FormatCount(diagnostics.size(), "import or validation note",
                        "import or validation notes"))
      .Tag(", recorded rather than dropped.</p>\n");
  w.BeginTable({"severity", "where", "message"});
  for (int i = 0; i < ShownRows(diagnostics.size()); ++i) {
    const v1::Diagnostic& d = diagnostics[i];
    const bool serious =
        d.severity() == v1::Diagnostic::WARNING || d.severity() == v1::Diagnostic::ERROR;
    if (serious) {
      w.Tag("<tr><td class=\"warn\">");
    } else {
      w.Tag("<tr><td>");
    }
    w.Text(OrDash(Word(d.severity()))).Tag("</td><td><code>");
    w.Text(OrDash(d.where())).Tag("</code></td><td>").Text(OrDash(d.message()));
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(diagnostics.size(), w);
}

}  // namespace cl

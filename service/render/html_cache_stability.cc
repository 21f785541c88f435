// Cache stability: compiled artifacts that silently went stale (state changed, no recompile
// followed, and the output diverged from eager).
#include "absl/strings/str_cat.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {

void WriteCacheStabilityBody(const v1::CacheStabilitySection& section, HtmlWriter& w) {
  const auto& findings = section.findings();
  if (findings.empty()) {
    w.Tag("<p class=\"good\">No silently-stale-cache findings — recompilation tracked the state "
          "changes.</p>");
    return;
  }
  w.Tag("<p class=\"warn\"><strong>")
      .Text(absl::StrCat(findings.size()))
      .Tag("</strong> silently-stale-cache finding(s): the state changed between iterations, no "
           "recompile followed, and the output diverged from eager.</p>\n");
  w.BeginTable({"state", "iteration", "cache entry that ran", "evidence"});
  for (int i = 0; i < ShownRows(findings.size()); ++i) {
    const v1::CacheStabilityFinding& finding = findings[i];
    w.Tag("<tr><td><code>").Text(OrDash(finding.state_key())).Tag("</code></td><td>");
    w.Text(absl::StrCat(finding.iteration())).Tag("</td><td><code>");
    w.Text(OrDash(finding.compile_id())).Tag("</code></td><td>").Text(OrDash(finding.evidence()));
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(findings.size(), w);
}

}  // namespace cl

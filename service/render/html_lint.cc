// Lint: source patterns known to break compiled correctness. Without a correctness DB the
// findings are candidates; with one they carry a severity and issue links.
#include "absl/strings/str_cat.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {
namespace {

void WriteLinks(const v1::LintFinding& finding, HtmlWriter& w) {
  if (finding.links().empty()) {
    w.Text("—");
    return;
  }
  for (int i = 0; i < finding.links().size(); ++i) {
    if (i > 0) w.Tag("<br>");
    w.Link(finding.links(i));
  }
}

}  // namespace

void WriteLintBody(const v1::LintSection& section, HtmlWriter& w) {
  const auto& findings = section.findings();
  if (findings.empty()) {
    if (section.escalated()) {
      w.Tag("<p class=\"good\">No known-risky pattern in the captured sources (checked against "
            "the correctness DB).</p>");
    } else {
      w.Tag("<p class=\"good\">No known-risky pattern in the captured sources.</p>");
    }
    return;
  }
  if (section.escalated()) {
    w.Tag("<p class=\"warn\">")
        .Text(absl::StrCat(findings.size()))
        .Tag(" pattern(s) from the static scan, rated against the correctness DB.</p>\n");
    w.BeginTable({"pattern", "location", "trigger", "confidence", "severity", "links"});
  } else {
    w.Tag("<p class=\"warn\">")
        .Text(absl::StrCat(findings.size()))
        .Tag(" candidate pattern(s) from the static scan — not yet escalated. Pass <code>--db "
             "&lt;correctness.toml&gt;</code> to rate severity and attach issue links.</p>\n");
    w.BeginTable({"pattern", "location", "trigger", "confidence"});
  }
  for (int i = 0; i < ShownRows(findings.size()); ++i) {
    const v1::LintFinding& finding = findings[i];
    w.Tag("<tr><td><code>").Text(OrDash(finding.pattern())).Tag("</code></td><td>");
    WriteCodeLocation(finding.location(), w);
    w.Tag("</td><td><code>").Text(OrDash(finding.trigger())).Tag("</code></td><td>");
    w.Text(OrDash(finding.confidence())).Tag("</td>");
    if (section.escalated()) {
      w.Tag("<td>").Text(OrDash(finding.severity())).Tag("</td><td>");
      WriteLinks(finding, w);
      w.Tag("</td>");
    }
    w.Tag("</tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(findings.size(), w);
}

}  // namespace cl

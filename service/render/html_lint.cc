// Lint: source patterns known to break compiled correctness. Without a correctness DB the
// findings are candidates; with one they carry a severity and issue links.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/number_format.h"
#include "proto/report_words.h"
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

// What the table does not say, each only when there is something to say: the remedy of each
// rated pattern, why a rated finding's severity moved, findings in assumed-compiled files, and
// suppressed findings. (The seed's unrated hero has none of these.)
void WriteLintNotes(const v1::LintSection& section, HtmlWriter& w) {
  const auto& findings = section.findings();
  if (section.escalated()) {
    std::vector<std::string> seen;
    for (const v1::LintFinding& f : findings) {
      if (f.remedy().empty() || std::find(seen.begin(), seen.end(), f.pattern()) != seen.end())
        continue;
      seen.push_back(f.pattern());
      w.Tag("<p><strong>Remedy</strong> <code>")
          .Text(f.pattern())
          .Tag("</code>: ")
          .TextWithCode(f.remedy());
      w.Tag("</p>\n");
    }
    for (int i = 0; i < ShownRows(findings.size()); ++i) {  // the rows the table shows
      const v1::LintFinding& f = findings[i];
      if (f.version_note().empty()) continue;
      w.Tag("<p class=\"muted\"><code>").Text(f.pattern()).Tag("</code> at ");
      WriteCodeLocation(f.location(), w);
      w.Tag(": ").Text(f.version_note()).Tag("</p>\n");
    }
  }
  const int assumed = static_cast<int>(
      std::count_if(findings.begin(), findings.end(),
                    [](const v1::LintFinding& f) { return f.assumed_compiled(); }));
  if (assumed > 0) {
    w.Tag("<p class=\"muted\">").Text(FormatCount(assumed, "finding", "findings"));
    w.Tag(" in files no compiled root reaches, scanned as if compiled");
    if (section.escalated()) w.Tag(" (severity lowered one step)");
    w.Tag(".</p>\n");
  }
  if (section.suppressed() > 0) {
    w.Tag("<p class=\"muted\">").Text(FormatCount(section.suppressed(), "finding", "findings"));
    w.Tag(" suppressed by <code># compile-lens: ignore[…]</code>.</p>\n");
  }
}

}  // namespace

void WriteLintBody(const v1::LintSection& section, HtmlWriter& w) {
  const auto& findings = section.findings();
  if (findings.empty()) {
    if (section.escalated()) {
      w.Tag(
          "<p class=\"good\">No known-risky pattern in the captured sources (checked against "
          "the correctness DB).</p>");
    } else {
      w.Tag("<p class=\"good\">No known-risky pattern in the captured sources.</p>");
    }
    if (section.suppressed() > 0) w.Tag("\n");
    WriteLintNotes(section, w);
    return;
  }
  if (section.escalated()) {
    w.Tag("<p class=\"warn\">")
        .Text(FormatCount(findings.size(), "pattern", "patterns"))
        .Tag(" from the static scan, rated against the correctness DB.</p>\n");
    w.BeginTable({"pattern", "location", "trigger", "confidence", "severity", "links"});
  } else {
    w.Tag("<p class=\"warn\">")
        .Text(FormatCount(findings.size(), "candidate pattern", "candidate patterns"))
        .Tag(
            " from the static scan — not yet escalated. Pass <code>--db "
            "&lt;correctness.toml&gt;</code> to rate severity and attach issue links.</p>\n");
    w.BeginTable({"pattern", "location", "trigger", "confidence"});
  }
  for (int i = 0; i < ShownRows(findings.size()); ++i) {
    const v1::LintFinding& finding = findings[i];
    w.Tag("<tr><td><code>").Text(OrDash(finding.pattern())).Tag("</code>");
    // What matched and what the detector says of it: the row is readable without the JSON.
    if (!finding.snippet().empty()) w.Tag("<br><code>").Text(finding.snippet()).Tag("</code>");
    if (!finding.message().empty())
      w.Tag("<br><span class=\"muted\">").Text(finding.message()).Tag("</span>");
    w.Tag("</td><td>");
    WriteCodeLocation(finding.location(), w);
    w.Tag("</td><td><code>").Text(OrDash(finding.trigger())).Tag("</code></td><td>");
    w.Text(OrDash(finding.confidence())).Tag("</td>");
    if (section.escalated()) {
      w.Tag("<td>").Text(OrDash(Word(finding.severity()))).Tag("</td><td>");
      WriteLinks(finding, w);
      w.Tag("</td>");
    }
    w.Tag("</tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(findings.size(), w);
  WriteLintNotes(section, w);
}

}  // namespace cl

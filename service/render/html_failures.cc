// Failures: every compile torch gave up on, with what it said, its traceback (folded) and what to
// do; then the attempts it restarted; then what torch.export (draft_export) could not prove. A
// clean session says so in one line.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/number_format.h"
#include "proto/report_words.h"
#include "service/render/health_format.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"
#include "service/render/location_format.h"

namespace cl {
namespace {

void WriteFailed(const v1::FailuresSection& section, HtmlWriter& w) {
  const auto& failed = section.failed();
  w.Tag("<h3>Failed compiles (").Text(absl::StrCat(failed.size())).Tag(")</h3>\n");
  for (int i = 0; i < ShownRows(failed.size()); ++i) {
    const v1::FailedCompile& f = failed[i];
    w.Tag("<div class=\"failure\"><p><code>").Text(f.compile_id()).Tag("</code> ");
    w.Tag("<code>").Text(OrDash(f.frame())).Tag("</code>");
    if (f.exported()) w.Text(" (torch.export)");
    w.Tag(" at <code>");
    w.Text(FormatLocation(f.location(), LocationStyle::kPage)).Tag("</code>: ");
    w.Tag("<strong class=\"warn\">").Text(OrDash(f.fail_type())).Tag("</strong></p>\n");
    if (!f.reason().empty()) w.Tag("<pre class=\"reason\">").Text(f.reason()).Tag("</pre>\n");
    if (!f.remedy().empty()) w.Tag("<p>").Text(f.remedy()).Tag("</p>\n");
    if (!f.traceback().empty()) {
      w.Tag("<details class=\"traceback\"><summary>traceback torch logged</summary><pre>");
      w.Text(f.traceback()).Tag("</pre></details>\n");
    }
    w.Tag("</div>\n");
  }
  WriteOmittedRows(failed.size(), w);
}

void WriteRestarts(const v1::FailuresSection& section, HtmlWriter& w) {
  const auto& restarts = section.restarts();
  w.Tag("<h3>Restarted attempts (").Text(absl::StrCat(restarts.size())).Tag(")</h3>\n");
  w.BeginTable({"compile", "frame", "location", "reason", "graph break"});
  for (int i = 0; i < ShownRows(restarts.size()); ++i) {
    const v1::RestartedCompile& r = restarts[i];
    w.Tag("<tr><td><code>").Text(r.compile_id()).Tag("</code></td><td><code>");
    w.Text(OrDash(r.frame())).Tag("</code></td><td class=\"paths\"><code>");
    w.Text(FormatLocation(r.location(), LocationStyle::kPage))
        .Tag("</code></td><td class=\"paths\">");
    w.Text(absl::StrJoin(r.reasons(), "; ")).Tag("</td><td>");
    w.Text(r.graph_break() ? "yes" : "no").Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(restarts.size(), w);
}

// What torch.export could not prove: per user line (per operator, for a fake kernel), what it
// decided, what the exported program asserts, the torch._check that would state it, where the
// data-dependent symbols came from, and what to do.
void WriteExportFindings(const v1::FailuresSection& section, HtmlWriter& w) {
  const auto& findings = section.export_findings();
  w.Tag("<h3>").Text(absl::StrCat(ExportFindingsHeading(section), " (", findings.size()));
  w.Tag(")</h3>\n");
  for (int i = 0; i < ShownRows(findings.size()); ++i) {
    const v1::ExportFinding& f = findings[i];
    w.Tag("<div class=\"failure\"><p><code>");
    w.Text(f.has_location() ? FormatLocation(f.location(), LocationStyle::kPage) : "—");
    w.Tag("</code>: <strong class=\"warn\">").Text(Word(f.kind())).Tag("</strong>");
    if (!f.op().empty()) w.Tag(" <code>").Text(f.op()).Tag("</code>");
    if (!f.code().empty()) w.Tag(" <code>").Text(f.code()).Tag("</code>");
    w.Text(absl::StrCat(" (", FormatCount(f.records(), "record", "records"), ")"));
    if (f.stopped())
      w.Tag(" <strong class=\"warn\">").Text("the export stopped here").Tag("</strong>");
    w.Tag("</p>\n");
    if (!f.reason().empty()) w.Tag("<pre class=\"reason\">").Text(f.reason()).Tag("</pre>\n");
    if (!f.decisions().empty()) {
      const bool data = f.kind() == v1::ExportFinding::DATA_DEPENDENT;
      if (data) {
        w.BeginTable({"torch could not decide", "the example inputs said",
                      "the exported program asserts", "state it in the code"});
      } else if (f.kind() == v1::ExportFinding::SPECIALIZED) {
        w.BeginTable({"size declared dynamic", "made the constant"});
      } else {
        w.BeginTable({"guard export evaluated"});
      }
      for (const v1::ExportDecision& d : f.decisions()) {
        w.Tag("<tr><td><code>").Text(d.expr()).Tag("</code></td>");
        if (f.kind() == v1::ExportFinding::SPECIALIZED)
          w.Tag("<td><code>").Text(OrDash(d.result())).Tag("</code></td>");
        if (data) {
          w.Tag("<td>").Text(OrDash(d.result())).Tag("</td><td><code>");
          w.Text(OrDash(d.assertion())).Tag("</code></td><td><code>");
          w.Text(OrDash(d.check())).Tag("</code></td>");
        }
        w.Tag("</tr>\n");
      }
      w.EndTable();
    }
    for (const v1::ExportSymbol& s : f.symbols()) {
      w.Tag("<p><code>").Text(s.user_name().empty() ? s.name() : s.user_name()).Tag("</code>");
      if (!s.user_name().empty()) w.Text(absl::StrCat(" (", s.name(), ")"));
      w.Text(" depends on the data: made at ");
      w.Tag("<code>").Text(s.has_location() ? FormatLocation(s.location(), LocationStyle::kPage)
                                            : "—");
      w.Tag("</code>");
      if (!s.code().empty()) w.Text(", ").Tag("<code>").Text(s.code()).Tag("</code>");
      w.Tag("</p>\n");
    }
    if (!f.remedy().empty()) w.Tag("<p>").Text(f.remedy()).Tag("</p>\n");
    w.Tag("</div>\n");
  }
  WriteOmittedRows(findings.size(), w);
}

}  // namespace

void WriteFailuresBody(const v1::FailuresSection& section, HtmlWriter& w) {
  const bool export_only = section.compiles() == 0 && (!section.export_findings().empty() ||
                                                       !section.exported_program().empty());
  if (export_only) {
    w.Tag("<p>").Text("No compile: the log is torch.export's.").Tag("</p>\n");
    if (section.export_findings().empty()) {
      w.Tag("<p class=\"good\">")
          .Text("torch.export logged nothing it could not prove.")
          .Tag("</p>\n");
    }
  } else if (section.failed().empty()) {
    w.Tag("<p class=\"good\">")
        .Text(absl::StrCat("No compile failed (",
                           FormatCount(section.compiles(), "compile", "compiles"), ")."))
        .Tag("</p>\n");
  } else {
    w.Tag("<p class=\"warn\">")
        .Text(absl::StrCat(section.failed().size(), " of ",
                           FormatCount(section.compiles(), "compile", "compiles"), " failed."))
        .Tag("</p>\n");
    WriteFailed(section, w);
  }
  if (!section.restarts().empty()) WriteRestarts(section, w);
  if (!section.export_findings().empty()) WriteExportFindings(section, w);
  if (!section.exported_program().empty()) {
    w.Tag("<details class=\"traceback\"><summary>")
        .Text(section.exported_program_clipped()
                  ? "the exported program torch logged (its first 16 KiB)"
                  : "the exported program torch logged")
        .Tag("</summary><pre>")
        .Text(section.exported_program())
        .Tag("</pre></details>\n");
  }
}

}  // namespace cl

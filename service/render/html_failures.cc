// Failures: every compile torch gave up on, with what it said, its traceback (folded) and what to
// do; then the attempts it restarted. A clean session says so in one line.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/number_format.h"
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

}  // namespace

void WriteFailuresBody(const v1::FailuresSection& section, HtmlWriter& w) {
  if (section.failed().empty()) {
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
}

}  // namespace cl

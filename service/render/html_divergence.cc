// Divergence (eager vs compiled): the first layer whose output left the dtype-aware tolerance,
// and the cause the compiler bisect attributed it to.
#include "absl/strings/str_cat.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"
#include "service/render/number_format.h"

namespace cl {
namespace {

void WriteCause(const v1::BisectCulprit& cause, HtmlWriter& w) {
  if (cause.name().empty()) {
    w.Tag("<span class=\"muted\">not attributed</span>");
    return;
  }
  switch (cause.kind()) {
    case v1::BisectCulprit::BACKEND: w.Tag("backend: "); break;
    case v1::BisectCulprit::SUBSYSTEM: w.Tag("subsystem: "); break;
    case v1::BisectCulprit::PASS: w.Tag("pass: "); break;
    default: break;
  }
  w.Tag("<code>").Text(cause.name()).Tag("</code>");
}

}  // namespace

void WriteDivergenceBody(const v1::DivergenceSection& section, HtmlWriter& w) {
  if (section.first_divergent_layer().empty()) {
    w.Tag("<p class=\"good\">The compiled model matches eager: no layer diverged (")
        .Text(absl::StrCat(section.layers_compared()))
        .Tag(" layer(s) compared).</p>");
    return;
  }
  w.BeginTable({"first divergent layer", "max abs diff", "layers compared", "attributed cause"});
  w.Tag("<tr><td><code>").Text(section.first_divergent_layer()).Tag("</code></td><td>");
  w.Text(FormatScientific(section.max_abs_diff())).Tag("</td><td>");
  w.Text(absl::StrCat(section.layers_compared())).Tag("</td><td>");
  WriteCause(section.cause(), w);
  w.Tag("</td></tr>\n");
  w.EndTable();
}

}  // namespace cl

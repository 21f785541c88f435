// Compile health: the numbers to watch from one version to the next, the head's and, with a base,
// the base's and the change (worse in the warning colour, better in the good one); the graph
// breaks that are new or gone; the gates a CI check applied.
#include "absl/strings/str_cat.h"
#include "service/render/health_format.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {
namespace {

bool AnyBase(const v1::HealthSection& section) {
  for (const v1::HealthMetric& m : section.metrics())
    if (m.has_base()) return true;
  return false;
}

void WriteDelta(const v1::HealthMetric& m, HtmlWriter& w) {
  const std::string delta = HealthDelta(m);
  if (HealthWorse(m)) {
    w.Tag("<span class=\"warn\">").Text(delta).Tag("</span>");
  } else if (HealthBetter(m)) {
    w.Tag("<span class=\"good\">").Text(delta).Tag("</span>");
  } else {
    w.Text(delta.empty() ? "—" : delta);
  }
}

void WriteBreaks(Markup title, const google::protobuf::RepeatedPtrField<v1::HealthBreak>& breaks,
                 HtmlWriter& w) {
  if (breaks.empty()) return;
  w.Tag("<h3>").Tag(title).Tag("</h3>\n");
  w.BeginTable({"reason", "where", "function", "count"});
  for (const v1::HealthBreak& b : breaks) {
    w.Tag("<tr><td>").Text(b.reason()).Tag("</td><td>");
    WriteCodeLocation(b.location(), w);
    w.Tag("</td><td>").Text(OrDash(b.frame())).Tag("</td><td>");
    w.Text(absl::StrCat(b.count())).Tag("</td></tr>\n");
  }
  w.EndTable();
}

void WriteGates(const v1::HealthSection& section, HtmlWriter& w) {
  if (section.gates().empty()) return;
  w.Tag("<h3>Gates</h3>\n");
  if (section.failed_gates() > 0) {
    w.Tag("<p class=\"warn\">")
        .Text(absl::StrCat(section.failed_gates(), " of ", section.gates_size(), " failed"))
        .Tag("</p>\n");
  } else {
    w.Tag("<p class=\"good\">").Text("every gate passed").Tag("</p>\n");
  }
  w.BeginTable({"gate", "result", "what"});
  for (const v1::GateResult& g : section.gates()) {
    w.Tag("<tr><td><code>").Text(g.gate()).Tag("</code></td><td>");
    if (g.passed()) {
      w.Tag("<span class=\"good\">passed</span>");
    } else {
      w.Tag("<strong class=\"warn\">failed</strong>");
    }
    w.Tag("</td><td>").Text(g.message()).Tag("</td></tr>\n");
  }
  w.EndTable();
}

}  // namespace

void WriteHealthBody(const v1::HealthSection& section, HtmlWriter& w) {
  const bool base = AnyBase(section);
  if (base) {
    w.BeginTable({"metric", "base", "head", "change", "note"});
  } else {
    w.BeginTable({"metric", "value", "note"});
  }
  for (const v1::HealthMetric& m : section.metrics()) {
    w.Tag("<tr><td>").Text(m.label()).Tag("</td><td>");
    if (base) w.Text(HealthBase(m)).Tag("</td><td>");
    w.Text(HealthHead(m)).Tag("</td><td>");
    if (base) {
      WriteDelta(m, w);
      w.Tag("</td><td>");
    }
    w.Tag("<span class=\"muted\">").Text(m.note()).Tag("</span></td></tr>\n");
  }
  w.EndTable();
  WriteBreaks("New graph breaks (not in the base)", section.new_breaks(), w);
  WriteBreaks("Graph breaks gone since the base", section.fixed_breaks(), w);
  WriteGates(section, w);
}

}  // namespace cl

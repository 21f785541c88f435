#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/render/health_format.h"
#include "service/render/location_format.h"
#include "service/render/markdown.h"
#include "service/render/untrusted_text.h"

namespace cl {
namespace {

constexpr size_t kTopFindings = 5;
constexpr int kListed = 10;

std::string Where(const v1::Location& location) {
  return MarkdownText(FormatLocation(location, LocationStyle::kTerminal));
}

void Health(const v1::HealthSection& health, std::string& out) {
  bool base = false;
  for (const v1::HealthMetric& m : health.metrics()) base = base || m.has_base();
  absl::StrAppend(&out, base ? "| | base | head | change |\n|---|---:|---:|---:|\n"
                             : "| | value |\n|---|---:|\n");
  for (const v1::HealthMetric& m : health.metrics()) {
    if (!m.measured() && !m.has_base()) continue;
    absl::StrAppend(&out, "| ", MarkdownText(m.label()), " | ");
    if (base) absl::StrAppend(&out, HealthBase(m), " | ");
    absl::StrAppend(&out, HealthHead(m));
    if (base) {
      const std::string delta = HealthDelta(m);
      absl::StrAppend(&out, " | ", HealthWorse(m) ? absl::StrCat("**", delta, "**") : delta);
    }
    absl::StrAppend(&out, " |\n");
  }
  out += "\n";
}

}  // namespace

std::string MarkdownText(absl::string_view in) {
  const std::string flat = ScrubUntrusted(in, Newlines::kFlatten);
  std::string out;
  out.reserve(flat.size());
  for (char c : flat) {
    // Any ASCII punctuation may be backslash-escaped (CommonMark 2.4); these are the characters
    // that could open emphasis, code, a link, raw HTML, an entity or a table cell. The text never
    // starts a line (it follows "- " or "| "), so '#', '-' and '1.' cannot start a block.
    if (absl::string_view("\\`*_[]<>|~&").find(c) != absl::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string RenderMarkdown(const v1::AnalysisReport& report, const MarkdownLinks& links) {
  std::string out = "## compile-lens";
  if (!report.metadata().session_id().empty())
    absl::StrAppend(&out, ": ", MarkdownText(report.metadata().session_id()));
  out += "\n\n";
  const v1::HealthSection& health = report.health();
  if (!health.gates().empty()) {
    if (health.failed_gates() > 0) {
      absl::StrAppend(&out, "**", health.failed_gates(), " of ", health.gates_size(),
                      " gates failed**\n\n");
      for (const v1::GateResult& g : health.gates())
        if (!g.passed()) absl::StrAppend(&out, "- ❌ ", MarkdownText(g.message()), "\n");
    } else {
      absl::StrAppend(&out, "**Every gate passed** (", health.gates_size(), ")\n\n");
    }
    for (const v1::GateResult& g : health.gates())
      if (g.passed()) absl::StrAppend(&out, "- ✅ ", MarkdownText(g.message()), "\n");
    out += "\n";
  }
  if (health.status() == v1::OK) Health(health, out);
  if (!health.new_breaks().empty()) {
    out += "### New graph breaks\n\n";
    for (int i = 0; i < std::min(health.new_breaks_size(), kListed); ++i) {
      const v1::HealthBreak& b = health.new_breaks(i);
      absl::StrAppend(&out, "- ", MarkdownText(b.reason()));
      if (HasLocation(b.location())) absl::StrAppend(&out, " at ", Where(b.location()));
      if (!b.frame().empty()) absl::StrAppend(&out, " in ", MarkdownText(b.frame()));
      out += "\n";
    }
    if (health.new_breaks_size() > kListed)
      absl::StrAppend(&out, "- … and ", health.new_breaks_size() - kListed, " more\n");
    out += "\n";
  }
  // The verdict but its health items: the gates and the new breaks are listed above.
  std::vector<const v1::VerdictItem*> findings;
  for (const v1::VerdictItem& item : report.verdict().items())
    if (item.section() != "health" && findings.size() < kTopFindings) findings.push_back(&item);
  if (!findings.empty()) {
    out += "### Top findings\n\n";
    for (const v1::VerdictItem* item : findings)
      absl::StrAppend(&out, "- ", MarkdownText(item->text()), "\n");
    out += "\n";
  } else if (report.verdict().clean()) {
    out += "Nothing went wrong that the passes could see.\n\n";
  }
  if (!links.html.empty() || !links.site.empty()) {
    out += "Full report:";
    // Link targets are the paths the user gave; <> keeps spaces and parentheses in them literal.
    auto link = [&](absl::string_view text, const std::string& target) {
      std::string safe;
      for (char c : target) {
        if (c == '<' || c == '>' || c == '\n' || c == '\\') continue;
        safe += c;
      }
      absl::StrAppend(&out, " [", text, "](<", safe, ">)");
    };
    if (!links.html.empty()) link("HTML report", links.html);
    if (!links.site.empty()) link("site", links.site);
    out += "\n";
  }
  return out;
}

}  // namespace cl

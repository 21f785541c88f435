// Fusion opportunities: algebraic fusions Inductor left unfused, ranked by an analytical
// memory-bound upper bound, with what to change and how.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/number_format.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {
namespace {

std::string Shape(const v1::FusionOpportunity& opportunity) {
  if (!opportunity.has_shape()) return "—";
  const v1::FusionShape& s = opportunity.shape();
  // K0 is the first GEMM's reduction, K1 the last GEMM's width (analyzers/fusion/patterns.h); a
  // chain without that GEMM has 0 there, which reads "—" so the columns keep their places.
  const auto dim = [](uint64_t k) { return k == 0 ? std::string("—") : absl::StrCat(k); };
  return absl::StrCat(s.m(), "×", s.n(), "×", dim(s.k0()), "×", dim(s.k1()));
}

// "↓30% (264 KiB → 184 KiB)"; an "opportunity" that moves more bytes says so with "↑".
std::string HbmSaved(const v1::FusionOpportunity& opportunity) {
  const uint64_t before = opportunity.hbm_bytes_before();
  const uint64_t after = opportunity.hbm_bytes_after();
  if (before == 0) return "—";
  const double change = (static_cast<double>(before) - static_cast<double>(after)) / before;
  return absl::StrCat(change >= 0 ? "↓" : "↑", FormatPercent(change >= 0 ? change : -change), " (",
                      FormatBytes(before), " → ", FormatBytes(after), ")");
}

void WriteRow(const v1::FusionOpportunity& opportunity, HtmlWriter& w) {
  w.Tag("<tr><td>").Text(OrDash(opportunity.pattern()));
  if (opportunity.count() > 1) {
    w.Tag(" <span class=\"muted\">").Text(absl::StrCat("×", opportunity.count())).Tag("</span>");
  }
  w.Tag("</td><td>");
  WriteCodeLocation(opportunity.location(), w);
  w.Tag("</td><td>").Text(Shape(opportunity));
  if (!opportunity.size_hints().empty()) {  // symbolic sizes, at torch's hints
    w.Tag(" <span class=\"muted\">").Text(absl::StrCat("at ", opportunity.size_hints()));
    w.Tag("</span>");
  }
  w.Tag("</td><td>").Text(HbmSaved(opportunity));
  w.Tag("</td><td>");
  if (opportunity.speedup_bound() > 0) {
    w.Tag("<strong>").Text(absl::StrCat("≤ ", FormatFixed(opportunity.speedup_bound(), 2), "×"));
    w.Tag("</strong>");
  } else {
    w.Text("—");
  }
  w.Tag("</td></tr>\n");
}

// The analyzers mark identifiers in `change` and `how` with backticks; the seed shows them as
// <code> here.
void WriteAdvice(const v1::FusionOpportunity& opportunity, bool titled, HtmlWriter& w) {
  if (titled) {
    w.Tag("<h3>").Text(OrDash(opportunity.pattern())).Tag(" at ");
    WriteCodeLocation(opportunity.location(), w);
    w.Tag("</h3>\n");
  }
  if (!opportunity.change().empty()) {
    w.Tag("<p><strong>What to change:</strong> ").TextWithCode(opportunity.change());
    w.Tag("</p>\n");
  }
  if (!opportunity.how().empty()) {
    w.Tag("<p class=\"muted\"><strong>How to apply:</strong> ").TextWithCode(opportunity.how());
    w.Tag("</p>\n");
  }
  if (!opportunity.byte_model().empty()) {
    w.Tag("<p class=\"muted\"><strong>Byte model:</strong> ").Text(opportunity.byte_model());
    w.Tag("</p>\n");
  }
}

void WriteNote(const v1::FusionSection& section, HtmlWriter& w) {
  if (!section.note().empty()) {
    w.Tag("<p class=\"muted\">").TextWithCode(section.note()).Tag("</p>\n");
  }
}

}  // namespace

void WriteFusionBody(const v1::FusionSection& section, HtmlWriter& w) {
  const auto& opportunities = section.opportunities();
  if (opportunities.empty()) {
    w.Tag("<p class=\"good\">No unfused algebraic chain found in the post-grad graph.</p>\n");
  } else {
    w.Tag(
        "<p class=\"muted\">Algebraic fusions Inductor leaves unfused — opportunities, not "
        "applied changes. The speedup is an analytical memory-bound <strong>upper bound for "
        "ranking</strong> (real is ~1.05–1.15×); applying one means a fused epilogue "
        "kernel.</p>\n");
  }
  // The note on the byte model follows the advice, so that the table and the advice read
  // first, as the seed shows them.
  if (opportunities.empty()) {
    WriteNote(section, w);
    return;
  }
  w.BeginTable({"pattern", "where", "shape (M×N×K0×K1)", "HBM saved", "≤ speedup"});
  for (int i = 0; i < ShownRows(opportunities.size()); ++i) WriteRow(opportunities[i], w);
  w.EndTable();
  WriteOmittedRows(opportunities.size(), w);
  // One opportunity reads as the seed does; several get a heading each so that the advice
  // says which row it belongs to.
  const bool titled = opportunities.size() > 1;
  for (int i = 0; i < ShownRows(opportunities.size()); ++i) {
    WriteAdvice(opportunities[i], titled, w);
  }
  WriteNote(section, w);
}

}  // namespace cl

// Roofline: per kernel, how close it runs to the GPU's memory or compute roof. Kernels whose
// flops/bytes were estimated from the graph (no measured features) are marked as estimates.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/number_format.h"
#include "proto/report_words.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"
#include "service/render/svg_roofline.h"

namespace cl {
namespace {

// FLOP/s figures; zero means "not known" (no measured time, no spec for the GPU).
std::string Rate(double flops_per_second) {
  return flops_per_second > 0 ? FormatSi(flops_per_second, "FLOP/s") : "—";
}

std::string Bytes(double bytes) {
  if (!(bytes >= 0) || bytes > 1.8e19) return FormatSi(bytes, "B");  // nan or beyond uint64
  return FormatBytes(static_cast<uint64_t>(std::llround(bytes)));
}

void WriteKernelRow(const v1::RooflineKernel& kernel, HtmlWriter& w) {
  w.Tag("<tr><td><code>").Text(OrDash(kernel.name())).Tag("</code>");
  if (kernel.estimated()) {
    w.Tag(" <span class=\"muted\">");
    if (kernel.size_hints().empty()) {
      w.Tag("(estimate)");
    } else {
      w.Text(absl::StrCat("(estimate at ", kernel.size_hints(), ")"));
    }
    w.Tag("</span>");
  }
  w.Tag("</td><td>").Text(FormatSi(kernel.flops(), "FLOP")).Tag("</td><td>");
  w.Text(Bytes(kernel.bytes())).Tag("</td><td>");
  w.Text(absl::StrCat(FormatFixed(kernel.intensity(), 2), " FLOP/B")).Tag("</td><td>");
  w.Text(Rate(kernel.achieved())).Tag("</td><td>").Text(Rate(kernel.attainable()));
  w.Tag("</td><td>").Text(OrDash(Word(kernel.bound()))).Tag("</td></tr>\n");
}

}  // namespace

void WriteRooflineBody(const v1::RooflineSection& section, HtmlWriter& w) {
  const auto& kernels = section.kernels();
  const bool measured = std::any_of(kernels.begin(), kernels.end(),
                                    [](const v1::RooflineKernel& k) { return !k.estimated(); });
  // With no measured kernel the lead says what the rows are (estimates), never that there are none.
  if (!measured && kernels.empty()) {
    w.Tag(
        "<p class=\"muted\">No kernel carried the flops/bytes features the roofline model "
        "needs");
    if (!section.gpu().empty()) w.Tag(" (GPU: <code>").Text(section.gpu()).Tag("</code>)");
    w.Tag(".</p>");
  } else if (!measured) {
    w.Tag("<p class=\"muted\">Estimated from the graph: no kernel carried measured flops/bytes");
    if (section.gpu().empty()) {
      w.Tag("; the session names no GPU, so there are no roofs and no bounds.</p>");
    } else {
      // An assumed GPU is the note's to explain (below): why, and the --gpu names there are.
      w.Tag(", modelled for <code>").Text(section.gpu()).Tag("</code>.</p>");
    }
  }
  if (!section.note().empty()) w.Tag("<p class=\"muted\">").Text(section.note()).Tag("</p>");
  if (kernels.empty()) return;
  if (measured) {
    w.Tag("<dl class=\"meta\">");
    WriteMetaRow("GPU", section.gpu(), w);
    w.Tag("</dl>");
  }
  w.Tag("\n");
  w.BeginTable({"kernel", "flops", "bytes", "intensity", "achieved", "attainable", "bound"});
  for (int i = 0; i < ShownRows(kernels.size()); ++i) WriteKernelRow(kernels[i], w);
  w.EndTable();
  WriteOmittedRows(kernels.size(), w);
  // The chart needs roofs: a GPU from the spec table.
  if (section.peak_flops() > 0 && section.bandwidth() > 0) {
    w.Tag("<p class=\"muted\">Roofs: ").Text(FormatSi(section.peak_flops(), "FLOP/s"));
    w.Tag(" compute, ").Text(FormatSi(section.bandwidth(), "B/s")).Tag(" memory; ridge point ");
    w.Text(absl::StrCat(FormatFixed(section.ridge_point(), 1), " FLOP/B.")).Tag("</p>\n");
    WriteRooflineChart(section, w);
  }
}

}  // namespace cl

// Divergence (eager vs compiled): the first layer whose output left the dtype-aware tolerance,
// and the cause the compiler bisect attributed it to. The table is the seed's; the figures behind
// it (isolated vs accumulated difference, tolerance, noise floor) and what a benign severity means
// follow it, when the capture recorded them.
#include "absl/strings/str_cat.h"
#include "common/number_format.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {
namespace {

void WriteCause(const v1::BisectCulprit& cause, HtmlWriter& w) {
  if (cause.name().empty()) {
    w.Tag("<span class=\"muted\">not attributed</span>");
    return;
  }
  switch (cause.kind()) {
    case v1::BisectCulprit::BACKEND:
      w.Tag("backend: ");
      break;
    case v1::BisectCulprit::SUBSYSTEM:
      w.Tag("subsystem: ");
      break;
    case v1::BisectCulprit::PASS:
      w.Tag("pass: ");
      break;
    case v1::BisectCulprit::DECOMPOSITION:
      w.Tag("decomposition: ");
      break;
    case v1::BisectCulprit::LOWERING:
      w.Tag("lowering: ");
      break;
    case v1::BisectCulprit::CONFIG:
      w.Tag("config: ");
      break;
    case v1::BisectCulprit::TRACING:
      w.Tag("tracing: ");
      break;
    default:
      break;
  }
  w.Tag("<code>").Text(cause.name()).Tag("</code>");
}

// "isolated 5.033e0 (eager input into the compiled layer) · accumulated 5.100e0 · tolerance
// 1.000e-4", from the newer captures only: an older one records none of these.
void WriteFigures(const v1::DivergenceSection& section, HtmlWriter& w) {
  if (section.accumulated_max_abs_diff() == 0 && section.tolerance() == 0 &&
      section.noise_floor() == 0)
    return;
  w.Tag("<p class=\"muted\">isolated ").Text(FormatScientific(section.max_abs_diff()));
  w.Tag(" (eager input into the compiled layer) · accumulated ");
  w.Text(FormatScientific(section.accumulated_max_abs_diff()));
  w.Tag(" (the compiled model's own upstream output) · tolerance ")
      .Text(FormatScientific(section.tolerance()));
  if (section.noise_floor() != 0) {
    w.Tag(" · eager-vs-eager noise floor ").Text(FormatScientific(section.noise_floor()));
  }
  w.Tag("</p>\n");
}

void WriteSeverityNote(const v1::DivergenceSection& section, HtmlWriter& w) {
  switch (section.severity()) {
    case v1::DivergenceSection::INFO:
      w.Tag(
          "<p class=\"muted\">RNG parity, not a bug: the difference goes away with "
          "<code>fallback_random</code>, so compiled and eager only drew different random "
          "numbers.</p>\n");
      break;
    case v1::DivergenceSection::LOW:
      w.Tag(
          "<p class=\"muted\">Expected rounding, not a bug: the difference goes away with "
          "<code>emulate_precision_casts</code>, so it is the compiled kernels keeping "
          "low-precision intermediates at higher precision.</p>\n");
      break;
    default:
      break;
  }
}

}  // namespace

void WriteDivergenceBody(const v1::DivergenceSection& section, HtmlWriter& w) {
  if (section.first_divergent_layer().empty()) {
    w.Tag("<p class=\"good\">The compiled model matches eager: no layer diverged (")
        .Text(FormatCount(section.layers_compared(), "layer", "layers"))
        .Tag(" compared).</p>");
    return;
  }
  w.BeginTable({"first divergent layer", "max abs diff", "layers compared", "attributed cause"});
  w.Tag("<tr><td><code>").Text(section.first_divergent_layer()).Tag("</code></td><td>");
  w.Text(FormatScientific(section.max_abs_diff())).Tag("</td><td>");
  w.Text(absl::StrCat(section.layers_compared())).Tag("</td><td>");
  WriteCause(section.cause(), w);
  w.Tag("</td></tr>\n");
  w.EndTable();
  WriteFigures(section, w);
  WriteSeverityNote(section, w);
}

}  // namespace cl

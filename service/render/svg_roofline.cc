#include "service/render/svg_roofline.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/number_format.h"

namespace cl {
namespace {

constexpr double kWidth = 560, kHeight = 320;
constexpr double kLeft = 72, kRight = 16, kTop = 12, kBottom = 40;

// Log-log axes over whole decades.
struct Axes {
  double x_lo, x_hi, y_lo, y_hi;  // log10 of the bounds

  double X(double intensity) const {
    return kLeft + (std::log10(intensity) - x_lo) / (x_hi - x_lo) * (kWidth - kLeft - kRight);
  }
  double Y(double flops) const {
    return kHeight - kBottom -
           (std::log10(flops) - y_lo) / (y_hi - y_lo) * (kHeight - kTop - kBottom);
  }
};

// Coordinates are numbers this file computed; they go through Text() like everything else.
std::string Num(double v) { return absl::StrFormat("%.1f", v); }

// The widest the axes get, in decades either side of the ridge point (x) and below the peak (y):
// a kernel further out (1 FLOP over 5e-324 bytes is a finite intensity of 2e323) is left off the
// chart rather than stretching it, so that the grid's loops stay bounded whatever the capture says.
constexpr double kMaxDecades = 12;

// The rate a kernel is plotted at: achieved when a time is known, else its attainable rate.
double PlottedRate(const v1::RooflineKernel& k) {
  return k.achieved() > 0 ? k.achieved() : k.attainable();
}

// Whether the kernel has a point within the chart's widest bounds.
bool Plotted(const v1::RooflineKernel& k, double ridge, double peak) {
  const double x = std::log10(k.intensity()), y = std::log10(PlottedRate(k));
  return std::isfinite(x) && std::isfinite(y) && std::abs(x - std::log10(ridge)) <= kMaxDecades &&
         y >= std::log10(peak) - kMaxDecades && y <= std::log10(peak) + 1;
}

void Line(double x1, double y1, double x2, double y2, HtmlWriter& w) {
  w.Tag("<line x1=\"").Text(Num(x1)).Tag("\" y1=\"").Text(Num(y1)).Tag("\" x2=\"").Text(Num(x2));
  w.Tag("\" y2=\"").Text(Num(y2)).Tag("\"/>");
}

void Label(double x, double y, const std::string& text, bool end, HtmlWriter& w) {
  w.Tag("<text x=\"").Text(Num(x)).Tag("\" y=\"").Text(Num(y));
  if (end) {
    w.Tag("\" text-anchor=\"end\">");
  } else {
    w.Tag("\" text-anchor=\"middle\">");
  }
  w.Text(text).Tag("</text>");
}

void WriteGrid(const Axes& a, HtmlWriter& w) {
  w.Tag("<g stroke=\"currentColor\" stroke-opacity=\"0.15\">");
  for (double d = a.x_lo; d <= a.x_hi; ++d) {
    Line(a.X(std::pow(10, d)), kTop, a.X(std::pow(10, d)), kHeight - kBottom, w);
  }
  for (double d = a.y_lo; d <= a.y_hi; ++d) {
    Line(kLeft, a.Y(std::pow(10, d)), kWidth - kRight, a.Y(std::pow(10, d)), w);
  }
  w.Tag("</g><g fill=\"currentColor\" font-size=\"10\">");
  for (double d = a.x_lo; d <= a.x_hi; ++d) {
    Label(a.X(std::pow(10, d)), kHeight - kBottom + 14, FormatSi(std::pow(10, d), ""), false, w);
  }
  for (double d = a.y_lo; d <= a.y_hi; ++d) {
    Label(kLeft - 4, a.Y(std::pow(10, d)) + 3, FormatSi(std::pow(10, d), "FLOP/s"), true, w);
  }
  Label((kLeft + kWidth - kRight) / 2, kHeight - 6, "arithmetic intensity (FLOP/B)", false, w);
  w.Tag("</g>");
}

}  // namespace

void WriteRooflineChart(const v1::RooflineSection& section, HtmlWriter& w) {
  const double peak = section.peak_flops(), bandwidth = section.bandwidth();
  if (!(peak > 0) || !(bandwidth > 0)) return;
  const double ridge = peak / bandwidth;
  if (!std::isfinite(peak) || !std::isfinite(ridge) || !(ridge > 0)) return;
  double ai_min = ridge / 10, ai_max = ridge * 10, rate_min = peak / 10;
  int points = 0;
  for (const v1::RooflineKernel& k : section.kernels()) {
    if (!Plotted(k, ridge, peak)) continue;
    ++points;
    ai_min = std::min(ai_min, k.intensity());
    ai_max = std::max(ai_max, k.intensity());
    rate_min = std::min(rate_min, PlottedRate(k));
  }
  if (points == 0) return;
  Axes a{std::floor(std::log10(ai_min)), std::ceil(std::log10(ai_max)),
         std::floor(std::log10(rate_min)), std::ceil(std::log10(peak * 1.01))};
  if (a.y_hi - a.y_lo < 1) a.y_lo = a.y_hi - 1;

  w.Tag(
      "<svg class=\"roofline\" role=\"img\" viewBox=\"0 0 560 320\" width=\"560\" "
      "height=\"320\" xmlns=\"http://www.w3.org/2000/svg\" style=\"max-width:100%;height:auto\">");
  w.Tag("<title>Roofline: kernels against the memory and compute roofs</title>");
  WriteGrid(a, w);
  // The memory roof rises from the chart's left edge (or its floor) to the ridge point; the
  // compute roof runs flat from there.
  const double x0 = std::max(std::pow(10, a.x_lo), std::pow(10, a.y_lo) / bandwidth);
  w.Tag("<g stroke=\"#1f6feb\" stroke-width=\"2\" fill=\"none\">");
  Line(a.X(x0), a.Y(x0 * bandwidth), a.X(ridge), a.Y(peak), w);
  Line(a.X(ridge), a.Y(peak), a.X(std::pow(10, a.x_hi)), a.Y(peak), w);
  w.Tag("</g><g fill=\"#1f6feb\" font-size=\"10\">");
  Label(a.X(ridge), a.Y(peak) - 4, absl::StrCat("ridge ", FormatFixed(ridge, 1), " FLOP/B"), false,
        w);
  w.Tag("</g>");
  // Filled: achieved (a time is known); hollow: placed on its roof (attainable), no time.
  w.Tag("<g stroke=\"#cf222e\" stroke-width=\"1.5\">");
  for (const v1::RooflineKernel& k : section.kernels()) {
    if (!Plotted(k, ridge, peak)) continue;
    w.Tag("<circle r=\"4\" cx=\"").Text(Num(a.X(k.intensity()))).Tag("\" cy=\"");
    w.Text(Num(a.Y(PlottedRate(k))));
    if (k.achieved() > 0) {
      w.Tag("\" fill=\"#cf222e\">");
    } else {
      w.Tag("\" fill=\"none\">");
    }
    w.Tag("<title>").Text(k.name()).Text(absl::StrCat(
        ": ", FormatFixed(k.intensity(), 2), " FLOP/B, ", FormatSi(PlottedRate(k), "FLOP/s")));
    w.Tag("</title></circle>");
  }
  w.Tag("</g></svg>\n");
}

}  // namespace cl

// The roofline chart: an inline SVG (the page's CSP allows no script, and needs none) with the
// GPU's memory and compute roofs on log-log axes and each kernel as a point, written through the
// HtmlWriter so that kernel names reach the page escaped.
#ifndef SERVICE_RENDER_SVG_ROOFLINE_H_
#define SERVICE_RENDER_SVG_ROOFLINE_H_

#include "compile_lens/v1/report.pb.h"
#include "service/render/html_writer.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// Writes the chart when the section has roofs (a known GPU) and at least one kernel with a
// positive intensity; writes nothing otherwise.
void WriteRooflineChart(const v1::RooflineSection& section, HtmlWriter& w);

}  // namespace cl

#endif  // SERVICE_RENDER_SVG_ROOFLINE_H_

// Compile health: the numbers a team watches from one torch or model version to the next (graph
// breaks, recompiles, failures, guards, compile seconds, cache hits, graphs, kernels), for the head
// and, with a base, the base and the change, plus the graph breaks that are new or gone.
//
// Not a pass: the table reads what the passes made (the recompile, failures, compile time and
// roofline sections) and the captures, so the engine fills it after them. With a base, the engine
// runs those passes on the base as well (HealthSections), so both columns come from the same code.
#ifndef ANALYZERS_HEALTH_HEALTH_H_
#define ANALYZERS_HEALTH_HEALTH_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// The report sections the table reads, by their AnalysisReport field names.
const std::vector<absl::string_view>& HealthSections();

// One side of the comparison: its capture and the report its passes made (with `raw` filled).
struct HealthSide {
  const v1::SessionCapture& capture;
  const v1::AnalysisReport& report;
};

// The health section for `head`, compared with `base` when there is one. Gates are not applied
// here (gates.h).
v1::HealthSection Health(const HealthSide& head, const HealthSide* base);

// A metric's value as every rendering shows it: "3", "12.30 s", "4.1 ms", "40%".
std::string FormatMetricValue(double value, absl::string_view unit);

// The metric names, in table order: what Gates.max_regression may name.
const std::vector<absl::string_view>& HealthMetricNames();

}  // namespace cl

#endif  // ANALYZERS_HEALTH_HEALTH_H_

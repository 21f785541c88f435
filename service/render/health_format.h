// How a compile-health row reads, the same on the page, the terminal and in Markdown: its value
// (FormatMetricValue, which the gates' lines use too) and its change from the base ("+1",
// "−0.52 s", "+5 pts", "=").
#ifndef SERVICE_RENDER_HEALTH_FORMAT_H_
#define SERVICE_RENDER_HEALTH_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// The head's value, or "—" when not measured.
std::string HealthHead(const v1::HealthMetric& m);
// The base's value, or "—".
std::string HealthBase(const v1::HealthMetric& m);
// The change, or "" when either side lacks the number.
std::string HealthDelta(const v1::HealthMetric& m);

// Whether the head is worse than the base (false when either lacks the number).
bool HealthWorse(const v1::HealthMetric& m);
bool HealthBetter(const v1::HealthMetric& m);

// The recompile section's graph breaks as the page and the terminal head them: every break, and
// the groups (one reason at one line) they are listed in when those are fewer: "9 graph breaks
// in 6 groups", "2 graph breaks". The health table counts the same breaks.
std::string GraphBreakCount(const v1::RecompileSection& section);

// The recompiles of the section's expected clusters (RecompileCluster.expected): torch making an
// input that changed once dynamic. The page and the verdict both set them apart.
uint32_t ExpectedRecompiles(const v1::RecompileSection& section);

// What the section's export findings are about: "torch.export" for a draft export's, "torch" when
// any came from torch.compile's compiles (fake_tensor_propagate_real_tensors); the page, the
// terminal and the verdict head them "<who> could not prove ...".
absl::string_view UnprovenBy(const v1::FailuresSection& section);

// The heading of the section's export findings, on the page and the terminal: "What torch.export
// could not prove", "Where torch.export stopped" when each finding is a stop (the export raised),
// or both.
std::string ExportFindingsHeading(const v1::FailuresSection& section);

}  // namespace cl

#endif  // SERVICE_RENDER_HEALTH_FORMAT_H_

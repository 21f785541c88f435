#include "service/render/health_format.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzers/health/health.h"
#include "common/number_format.h"

namespace cl {

std::string HealthHead(const v1::HealthMetric& m) {
  return m.measured() ? FormatMetricValue(m.head(), m.unit()) : "—";
}

std::string HealthBase(const v1::HealthMetric& m) {
  return m.has_base() ? FormatMetricValue(m.base(), m.unit()) : "—";
}

std::string HealthDelta(const v1::HealthMetric& m) {
  if (!m.measured() || !m.has_base()) return "";
  const double d = m.head() - m.base();
  if (m.unit() == "ratio") {
    const long points = std::lround(d * 100);
    if (points == 0) return "=";
    return absl::StrCat(points > 0 ? "+" : "−", std::labs(points), " pts");
  }
  if (m.unit() == "s") {
    if (FormatMetricValue(m.head(), "s") == FormatMetricValue(m.base(), "s")) return "=";
    return absl::StrCat(d > 0 ? "+" : "−", FormatMetricValue(std::fabs(d), "s"));
  }
  const int64_t n = std::llround(d);
  if (n == 0) return "=";
  return absl::StrCat(n > 0 ? "+" : "−", std::llabs(n));
}

namespace {

// The change in the direction that is worse; 0 when it does not show.
double WorseBy(const v1::HealthMetric& m) {
  const std::string shown = HealthDelta(m);
  if (shown.empty() || shown == "=") return 0;  // no change at the precision shown
  return m.higher_is_worse() ? m.head() - m.base() : m.base() - m.head();
}

}  // namespace

bool HealthWorse(const v1::HealthMetric& m) { return WorseBy(m) > 0; }
bool HealthBetter(const v1::HealthMetric& m) { return WorseBy(m) < 0; }

std::string GraphBreakCount(const v1::RecompileSection& section) {
  uint64_t breaks = 0;
  for (const v1::GraphBreakSummary& b : section.graph_breaks()) breaks += b.count();
  const int groups = section.graph_breaks_size();
  std::string words = FormatCount(breaks, "graph break", "graph breaks");
  if (groups > 0 && static_cast<uint64_t>(groups) < breaks)
    absl::StrAppend(&words, " in ", FormatCount(groups, "group", "groups"));
  return words;
}

uint32_t ExpectedRecompiles(const v1::RecompileSection& section) {
  uint32_t expected = 0;
  for (const v1::RecompileCluster& cluster : section.clusters()) {
    if (cluster.expected()) expected += cluster.count();
  }
  return expected;
}

std::string ExportFindingsHeading(const v1::FailuresSection& section) {
  int stopped = 0;
  for (const v1::ExportFinding& f : section.export_findings()) stopped += f.stopped();
  const absl::string_view who = UnprovenBy(section);
  if (stopped == section.export_findings_size()) return absl::StrCat("Where ", who, " stopped");
  if (stopped == 0) return absl::StrCat("What ", who, " could not prove");
  return absl::StrCat("What ", who, " could not prove, and where it stopped");
}

absl::string_view UnprovenBy(const v1::FailuresSection& section) {
  for (const v1::ExportFinding& f : section.export_findings()) {
    if (!f.compile_id().empty()) return "torch";
  }
  return "torch.export";
}

}  // namespace cl

#include "service/fleet_counters.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "proto/report_words.h"

namespace cl {
namespace {

using ::prometheus::Counter;
using ::prometheus::Labels;

constexpr absl::string_view kOutcomeNames[] = {"ok", "partial", "failed", "cancelled"};
constexpr absl::string_view kDivergenceSeverityNames[] = {"error", "low", "info"};
constexpr absl::string_view kVerdictNames[] = {"stale", "suspicious"};

Labels With(const Labels& fleet, absl::string_view key, absl::string_view value) {
  Labels labels = fleet;
  labels.emplace(std::string(key), std::string(value));
  return labels;
}

// `value`'s index in `names`, or the last one's when it is not there.
template <size_t N>
size_t IndexOf(const absl::string_view (&names)[N], absl::string_view value) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == value) return i;
  }
  return N - 1;
}

// A fail_type as torch writes it, "Unsupported" or (older torch)
// "<class 'torch._dynamo.exc.Unsupported'>": the exception's own name.
absl::string_view ExceptionName(absl::string_view fail_type) {
  absl::ConsumePrefix(&fail_type, "<class '");
  absl::ConsumeSuffix(&fail_type, "'>");
  if (const size_t dot = fail_type.rfind('.'); dot != absl::string_view::npos)
    fail_type.remove_prefix(dot + 1);
  return fail_type;
}

// A pass failed: some section of the report is ERROR. Sections are the report's message fields
// with a SectionStatus `status`, so a new section needs no change here.
bool HasErrorSection(const v1::AnalysisReport& report) {
  using ::google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* reflection = report.GetReflection();
  const google::protobuf::Descriptor* descriptor = report.GetDescriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || field->is_repeated()) continue;
    const FieldDescriptor* status = field->message_type()->FindFieldByName("status");
    if (status == nullptr || status->enum_type() != v1::SectionStatus_descriptor()) continue;
    const google::protobuf::Message& section = reflection->GetMessage(report, field);
    if (section.GetReflection()->GetEnumValue(section, status) == v1::ERROR) return true;
  }
  return false;
}

}  // namespace

CategoryCounters::CategoryCounters(prometheus::Family<Counter>& family, const Labels& fleet,
                                   const google::protobuf::EnumDescriptor& categories,
                                   std::vector<int> uncounted, std::optional<int> other,
                                   absl::string_view label) {
  for (int i = 0; i < categories.value_count(); ++i) {
    const google::protobuf::EnumValueDescriptor* value = categories.value(i);
    const int number = value->number();
    if (std::find(uncounted.begin(), uncounted.end(), number) != uncounted.end()) continue;
    if (static_cast<size_t>(number) >= by_number_.size()) by_number_.resize(number + 1);
    by_number_[number] = &family.Add(With(fleet, label, Word(value)));
  }
  if (other) other_ = by_number_.at(*other);
}

void CategoryCounters::Add(int category, double n) {
  const bool known = category >= 0 && static_cast<size_t>(category) < by_number_.size() &&
                     by_number_[category] != nullptr;
  if (Counter* counter = known ? by_number_[category] : other_) counter->Increment(n);
}

FleetCounters::FleetCounters(const FleetFamilies& families, const Labels& fleet)
    // UNSPECIFIED is never a report's category; CACHE_LIMIT is a suggestion's, not a guard's.
    : recompiles_(families.recompiles, fleet, *v1::RecompileCategory::Value_descriptor(),
                  {v1::RecompileCategory::UNSPECIFIED, v1::RecompileCategory::CACHE_LIMIT},
                  v1::RecompileCategory::OTHER),
      graph_breaks_(families.graph_breaks, fleet, *v1::GraphBreakCategory::Value_descriptor(),
                    {v1::GraphBreakCategory::UNSPECIFIED}, v1::GraphBreakCategory::OTHER),
      divergence_checked_(&families.divergence_checked.Add(fleet)),
      export_findings_(families.export_findings, fleet, *v1::ExportFinding::Kind_descriptor(),
                       {v1::ExportFinding::KIND_UNSPECIFIED}, std::nullopt, "kind") {
  static_assert(std::size(kOutcomeNames) == kOutcomes);
  static_assert(std::size(kDivergenceSeverityNames) == kDivSeverities);
  static_assert(std::size(kVerdictNames) == kVerdicts);
  for (size_t i = 0; i < kOutcomes; ++i) {
    sessions_[i] = &families.sessions_analyzed.Add(With(fleet, "outcome", kOutcomeNames[i]));
  }
  for (size_t i = 0; i < kDivSeverities; ++i) {
    divergent_[i] =
        &families.divergent_sessions.Add(With(fleet, "severity", kDivergenceSeverityNames[i]));
  }
  for (size_t i = 0; i < kVerdicts; ++i) {
    stale_[i] = &families.stale_cache_findings.Add(With(fleet, "verdict", kVerdictNames[i]));
  }
  const prometheus::Histogram::BucketBoundaries buckets(std::begin(kCompileSecondsBuckets),
                                                        std::end(kCompileSecondsBuckets));
  for (size_t i = 0; i < std::size(kCompileCauses); ++i) {
    compile_seconds_[i] =
        &families.compile_seconds.Add(With(fleet, "cause", kCompileCauses[i]), buckets);
  }
  for (size_t c = 0; c < std::size(kCaches); ++c) {
    for (size_t o = 0; o < std::size(kCacheOutcomes); ++o) {
      Labels labels = With(fleet, "cache", kCaches[c]);
      labels.emplace("outcome", std::string(kCacheOutcomes[o]));
      cache_lookups_[c][o] = &families.cache_lookups.Add(labels);
    }
  }
  for (size_t i = 0; i < std::size(kFailTypes); ++i) {
    compile_failures_[i] = &families.compile_failures.Add(With(fleet, "fail_type", kFailTypes[i]));
  }
  gated_[0] = &families.gated_sessions.Add(With(fleet, "result", "passed"));
  gated_[1] = &families.gated_sessions.Add(With(fleet, "result", "failed"));
}

void FleetCounters::CountFailure(absl::StatusCode code) {
  const bool gave_up =
      code == absl::StatusCode::kCancelled || code == absl::StatusCode::kDeadlineExceeded;
  sessions_[gave_up ? kCancelled : kFailed]->Increment();
}

void FleetCounters::CountReport(const v1::AnalysisReport& report) {
  sessions_[HasErrorSection(report) ? kPartial : kOk]->Increment();
  if (report.recompile().status() == v1::OK) {
    for (const v1::RecompileCluster& c : report.recompile().clusters()) {
      recompiles_.Add(c.category(), c.count());
    }
    for (const v1::GraphBreakSummary& gb : report.recompile().graph_breaks()) {
      graph_breaks_.Add(gb.category(), gb.count());
    }
  }
  const v1::DivergenceSection& divergence = report.divergence();
  if (divergence.status() == v1::OK) {
    divergence_checked_->Increment();
    if (!divergence.first_divergent_layer().empty()) {
      const DivergenceSeverity severity =
          divergence.severity() == v1::DivergenceSection::INFO  ? kDivInfo
          : divergence.severity() == v1::DivergenceSection::LOW ? kDivLow
                                                                : kDivError;
      divergent_[severity]->Increment();
    }
  }
  if (report.cache_stability().status() == v1::OK) {
    for (const v1::CacheStabilityFinding& f : report.cache_stability().findings()) {
      stale_[f.verdict() == v1::CacheStabilityFinding::STALE ? kStale : kSuspicious]->Increment();
    }
  }
  const v1::CompileTimeSection& compile_time = report.compile_time();
  if (compile_time.status() == v1::OK) {
    // One observation per cause: a session's recompile seconds are one figure, whatever the
    // number of clusters (ledger lines) they came in.
    std::array<double, std::size(kCompileCauses)> seconds{};
    std::array<bool, std::size(kCompileCauses)> seen{};
    for (const v1::CompileCost& cost : compile_time.ledger()) {
      const size_t cause = IndexOf(kCompileCauses, cost.cause());
      seconds[cause] += cost.seconds();
      seen[cause] = true;
    }
    for (size_t i = 0; i < seconds.size(); ++i) {
      if (seen[i]) compile_seconds_[i]->Observe(seconds[i]);
    }
    for (const v1::CacheOutcomes& c : compile_time.caches()) {
      const size_t cache = IndexOf(kCaches, c.cache());
      if (cache == std::size(kCaches) - 1 && c.cache() != kCaches[cache]) continue;  // unknown
      cache_lookups_[cache][0]->Increment(c.hits());
      cache_lookups_[cache][1]->Increment(c.misses());
      cache_lookups_[cache][2]->Increment(c.bypasses());
    }
  }
  if (report.failures().status() == v1::OK) {
    for (const v1::FailedCompile& f : report.failures().failed()) {
      compile_failures_[IndexOf(kFailTypes, ExceptionName(f.fail_type()))]->Increment();
    }
    for (const v1::ExportFinding& f : report.failures().export_findings())
      export_findings_.Add(f.kind(), 1);
  }
  if (!report.health().gates().empty()) gated_[report.health().failed_gates() > 0]->Increment();
}

}  // namespace cl

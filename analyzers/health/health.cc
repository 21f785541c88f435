#include "analyzers/health/health.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "capture/guarded_sources.h"
#include "common/number_format.h"

namespace cl {
namespace {

// One side's value of a metric, or why it has none.
struct Reading {
  bool measured = false;
  double value = 0;
  std::string note;
};

Reading Value(double v) { return {true, v, ""}; }
Reading Missing(std::string note) { return {false, 0, std::move(note)}; }

// Whether a section's numbers stand for the session: its pass ran, or it skipped a capture with no
// compile (where every count is zero). Else the reason, for the row's note.
template <typename Section>
std::optional<std::string> NotCounted(const Section& s, const v1::SessionCapture& capture,
                                      absl::string_view name) {
  if (s.status() == v1::OK) return std::nullopt;
  if (s.status() == v1::SKIPPED && capture.compiles().empty()) return std::nullopt;
  if (s.status() == v1::SECTION_STATUS_UNSPECIFIED) return absl::StrCat("no ", name, " section");
  return absl::StrCat(name, ": ", s.reason().empty() ? "did not run" : s.reason());
}

using Reader = std::function<Reading(const HealthSide&)>;

// The recompile section's count `of`.
Reader FromRecompile(std::function<double(const v1::RecompileSection&)> of) {
  return [of](const HealthSide& side) {
    const v1::RecompileSection& s = side.report.recompile();
    if (auto why = NotCounted(s, side.capture, "recompile")) return Missing(*why);
    return Value(of(s));
  };
}

double GraphBreaks(const v1::RecompileSection& s) {
  double n = 0;
  for (const v1::GraphBreakSummary& gb : s.graph_breaks()) n += gb.count();
  return n;
}

double GraphBreakReasons(const v1::RecompileSection& s) {
  absl::flat_hash_set<std::string> reasons;
  for (const v1::GraphBreakSummary& gb : s.graph_breaks()) reasons.insert(gb.reason());
  return static_cast<double>(reasons.size());
}

Reading FailedCompiles(const HealthSide& side) {
  const v1::FailuresSection& s = side.report.failures();
  if (auto why = NotCounted(s, side.capture, "failures")) return Missing(*why);
  return Value(s.failed_size());
}

Reading Guards(const HealthSide& side) {
  uint64_t guards = 0;
  bool recorded = side.capture.compiles().empty();
  for (const v1::Compile& c : side.capture.compiles()) {
    guards += c.guard_count();
    recorded = recorded || c.guard_count() > 0 || GuardedSourceCount(c) > 0;
  }
  if (!recorded) return Missing("the log recorded no guards (no dynamo_guards records)");
  return Value(static_cast<double>(guards));
}

Reading CompileSeconds(const HealthSide& side) {
  const v1::CompileTimeSection& s = side.report.compile_time();
  if (auto why = NotCounted(s, side.capture, "compile time")) return Missing(*why);
  return Value(s.total_s());
}

Reading CacheHitRatio(const HealthSide& side) {
  const v1::CompileTimeSection& s = side.report.compile_time();
  uint64_t hits = 0, lookups = 0;
  for (const v1::CacheOutcomes& c : s.caches()) {
    hits += c.hits();
    lookups += c.hits() + c.misses() + c.bypasses();
  }
  if (lookups == 0) {
    if (auto why = NotCounted(s, side.capture, "compile time")) return Missing(*why);
    return Missing("no cache lookup recorded");
  }
  return Value(static_cast<double>(hits) / static_cast<double>(lookups));
}

Reading CompiledGraphs(const HealthSide& side) {
  return Value(side.report.raw().compiled_graphs());
}

// The kernels the log names; else the ones the roofline estimated from the graphs.
Reading Kernels(const HealthSide& side) {
  if (side.capture.kernels_size() > 0 || side.report.roofline().status() != v1::OK)
    return Value(side.capture.kernels_size());
  Reading r = Value(side.report.roofline().kernels_size());
  r.note = "estimated from the graphs (the log names no kernels)";
  return r;
}

// The roofline's floor: each kernel's flops at the rate its roof allows, on the modelled GPU.
Reading KernelSeconds(const HealthSide& side) {
  const v1::RooflineSection& s = side.report.roofline();
  if (s.status() != v1::OK) {
    if (auto why = NotCounted(s, side.capture, "roofline")) return Missing(*why);
    return Value(0);
  }
  double seconds = 0;
  for (const v1::RooflineKernel& k : s.kernels()) {
    if (k.attainable() > 0) seconds += k.flops() / k.attainable();
  }
  Reading r = Value(seconds);
  // Not the session's own GPU: a CPU run, or a log that names none.
  if (s.gpu_assumed())
    r.note = absl::StrCat("modelled for ", s.gpu(), " (the session names no GPU)");
  return r;
}

struct MetricSpec {
  absl::string_view name, label, unit;
  bool higher_is_worse;
  Reader read;
};

const std::vector<MetricSpec>& Specs() {
  static const auto* const kSpecs = new std::vector<MetricSpec>{
      {"graph_breaks", "Graph breaks", "", true, FromRecompile(GraphBreaks)},
      {"graph_break_reasons", "Distinct graph-break reasons", "", true,
       FromRecompile(GraphBreakReasons)},
      {"recompiles", "Recompiles", "", true,
       FromRecompile([](const v1::RecompileSection& s) { return s.total(); })},
      {"cache_limit_hits", "Cache-limit hits", "", true,
       FromRecompile([](const v1::RecompileSection& s) { return s.cache_limit_hits_size(); })},
      {"failed_compiles", "Failed compiles", "", true, FailedCompiles},
      {"guards", "Guards", "", true, Guards},
      {"compile_time", "Compile time", "s", true, CompileSeconds},
      {"cache_hit_ratio", "Cache hit ratio", "ratio", false, CacheHitRatio},
      {"compiled_graphs", "Compiled graphs", "", true, CompiledGraphs},
      {"kernels", "Kernels", "", true, Kernels},
      {"kernel_time", "Kernel time (roofline estimate)", "s", true, KernelSeconds},
  };
  return *kSpecs;
}

// A graph break's identity across versions: its reason, file and function, and the text of its
// line when the capture has the source (the same statement, wherever edits above moved it), else
// the line number (two breaks of one reason in one function are then still told apart).
using BreakKey = std::tuple<std::string, std::string, std::string, std::string>;

BreakKey KeyOf(const v1::GraphBreakSummary& gb) {
  std::string line(absl::StripAsciiWhitespace(gb.source_line()));
  if (line.empty()) line = absl::StrCat(gb.location().line());
  return {gb.reason(), gb.location().file(), gb.frame(), std::move(line)};
}

std::set<BreakKey> BreakKeys(const HealthSide& side) {
  std::set<BreakKey> keys;
  for (const v1::GraphBreakSummary& gb : side.report.recompile().graph_breaks())
    keys.insert(KeyOf(gb));
  return keys;
}

void AddBreak(const v1::GraphBreakSummary& gb, v1::HealthBreak* out) {
  out->set_reason(gb.reason());
  out->set_category(gb.category());
  *out->mutable_location() = gb.location();
  out->set_frame(gb.frame());
  out->set_count(gb.count());
}

}  // namespace

std::string FormatMetricValue(double value, absl::string_view unit) {
  if (unit == "s") {
    const double a = std::fabs(value);
    if (a == 0 || a >= 1) return absl::StrFormat("%.2f s", value);
    if (a >= 1e-3) return absl::StrFormat("%.1f ms", value * 1e3);
    // Microseconds down to a tenth of one, then nanoseconds and picoseconds: a roofline estimate of
    // one small kernel (40 bytes at 3.35 TB/s) read "0.0 µs", as if nothing had been estimated.
    if (a >= 1e-7) return absl::StrFormat("%.1f µs", value * 1e6);
    if (a >= 1e-10) return absl::StrFormat("%.1f ns", value * 1e9);
    return absl::StrFormat("%.1f ps", value * 1e12);
  }
  if (unit == "ratio") return FormatPercent(value);
  return absl::StrCat(static_cast<int64_t>(std::llround(value)));
}

const std::vector<absl::string_view>& HealthSections() {
  static const auto* const kSections =
      new std::vector<absl::string_view>{"recompile", "failures", "compile_time", "roofline"};
  return *kSections;
}

const std::vector<absl::string_view>& HealthMetricNames() {
  static const auto* const kNames = [] {
    auto* names = new std::vector<absl::string_view>;
    for (const MetricSpec& spec : Specs()) names->push_back(spec.name);
    return names;
  }();
  return *kNames;
}

v1::HealthSection Health(const HealthSide& head, const HealthSide* base) {
  v1::HealthSection section;
  section.set_status(v1::OK);
  for (const MetricSpec& spec : Specs()) {
    v1::HealthMetric* m = section.add_metrics();
    m->set_name(std::string(spec.name));
    m->set_label(std::string(spec.label));
    m->set_unit(std::string(spec.unit));
    m->set_higher_is_worse(spec.higher_is_worse);
    const Reading h = spec.read(head);
    m->set_measured(h.measured);
    m->set_head(h.value);
    std::string note = h.note;
    if (base != nullptr) {
      const Reading b = spec.read(*base);
      m->set_has_base(b.measured);
      m->set_base(b.value);
      if (h.measured && b.measured) m->set_delta(h.value - b.value);
      if (!b.measured && note.empty()) note = absl::StrCat("base: ", b.note);
    }
    m->set_note(std::move(note));
  }
  if (base != nullptr && !NotCounted(head.report.recompile(), head.capture, "recompile") &&
      !NotCounted(base->report.recompile(), base->capture, "recompile")) {
    const std::set<BreakKey> head_keys = BreakKeys(head), base_keys = BreakKeys(*base);
    // One entry per break site: the recompile section lists a site twice where one of its breaks
    // made torch skip its frame and another did not.
    const auto list = [](const HealthSide& side, const std::set<BreakKey>& other,
                         google::protobuf::RepeatedPtrField<v1::HealthBreak>* out) {
      std::map<BreakKey, v1::HealthBreak*> listed;
      for (const v1::GraphBreakSummary& gb : side.report.recompile().graph_breaks()) {
        const BreakKey key = KeyOf(gb);
        if (other.contains(key)) continue;
        if (auto it = listed.find(key); it != listed.end()) {
          it->second->set_count(it->second->count() + gb.count());
          continue;
        }
        AddBreak(gb, listed[key] = out->Add());
      }
    };
    list(head, base_keys, section.mutable_new_breaks());
    list(*base, head_keys, section.mutable_fixed_breaks());
  }
  return section;
}

}  // namespace cl

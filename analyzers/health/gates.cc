#include "analyzers/health/gates.h"

#include <toml++/toml.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analyzers/health/health.h"
#include "common/number_format.h"
#include "proto/report_words.h"

namespace cl {
namespace {

constexpr absl::string_view kFailOnWords[] = {"failures", "divergence", "stale-cache", "export"};
constexpr absl::string_view kLintSeverities[] = {"info", "warning", "error"};
constexpr size_t kListed = 3;  // findings a failed gate's line names before "and N more"

bool Known(absl::string_view word, absl::Span<const absl::string_view> words) {
  for (absl::string_view w : words)
    if (w == word) return true;
  return false;
}

v1::LintFinding::Severity LintSeverity(absl::string_view word) {
  if (word == "info") return v1::LintFinding::INFO;
  if (word == "warning") return v1::LintFinding::WARNING;
  return v1::LintFinding::ERROR;
}

std::string Where(const v1::Location& location) {
  if (location.file().empty()) return "";
  return location.line() > 0 ? absl::StrCat(location.file(), ":", location.line())
                             : location.file();
}

std::string OrWhy(absl::string_view reason) {
  return reason.empty() ? "did not run" : std::string(reason);
}

// "a at f.py:3; b at g.py:9 and 2 more".
template <typename Items, typename Describe>
std::string Listed(const Items& items, Describe describe) {
  std::vector<std::string> parts;
  for (const auto& item : items) {
    if (parts.size() == kListed) break;
    parts.push_back(describe(item));
  }
  std::string out = absl::StrJoin(parts, "; ");
  const size_t n = std::size(items);
  if (n > kListed) absl::StrAppend(&out, " and ", n - kListed, " more");
  return out;
}

std::string Value(double v, absl::string_view unit) { return FormatMetricValue(v, unit); }

// A fraction as a percentage, as the flags spell it: 0.1 -> "10%", 0.1234 -> "12.3%".
std::string Percent(double fraction) {
  const double p = fraction * 100;
  return p == std::round(p) ? absl::StrFormat("%.0f%%", p) : absl::StrFormat("%.1f%%", p);
}

const v1::HealthMetric* Metric(const v1::HealthSection& health, absl::string_view name) {
  for (const v1::HealthMetric& m : health.metrics())
    if (m.name() == name) return &m;
  return nullptr;
}

class GateWriter {
 public:
  explicit GateWriter(v1::HealthSection* health) : health_(health) {}

  void Add(std::string gate, bool passed, std::string message) {
    v1::GateResult* r = health_->add_gates();
    r->set_gate(std::move(gate));
    r->set_passed(passed);
    r->set_message(std::move(message));
    if (!passed) health_->set_failed_gates(health_->failed_gates() + 1);
  }

  // The health row `metric`, a count that must stay at or below `limit` (--`gate` N).
  void AtMost(absl::string_view gate, absl::string_view metric, absl::string_view words,
              uint32_t limit) {
    const std::string flag = absl::StrCat("--", gate, " ", limit);
    const v1::HealthMetric* m = Metric(*health_, metric);
    if (m == nullptr || !m->measured()) {
      Add(std::string(gate), false,
          absl::StrCat(words, ": not measured (", m == nullptr ? "no such metric" : m->note(),
                       ") (", flag, ")"));
      return;
    }
    const bool passed = m->head() <= limit;
    Add(std::string(gate), passed,
        absl::StrCat(words, " ", Value(m->head(), ""), passed ? " ≤ " : " > ", limit, " (", flag,
                     ")"));
  }

  v1::HealthSection& health() { return *health_; }

 private:
  v1::HealthSection* health_;
};

void NewGraphBreaks(bool has_base, GateWriter& out) {
  constexpr absl::string_view kGate = "no-new-graph-breaks";
  if (!has_base) {
    out.Add(std::string(kGate), false,
            "no new graph breaks: needs a base capture to compare with (--base)");
    return;
  }
  const v1::HealthMetric* m = Metric(out.health(), "graph_breaks");
  if (m == nullptr || !m->measured() || !m->has_base()) {
    out.Add(std::string(kGate), false,
            absl::StrCat("no new graph breaks: not measured (", m ? m->note() : "", ")"));
    return;
  }
  const auto& breaks = out.health().new_breaks();
  if (breaks.empty()) {
    out.Add(std::string(kGate), true, "no new graph breaks (--no-new-graph-breaks)");
    return;
  }
  out.Add(std::string(kGate), false,
          absl::StrCat(FormatCount(breaks.size(), "new graph break", "new graph breaks"), ": ",
                       Listed(breaks,
                              [](const v1::HealthBreak& b) {
                                const std::string where = Where(b.location());
                                return where.empty() ? b.reason()
                                                     : absl::StrCat(b.reason(), " at ", where);
                              }),
                       " (--no-new-graph-breaks)"));
}

// --fail-on failures: read through the health row, which says whether the failures pass ran.
void FailOnFailures(const v1::AnalysisReport& report, const std::string& gate,
                    const std::string& flag, GateWriter& out) {
  const v1::HealthMetric* m = Metric(out.health(), "failed_compiles");
  if (m == nullptr || !m->measured()) {
    out.Add(gate, false,
            absl::StrCat("failed compiles: not measured (", m ? m->note() : "", ")", flag));
    return;
  }
  const auto& failed = report.failures().failed();
  if (failed.empty()) {
    out.Add(gate, true, absl::StrCat("no failed compile", flag));
    return;
  }
  out.Add(gate, false,
          absl::StrCat(FormatCount(failed.size(), "failed compile", "failed compiles"), ": ",
                       Listed(failed,
                              [](const v1::FailedCompile& f) {
                                const std::string where = Where(f.location());
                                return absl::StrCat(f.compile_id(), " ", f.fail_type(),
                                                    where.empty() ? "" : " at ", where);
                              }),
                       flag));
}

// What torch.export (draft_export) could not prove: a decision it took from the example inputs,
// a guard on a size declared dynamic, an operator without a faithful fake kernel. A log with no
// export has none, and passes.
void FailOnExport(const v1::FailuresSection& s, const std::string& gate, const std::string& flag,
                  GateWriter& out) {
  if (s.export_findings().empty()) {
    out.Add(gate, true, absl::StrCat("nothing torch.export could not prove", flag));
    return;
  }
  out.Add(gate, false,
          absl::StrCat(FormatCount(s.export_findings().size(), "thing", "things"),
                       " torch.export could not prove: ",
                       Listed(s.export_findings(),
                              [](const v1::ExportFinding& f) {
                                const std::string where = Where(f.location());
                                return absl::StrCat(Word(f.kind()), f.op().empty() ? "" : " ",
                                                    f.op(), where.empty() ? "" : " at ", where);
                              }),
                       flag));
}

void FailOnDivergence(const v1::DivergenceSection& s, const std::string& gate,
                      const std::string& flag, GateWriter& out) {
  if (s.status() != v1::OK) {
    out.Add(gate, s.status() != v1::ERROR,
            absl::StrCat("divergence: not checked (", OrWhy(s.reason()), ")", flag));
  } else if (s.severity() == v1::DivergenceSection::ERROR) {
    out.Add(gate, false,
            absl::StrCat("compiled output diverges from eager",
                         s.first_divergent_layer().empty()
                             ? ""
                             : absl::StrCat(" first at ", s.first_divergent_layer()),
                         ", max abs diff ", absl::StrFormat("%g", s.max_abs_diff()), flag));
  } else {
    out.Add(gate, true, absl::StrCat("no divergence beyond tolerance", flag));
  }
}

void FailOnStaleCache(const v1::CacheStabilitySection& s, const std::string& gate,
                      const std::string& flag, GateWriter& out) {
  if (s.status() != v1::OK) {
    out.Add(gate, s.status() != v1::ERROR,
            absl::StrCat("stale cache: not checked (", OrWhy(s.reason()), ")", flag));
    return;
  }
  std::vector<const v1::CacheStabilityFinding*> stale;
  for (const v1::CacheStabilityFinding& f : s.findings())
    if (f.verdict() == v1::CacheStabilityFinding::STALE) stale.push_back(&f);
  if (stale.empty()) {
    out.Add(gate, true, absl::StrCat("no stale cache entry", flag));
    return;
  }
  out.Add(gate, false,
          absl::StrCat(FormatCount(stale.size(), "stale cache entry", "stale cache entries"), ": ",
                       Listed(stale,
                              [](const v1::CacheStabilityFinding* f) {
                                return absl::StrCat(f->state_key(), " at iteration ",
                                                    f->iteration(), " (", f->compile_id(), ")");
                              }),
                       flag));
}

void FailOn(absl::string_view word, const v1::AnalysisReport& report, GateWriter& out) {
  const std::string gate = absl::StrCat("fail-on=", word);
  const std::string flag = absl::StrCat(" (--fail-on ", word, ")");
  if (word == "failures") {
    FailOnFailures(report, gate, flag, out);
  } else if (word == "divergence") {
    FailOnDivergence(report.divergence(), gate, flag, out);
  } else if (word == "export") {
    FailOnExport(report.failures(), gate, flag, out);
  } else {
    FailOnStaleCache(report.cache_stability(), gate, flag, out);
  }
}

void FailOnLint(absl::string_view severity, const v1::LintSection& s, GateWriter& out) {
  const std::string gate = absl::StrCat("fail-on-lint=", severity);
  const std::string flag = absl::StrCat(" (--fail-on-lint ", severity, ")");
  if (s.status() != v1::OK) {
    out.Add(gate, s.status() != v1::ERROR,
            absl::StrCat("lint: not checked (", OrWhy(s.reason()), ")", flag));
    return;
  }
  if (!s.escalated()) {
    out.Add(
        gate, false,
        absl::StrCat("lint: the findings are unrated, no correctness DB rated them (--db)", flag));
    return;
  }
  const v1::LintFinding::Severity at_least = LintSeverity(severity);
  std::vector<const v1::LintFinding*> over;
  for (const v1::LintFinding& f : s.findings())
    if (f.severity() >= at_least) over.push_back(&f);
  if (over.empty()) {
    out.Add(gate, true, absl::StrCat("no lint finding at ", severity, " or above", flag));
    return;
  }
  out.Add(gate, false,
          absl::StrCat(FormatCount(over.size(), "lint finding", "lint findings"), " at ", severity,
                       " or above: ",
                       Listed(over,
                              [](const v1::LintFinding* f) {
                                return absl::StrCat(f->pattern(), " at ", Where(f->location()));
                              }),
                       flag));
}

void MaxRegression(absl::string_view name, double limit, bool has_base, GateWriter& out) {
  const std::string gate = absl::StrCat("max-regression=", name);
  const std::string flag = absl::StrCat(" (--max-regression ", name, "=", Percent(limit), ")");
  const v1::HealthMetric* m = Metric(out.health(), name);
  if (!has_base) {
    out.Add(gate, false, absl::StrCat(name, ": needs a base capture to compare with", flag));
    return;
  }
  if (m == nullptr || !m->measured() || !m->has_base()) {
    out.Add(gate, false,
            absl::StrCat(name, ": not measured on both sides (", m ? m->note() : "", ")", flag));
    return;
  }
  const double worse = m->higher_is_worse() ? m->head() - m->base() : m->base() - m->head();
  const double change = m->base() != 0 ? worse / std::fabs(m->base())
                        : worse > 0    ? std::numeric_limits<double>::infinity()
                                       : 0;
  const bool passed = change <= limit;
  const std::string by =
      std::isinf(change) ? "from none" : absl::StrCat(change >= 0 ? "+" : "", Percent(change));
  out.Add(gate, passed,
          absl::StrCat(m->label(), " ", Value(m->base(), m->unit()), " → ",
                       Value(m->head(), m->unit()), ", ", worse > 0 ? "worse " : "", by,
                       passed ? " ≤ " : " > ", "+", Percent(limit), flag));
}

}  // namespace

bool HasGates(const v1::Gates& g) {
  return g.has_max_graph_breaks() || g.no_new_graph_breaks() || g.has_max_recompiles() ||
         !g.fail_on().empty() || !g.fail_on_lint().empty() || !g.max_regression().empty();
}

absl::Status ValidateGates(const v1::Gates& g) {
  for (const std::string& word : g.fail_on()) {
    if (!Known(word, kFailOnWords)) {
      return absl::InvalidArgumentError(absl::StrCat("gates: fail_on \"", absl::CHexEscape(word),
                                                     "\" is not one of ",
                                                     absl::StrJoin(kFailOnWords, ", ")));
    }
  }
  if (!g.fail_on_lint().empty() && !Known(g.fail_on_lint(), kLintSeverities)) {
    return absl::InvalidArgumentError(absl::StrCat("gates: fail_on_lint \"",
                                                   absl::CHexEscape(g.fail_on_lint()),
                                                   "\" is not one of info, warning, error"));
  }
  for (const auto& [name, limit] : g.max_regression()) {
    if (!Known(name, HealthMetricNames())) {
      return absl::InvalidArgumentError(
          absl::StrCat("gates: max_regression names \"", absl::CHexEscape(name),
                       "\", not a health metric (", absl::StrJoin(HealthMetricNames(), ", "), ")"));
    }
    if (!std::isfinite(limit) || limit < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("gates: max_regression ", name, " = ", limit, " is not a fraction ≥ 0"));
    }
  }
  return absl::OkStatus();
}

void ApplyGates(const v1::Gates& g, bool has_base, v1::AnalysisReport* report) {
  GateWriter out(report->mutable_health());
  if (g.has_max_graph_breaks())
    out.AtMost("max-graph-breaks", "graph_breaks", "graph breaks", g.max_graph_breaks());
  if (g.no_new_graph_breaks()) NewGraphBreaks(has_base, out);
  if (g.has_max_recompiles())
    out.AtMost("max-recompiles", "recompiles", "recompiles", g.max_recompiles());
  for (const std::string& word : g.fail_on()) FailOn(word, *report, out);
  if (!g.fail_on_lint().empty()) FailOnLint(g.fail_on_lint(), report->lint(), out);
  // In table order, not the map's.
  for (absl::string_view name : HealthMetricNames()) {
    if (auto it = g.max_regression().find(std::string(name)); it != g.max_regression().end())
      MaxRegression(name, it->second, has_base, out);
  }
}

namespace {

// "10%" -> 0.1, "0.1" -> 0.1.
std::optional<double> Fraction(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  const bool percent = absl::ConsumeSuffix(&text, "%");
  double v = 0;
  if (!absl::SimpleAtod(text, &v) || !std::isfinite(v) || v < 0) return std::nullopt;
  return percent ? v / 100 : v;
}

}  // namespace

absl::Status ParseRegressionFlag(absl::string_view spec, v1::Gates* gates) {
  for (absl::string_view part : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    const size_t eq = part.find('=');
    const std::optional<double> limit =
        eq == absl::string_view::npos ? std::nullopt : Fraction(part.substr(eq + 1));
    if (!limit) {
      return absl::InvalidArgumentError(
          absl::StrCat("--max-regression ", part, ": give METRIC=PERCENT (compile_time=10%)"));
    }
    (*gates
          ->mutable_max_regression())[std::string(absl::StripAsciiWhitespace(part.substr(0, eq)))] =
        *limit;
  }
  return ValidateGates(*gates);
}

absl::Status ParseFailOnFlag(absl::string_view spec, v1::Gates* gates) {
  for (absl::string_view word : absl::StrSplit(spec, ',', absl::SkipWhitespace()))
    gates->add_fail_on(std::string(absl::StripAsciiWhitespace(word)));
  return ValidateGates(*gates);
}

namespace {

std::string_view Std(absl::string_view s) { return {s.data(), s.size()}; }

absl::Status FileError(absl::string_view path, const toml::node& at, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ":", at.source().begin.line, ": ", message));
}

absl::StatusOr<uint32_t> Count(absl::string_view path, absl::string_view key, const toml::node& n) {
  const std::optional<int64_t> v = n.value<int64_t>();
  if (!n.is_integer() || !v || *v < 0 || *v > std::numeric_limits<uint32_t>::max())
    return FileError(path, n, absl::StrCat(key, " must be a whole number ≥ 0"));
  return static_cast<uint32_t>(*v);
}

}  // namespace

absl::StatusOr<v1::Gates> ParseGatesFile(absl::string_view text, absl::string_view path) {
  toml::table root;
  try {
    root = toml::parse(Std(text));
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":", e.source().begin.line, ":",
                                                   e.source().begin.column, ": ",
                                                   std::string(e.description())));
  }
  v1::Gates gates;
  for (const auto& [key_node, node] : root) {
    const std::string key(key_node.str());
    if (key == "max_graph_breaks" || key == "max_recompiles") {
      absl::StatusOr<uint32_t> n = Count(path, key, node);
      if (!n.ok()) return n.status();
      if (key == "max_graph_breaks") {
        gates.set_max_graph_breaks(*n);
      } else {
        gates.set_max_recompiles(*n);
      }
    } else if (key == "no_new_graph_breaks") {
      if (!node.is_boolean())
        return FileError(path, node, "no_new_graph_breaks must be true/false");
      gates.set_no_new_graph_breaks(*node.value<bool>());
    } else if (key == "fail_on") {
      const toml::array* words = node.as_array();
      if (words == nullptr) return FileError(path, node, "fail_on must be a list of words");
      for (const toml::node& w : *words) {
        if (!w.is_string()) return FileError(path, w, "fail_on must be a list of words");
        if (!Known(*w.value<std::string>(), kFailOnWords)) {
          return FileError(path, w,
                           absl::StrCat("fail_on \"", *w.value<std::string>(), "\" is not one of ",
                                        absl::StrJoin(kFailOnWords, ", ")));
        }
        gates.add_fail_on(*w.value<std::string>());
      }
    } else if (key == "fail_on_lint") {
      if (!node.is_string() || !Known(*node.value<std::string>(), kLintSeverities))
        return FileError(path, node, "fail_on_lint must be \"info\", \"warning\" or \"error\"");
      gates.set_fail_on_lint(*node.value<std::string>());
    } else if (key == "max_regression") {
      const toml::table* limits = node.as_table();
      if (limits == nullptr) return FileError(path, node, "max_regression must be a table");
      for (const auto& [metric_node, limit_node] : *limits) {
        const std::string metric(metric_node.str());
        if (!Known(metric, HealthMetricNames())) {
          return FileError(
              path, limit_node,
              absl::StrCat("max_regression names \"", metric, "\", not a health metric (",
                           absl::StrJoin(HealthMetricNames(), ", "), ")"));
        }
        std::optional<double> limit;
        if (limit_node.is_string()) {
          limit = Fraction(*limit_node.value<std::string>());
        } else if (limit_node.is_number()) {
          limit = limit_node.value<double>();
          if (limit && (!std::isfinite(*limit) || *limit < 0)) limit.reset();
        }
        if (!limit) {
          return FileError(path, limit_node,
                           absl::StrCat("max_regression.", metric,
                                        " must be a percentage (\"10%\") or a fraction (0.1)"));
        }
        (*gates.mutable_max_regression())[metric] = *limit;
      }
    } else {
      return FileError(path, node,
                       absl::StrCat("unknown gate \"", key,
                                    "\" (max_graph_breaks, no_new_graph_breaks, max_recompiles, "
                                    "fail_on, fail_on_lint, max_regression)"));
    }
  }
  return gates;
}

void MergeGates(const v1::Gates& over, v1::Gates* into) {
  if (over.has_max_graph_breaks()) into->set_max_graph_breaks(over.max_graph_breaks());
  if (over.no_new_graph_breaks()) into->set_no_new_graph_breaks(true);
  if (over.has_max_recompiles()) into->set_max_recompiles(over.max_recompiles());
  if (!over.fail_on().empty()) *into->mutable_fail_on() = over.fail_on();
  if (!over.fail_on_lint().empty()) into->set_fail_on_lint(over.fail_on_lint());
  for (const auto& [name, limit] : over.max_regression())
    (*into->mutable_max_regression())[name] = limit;
}

}  // namespace cl

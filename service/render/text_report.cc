// RenderText: the terminal summary. One headline per section ("recompile: 3 recompilations in
// forward (examples/hero_scene.py:86); size x[0]: 16→32, …") and, under it, at most a few
// indented lines with the findings that matter most; the HTML and JSON reports have the rest.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/number_format.h"
#include "common/utf8.h"
#include "proto/report_words.h"
#include "service/render/health_format.h"
#include "service/render/location_format.h"
#include "service/render/recompile_format.h"
#include "service/render/terminal_writer.h"
#include "service/render/text.h"

namespace cl {
namespace {

constexpr int kMaxItems = 3;

std::string Where(const v1::Location& location) {
  return FormatLocation(location, LocationStyle::kTerminal);
}

// "  … and 4 more" after a list cut at kMaxItems.
void WriteMore(int total, TerminalWriter& t) {
  if (total <= kMaxItems) return;
  t.Text("  ").Styled(Style::kMuted, absl::StrCat("… and ", total - kMaxItems, " more")).EndLine();
}

void WriteName(absl::string_view name, TerminalWriter& t) {
  t.Styled(Style::kTitle, name).Text(": ");
}

// Writes the headline for a section that did not run; returns false when it did (status OK).
template <typename Section>
bool WroteNotRun(absl::string_view name, const Section& section, TerminalWriter& t) {
  if (section.status() == v1::OK) return false;
  WriteName(name, t);
  switch (section.status()) {
    case v1::SKIPPED:
      t.Styled(Style::kMuted, section.reason().empty()
                                  ? std::string("skipped")
                                  : absl::StrCat("skipped (", section.reason(), ")"));
      break;
    case v1::ERROR:
      t.Styled(Style::kError, absl::StrCat("this pass failed: ", section.reason()));
      break;
    default:
      t.Styled(Style::kMuted, "no result (this pass did not run)");
      break;
  }
  t.EndLine();
  return true;
}

void WriteHeader(const v1::Metadata& m, TerminalWriter& t) {
  t.Styled(Style::kTitle, "compile-lens session report");
  t.Text(absl::StrCat(" — torch ", m.torch_version().empty() ? "unknown" : m.torch_version()));
  if (!m.started_at().empty()) t.Text(absl::StrCat(" · ", m.started_at()));
  t.EndLine();
  if (!m.session_id().empty()) t.Styled(Style::kMuted, absl::StrCat("session ", m.session_id()));
  if (!m.session_id().empty()) t.EndLine();
}

void WriteVerdict(const v1::Verdict& v, TerminalWriter& t) {
  if (v.items().empty() && !v.clean()) return;  // an older server's report, or one built by hand
  WriteName("verdict", t);
  if (v.clean()) {
    t.Styled(Style::kGood, "nothing went wrong that this report can see").EndLine();
    return;
  }
  t.Styled(Style::kWarn, FormatCount(v.items().size(), "problem", "problems"));
  t.EndLine();
  for (const v1::VerdictItem& item : v.items()) {
    t.Text(absl::StrCat("  - ", item.text(), " "))
        .Styled(Style::kMuted, absl::StrCat("(", item.section(), ")"));
    t.EndLine();
  }
}

void WriteFailures(const v1::FailuresSection& s, TerminalWriter& t) {
  if (s.status() == v1::SECTION_STATUS_UNSPECIFIED) return;  // an engine without the pass
  if (WroteNotRun("failures", s, t)) return;
  WriteName("failures", t);
  if (s.compiles() == 0) {
    t.Text("no compile (the log is torch.export's)");  // the pass runs on one for its exports
  } else if (s.failed().empty()) {
    t.Styled(Style::kGood, "no compile failed");
  } else {
    t.Styled(Style::kWarn, FormatCount(s.failed().size(), "compile", "compiles") + " failed");
  }
  if (!s.restarts().empty())
    t.Text(" · " + FormatCount(s.restarts().size(), "restarted attempt", "restarted attempts"));
  t.EndLine();
  for (int i = 0; i < std::min(s.failed().size(), kMaxItems); ++i) {
    const v1::FailedCompile& f = s.failed()[i];
    // The reason on one line, clipped: the traceback and the rest are in the HTML and JSON.
    const std::string reason = ClipUtf8(absl::StrReplaceAll(f.reason(), {{"\n", " "}}), 160);
    t.Text(absl::StrCat("  ", f.compile_id(), " ", f.frame().empty() ? "?" : f.frame(),
                        f.exported() ? " (torch.export)" : "", " at ", Where(f.location()), ": "));
    t.Styled(Style::kWarn, f.fail_type().empty() ? "failed" : f.fail_type());
    if (!reason.empty()) t.Text(absl::StrCat(" — ", reason));
    t.EndLine();
  }
  WriteMore(s.failed().size(), t);
  if (!s.exported_program().empty())
    t.Text("  torch.export logged the program it exported (in the HTML and JSON)").EndLine();
  if (s.export_findings().empty()) return;
  t.Text(absl::StrCat("  ", ExportFindingsHeading(s), ": "));
  t.Styled(Style::kWarn, FormatCount(s.export_findings().size(), "finding", "findings")).EndLine();
  for (int i = 0; i < std::min(s.export_findings().size(), kMaxItems); ++i) {
    const v1::ExportFinding& f = s.export_findings()[i];
    std::string what(Word(f.kind()));
    if (!f.op().empty()) absl::StrAppend(&what, " ", f.op());
    std::vector<std::string> asserted;
    for (const v1::ExportDecision& d : f.decisions())
      asserted.push_back(d.assertion().empty() ? d.expr() : d.assertion());
    if (!asserted.empty()) {
      absl::StrAppend(&what, f.kind() == v1::ExportFinding::DATA_DEPENDENT ? ", asserts " : ": ",
                      ClipUtf8(absl::StrJoin(asserted, ", "), 120));
    }
    t.Text(absl::StrCat("    ", f.has_location() ? Where(f.location()) : "?", " ", what));
    if (f.stopped()) t.Styled(Style::kWarn, " (the export stopped here)");
    t.EndLine();
  }
  WriteMore(s.export_findings().size(), t);
}

// Only for a multi-rank session (status OK): a single-rank summary stays as it was.
void WriteRanks(const v1::CrossRankSection& s, TerminalWriter& t) {
  if (s.status() != v1::OK) return;
  WriteName("ranks", t);
  t.Text(absl::StrCat(s.world_size(), " ranks; "));
  if (s.divergences().empty()) {
    t.Styled(Style::kGood, "all agree on compiles, cache events and recompiles").EndLine();
    return;
  }
  std::set<int32_t> odd;
  std::vector<std::string> kinds;
  for (const v1::RankDivergence& d : s.divergences()) {
    odd.insert(d.ranks().begin(), d.ranks().end());
    if (std::find(kinds.begin(), kinds.end(), d.kind()) == kinds.end()) kinds.push_back(d.kind());
  }
  // A line, not a list: a big job's odd ranks are counted past the first few.
  constexpr size_t kMaxRanks = 8;
  const auto shown_end = std::next(odd.begin(), std::min(odd.size(), kMaxRanks));
  std::string ranks = absl::StrJoin(odd.begin(), shown_end, ", ");
  if (odd.size() > kMaxRanks) absl::StrAppend(&ranks, ", … (", odd.size() - kMaxRanks, " more)");
  t.Styled(Style::kWarn, absl::StrCat(odd.size() == 1 ? "rank " : "ranks ", ranks,
                                      odd.size() == 1 ? " diverges" : " diverge"));
  t.Text(absl::StrCat(" (", absl::StrJoin(kinds, ", "), ")")).EndLine();
}

void WriteIrDiff(const v1::IrDiffSection& s, TerminalWriter& t) {
  if (WroteNotRun("ir-diff", s, t)) return;
  WriteName("ir-diff", t);
  const int changed = s.added().size() + s.removed().size() + s.modified().size();
  t.Styled(changed == 0 ? Style::kGood : Style::kWarn,
           changed == 0 ? std::string("graph unchanged")
                        : absl::StrCat(s.modified().size(), " modified, ", s.added().size(),
                                       " added, ", s.removed().size(), " removed"));
  t.Text(absl::StrCat(" (match coverage ", FormatPercent(s.match_coverage()),
                      ", anchor uniqueness ", FormatPercent(s.anchor_uniqueness()), ")"));
  t.EndLine();
  if (!s.stage().empty()) {
    t.Text("  ").Styled(Style::kMuted, absl::StrCat("compared ", s.stage())).EndLine();
  }
  int shown = 0;
  for (const auto* group : {&s.modified(), &s.added(), &s.removed()}) {
    for (const v1::NodeChange& c : *group) {
      if (shown++ >= kMaxItems) break;
      t.Text(absl::StrCat("  ",
                          !c.base_node().empty() && c.base_node() != c.node()
                              ? absl::StrCat(c.base_node(), " \u2192 ", c.node())
                              : c.node(),
                          " (", c.op(), "): ", c.change(), " at ", Where(c.location()),
                          ", confidence ", FormatFixed(c.confidence(), 2)));
      t.EndLine();
    }
  }
  WriteMore(changed, t);
}

void WriteRecompile(const v1::RecompileSection& s, TerminalWriter& t) {
  if (WroteNotRun("recompile", s, t)) return;
  WriteName("recompile", t);
  if (s.total() == 0) {
    t.Styled(Style::kGood, "no recompilations");
  } else {
    t.Styled(Style::kWarn, FormatCount(s.total(), "recompilation", "recompilations"));
    const bool several = s.frames().size() > 1;
    if (several) {
      t.Text(absl::StrCat(" in ", FormatCount(s.frames().size(), "frame", "frames"), ", most in ",
                          s.frame().name(), " (", s.frame().recompiles(), ")"));
    } else if (!s.frame().name().empty()) {
      t.Text(absl::StrCat(" in ", s.frame().name()));
      if (HasLocation(s.frame().location())) {
        t.Text(absl::StrCat(" (", Where(s.frame().location()), ")"));
      }
    }
    for (int i = 0; i < std::min(s.clusters().size(), kMaxItems); ++i) {
      const v1::RecompileCluster& c = s.clusters(i);
      const std::string& axis = c.axis().empty() ? c.variable() : c.axis();
      std::string values = ObservedValues(c);
      if (values.empty()) values = "—";
      t.Text(absl::StrCat("; ", Word(c.category()), " ", axis,
                          several ? absl::StrCat(" (", c.frame(), ")") : "", ": ", values,
                          c.expected() ? " (expected)" : ""));
    }
  }
  t.EndLine();
  if (!s.suggestions().empty()) {
    // Expected behaviour is a note: there is nothing to change.
    t.Text(s.suggestions(0).expected() ? "  note: " : "  suggestion: ")
        .Text(s.suggestions(0).text())
        .EndLine();
  }
  if (!s.cache_limit_hits().empty()) {
    const v1::CacheLimitHit& hit = s.cache_limit_hits(0);
    t.Text("  ").Styled(Style::kWarn, FormatCount(s.cache_limit_hits().size(),
                                                  "cache-size limit hit", "cache-size limit hits"));
    t.Text(absl::StrCat(": ", hit.frame(), " hit ", hit.limit(), " = ", hit.value())).EndLine();
  }
  if (!s.graph_breaks().empty()) {
    t.Text("  ").Styled(Style::kWarn, GraphBreakCount(s));
    t.EndLine();
    for (int i = 0; i < std::min(s.graph_breaks().size(), kMaxItems); ++i) {
      const v1::GraphBreakSummary& b = s.graph_breaks(i);
      t.Text(
          absl::StrCat("    ", b.reason(),
                       HasLocation(b.location()) ? absl::StrCat(" at ", Where(b.location())) : "",
                       " ×", b.count()));
      if (b.frame_skipped()) t.Text(" ").Styled(Style::kWarn, "(the whole frame ran eager)");
      t.EndLine();
      if (!b.source_line().empty()) {
        t.Text(absl::StrCat("      | ", b.source_line()));
        t.EndLine();
      }
    }
    WriteMore(s.graph_breaks().size(), t);
  }
}

// One line of the measured numbers (with the change from a base), then what is new since the
// base and every gate's result.
void WriteHealth(const v1::HealthSection& s, TerminalWriter& t) {
  if (s.status() != v1::OK) return;  // an engine without the table
  WriteName("health", t);
  bool first = true;
  for (const v1::HealthMetric& m : s.metrics()) {
    if (!m.measured()) continue;
    t.Text(first ? "" : " · ").Text(absl::StrCat(m.label(), " ", HealthHead(m)));
    first = false;
    const std::string delta = HealthDelta(m);
    if (delta.empty()) continue;
    const std::string shown = absl::StrCat(" (", delta, ")");
    if (HealthWorse(m)) {
      t.Styled(Style::kWarn, shown);
    } else if (HealthBetter(m)) {
      t.Styled(Style::kGood, shown);
    } else {
      t.Styled(Style::kMuted, shown);
    }
  }
  t.EndLine();
  for (int i = 0; i < std::min(s.new_breaks().size(), kMaxItems); ++i) {
    const v1::HealthBreak& b = s.new_breaks(i);
    t.Text("  ").Styled(Style::kWarn, "new graph break").Text(": ").Text(b.reason());
    if (HasLocation(b.location())) t.Text(absl::StrCat(" at ", Where(b.location())));
    t.EndLine();
  }
  WriteMore(s.new_breaks().size(), t);
  if (!s.fixed_breaks().empty()) {
    t.Text("  ").Styled(Style::kGood,
                        FormatCount(s.fixed_breaks().size(), "graph break", "graph breaks"));
    t.Text(" gone since the base").EndLine();
  }
  for (const v1::GateResult& g : s.gates()) {
    t.Text("  ");
    if (g.passed()) {
      t.Styled(Style::kGood, "gate passed");
    } else {
      t.Styled(Style::kError, "gate FAILED");
    }
    t.Text(": ").Text(g.message()).EndLine();
  }
}

void WriteCompileTime(const v1::CompileTimeSection& s, TerminalWriter& t) {
  if (s.status() == v1::SECTION_STATUS_UNSPECIFIED) return;  // an engine without the pass
  if (WroteNotRun("compile-time", s, t)) return;
  WriteName("compile-time", t);
  t.Text(absl::StrFormat("%.2f s over %s", s.total_s(),
                         FormatCount(s.compiles().size(), "compile", "compiles")));
  // One figure per cause: the ledger keeps a line per cluster ("recompile" of x[0], of x[1]),
  // which the page tells apart and a one-line summary cannot.
  std::vector<std::pair<std::string, double>> by_cause;
  for (const v1::CompileCost& cost : s.ledger()) {
    auto same = std::find_if(by_cause.begin(), by_cause.end(),
                             [&](const auto& c) { return c.first == cost.cause(); });
    if (same == by_cause.end()) {
      by_cause.emplace_back(cost.cause(), cost.seconds());
    } else {
      same->second += cost.seconds();
    }
  }
  std::stable_sort(by_cause.begin(), by_cause.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < std::min<size_t>(by_cause.size(), 3); ++i)
    t.Text(absl::StrFormat("; %s %.2f s", by_cause[i].first, by_cause[i].second));
  for (const v1::CacheOutcomes& c : s.caches()) {
    if (c.cache() == "triton") continue;
    t.Text(absl::StrCat("; ", c.cache(), " ", c.hits(), " hit / ", c.misses(), " miss / ",
                        c.bypasses(), " bypass"));
  }
  t.EndLine();
  if (!s.suggestions().empty()) t.Text("  suggestion: ").Text(s.suggestions(0).text()).EndLine();
}

void WriteCacheStability(const v1::CacheStabilitySection& s, TerminalWriter& t) {
  if (WroteNotRun("cache-stability", s, t)) return;
  WriteName("cache-stability", t);
  if (s.findings().empty()) {
    t.Styled(Style::kGood, "no silently-stale-cache findings");
    if (s.iterations() > 0) {
      t.Text(absl::StrCat(" (", FormatCount(s.iterations(), "iteration", "iterations"), ", ",
                          FormatCount(s.eager_checks(), "eager check", "eager checks"), ")"));
    }
    t.EndLine();
    return;
  }
  int suspicious = 0;
  for (const v1::CacheStabilityFinding& f : s.findings()) {
    suspicious += f.verdict() == v1::CacheStabilityFinding::SUSPICIOUS;
  }
  const int stale = s.findings().size() - suspicious;
  std::vector<std::string> counts;
  if (stale > 0)
    counts.push_back(
        FormatCount(stale, "silently-stale-cache finding", "silently-stale-cache findings"));
  if (suspicious > 0)
    counts.push_back(
        FormatCount(suspicious, "suspicious state change", "suspicious state changes"));
  t.Styled(Style::kWarn, absl::StrJoin(counts, ", "));
  t.EndLine();
  for (int i = 0; i < std::min(s.findings().size(), kMaxItems); ++i) {
    const v1::CacheStabilityFinding& f = s.findings(i);
    const bool is_suspicious = f.verdict() == v1::CacheStabilityFinding::SUSPICIOUS;
    t.Text(absl::StrCat("  ", is_suspicious ? "suspicious " : "stale ", f.state_key(),
                        " at iteration ", f.iteration(), " (cache entry ", f.compile_id(),
                        "): ", f.evidence()));
    t.EndLine();
  }
  WriteMore(s.findings().size(), t);
}

std::string Cause(const v1::BisectCulprit& cause) {
  if (cause.name().empty()) return "not attributed";
  switch (cause.kind()) {
    case v1::BisectCulprit::BACKEND:
      return absl::StrCat("backend ", cause.name());
    case v1::BisectCulprit::SUBSYSTEM:
      return absl::StrCat("subsystem ", cause.name());
    case v1::BisectCulprit::PASS:
      return absl::StrCat("pass ", cause.name());
    case v1::BisectCulprit::DECOMPOSITION:
      return absl::StrCat("decomposition ", cause.name());
    case v1::BisectCulprit::LOWERING:
      return absl::StrCat("lowering ", cause.name());
    case v1::BisectCulprit::CONFIG:
      return absl::StrCat("config ", cause.name());
    case v1::BisectCulprit::TRACING:
      return absl::StrCat("tracing ", cause.name());
    default:
      return cause.name();
  }
}

void WriteDivergence(const v1::DivergenceSection& s, TerminalWriter& t) {
  if (WroteNotRun("divergence", s, t)) return;
  WriteName("divergence", t);
  if (s.first_divergent_layer().empty()) {
    t.Styled(Style::kGood, "matches eager");
    t.Text(absl::StrCat(" (", FormatCount(s.layers_compared(), "layer", "layers"), " compared)"))
        .EndLine();
    return;
  }
  t.Styled(Style::kWarn, absl::StrCat(s.first_divergent_layer(), " diverges first"));
  t.Text(absl::StrCat(" (max abs diff ", FormatScientific(s.max_abs_diff()), ", ",
                      FormatCount(s.layers_compared(), "layer", "layers"),
                      " compared); cause: ", Cause(s.cause())));
  t.EndLine();
  if (s.accumulated_max_abs_diff() != 0 || s.tolerance() != 0) {
    t.Text("  ").Styled(
        Style::kMuted,
        absl::StrCat("isolated ", FormatScientific(s.max_abs_diff()), " · accumulated ",
                     FormatScientific(s.accumulated_max_abs_diff()), " · tolerance ",
                     FormatScientific(s.tolerance())));
    t.EndLine();
  }
  if (s.severity() == v1::DivergenceSection::INFO) {
    t.Text("  ").Styled(Style::kMuted, "RNG parity (fallback_random), not a bug").EndLine();
  } else if (s.severity() == v1::DivergenceSection::LOW) {
    t.Text("  ").Styled(Style::kMuted,
                        "expected low-precision rounding (emulate_precision_casts), not a bug");
    t.EndLine();
  }
}

void WriteLint(const v1::LintSection& s, TerminalWriter& t) {
  if (WroteNotRun("lint", s, t)) return;
  WriteName("lint", t);
  if (s.findings().empty()) {
    t.Styled(Style::kGood, "no known-risky pattern").EndLine();
    return;
  }
  t.Styled(Style::kWarn,
           s.escalated()
               ? absl::StrCat(FormatCount(s.findings().size(), "pattern", "patterns"), ", rated")
               : FormatCount(s.findings().size(), "candidate pattern", "candidate patterns"));
  if (!s.escalated()) t.Text(" (not yet escalated; pass --db <correctness.toml> to rate)");
  t.EndLine();
  for (int i = 0; i < std::min(s.findings().size(), kMaxItems); ++i) {
    const v1::LintFinding& f = s.findings(i);
    t.Text(absl::StrCat("  ", f.pattern(), " at ", Where(f.location()), " (", f.confidence()));
    if (s.escalated() && f.severity() != v1::LintFinding::UNRATED) {
      t.Text(absl::StrCat(", ", Word(f.severity())));
    }
    t.Text(")");
    if (!f.snippet().empty()) t.Text(absl::StrCat(": ", f.snippet()));
    t.EndLine();
  }
  WriteMore(s.findings().size(), t);
}

void WriteFusion(const v1::FusionSection& s, TerminalWriter& t) {
  if (WroteNotRun("fusion", s, t)) return;
  WriteName("fusion", t);
  if (s.opportunities().empty()) {
    t.Styled(Style::kGood, "no unfused algebraic chain").EndLine();
    return;
  }
  t.Text(absl::StrCat(FormatCount(s.opportunities().size(), "opportunity", "opportunities"),
                      ", upper bounds for ranking"));
  t.EndLine();
  for (int i = 0; i < std::min(s.opportunities().size(), kMaxItems); ++i) {
    const v1::FusionOpportunity& o = s.opportunities(i);
    std::string line = absl::StrCat("  ", o.pattern());
    if (o.count() > 1) absl::StrAppend(&line, " ×", o.count());
    absl::StrAppend(&line, " at ", Where(o.location()));
    if (!o.size_hints().empty()) absl::StrAppend(&line, " (sizes at ", o.size_hints(), ")");
    if (o.hbm_bytes_before() > 0) {
      absl::StrAppend(&line, ": HBM ", FormatBytes(o.hbm_bytes_before()), " → ",
                      FormatBytes(o.hbm_bytes_after()));
    }
    if (o.speedup_bound() > 0) {
      absl::StrAppend(&line, ", ≤ ", FormatFixed(o.speedup_bound(), 2), "×");
    }
    t.Text(line).EndLine();
  }
  WriteMore(s.opportunities().size(), t);
}

void WriteRoofline(const v1::RooflineSection& s, TerminalWriter& t) {
  if (WroteNotRun("roofline", s, t)) return;
  WriteName("roofline", t);
  const std::string gpu = s.gpu().empty() ? "" : absl::StrCat(" (GPU ", s.gpu(), ")");
  if (s.kernels().empty()) {
    t.Styled(Style::kMuted, absl::StrCat("no kernel carried flops/bytes", gpu)).EndLine();
    return;
  }
  const bool estimated = std::all_of(s.kernels().begin(), s.kernels().end(),
                                     [](const v1::RooflineKernel& k) { return k.estimated(); });
  std::string line = absl::StrCat(FormatCount(s.kernels().size(), "kernel", "kernels"), gpu);
  if (s.ridge_point() > 0) {
    absl::StrAppend(&line, ", ridge ", FormatFixed(s.ridge_point(), 1), " FLOP/B");
  }
  if (estimated) absl::StrAppend(&line, "; estimated from the graph (no measured flops/bytes)");
  t.Text(line).EndLine();
  if (s.gpu_assumed()) {
    t.Text("  ").Styled(Style::kMuted,
                        absl::StrCat("the session names no GPU: modelled for ", s.gpu(),
                                     "; pass --gpu NAME for another (cl-client help analyze)"));
    t.EndLine();
  }
  for (int i = 0; i < std::min(s.kernels().size(), kMaxItems); ++i) {
    const v1::RooflineKernel& k = s.kernels(i);
    t.Text(absl::StrCat(
        "  ", k.name(), ": ", FormatFixed(k.intensity(), 2), " FLOP/B, ",
        k.bound() == v1::RooflineKernel::BOUND_UNKNOWN ? "bound unknown"
                                                       : absl::StrCat(Word(k.bound()), "-bound"),
        !k.estimated()           ? ""
        : k.size_hints().empty() ? " (estimate)"
                                 : absl::StrCat(" (estimate at ", k.size_hints(), ")")));
    t.EndLine();
  }
  WriteMore(s.kernels().size(), t);
}

void WriteRaw(const v1::RawSection& r, TerminalWriter& t) {
  WriteName("raw", t);
  t.Text(
      absl::StrCat("schema ", r.schema().empty() ? "?" : r.schema(), " · ",
                   FormatCount(r.recompilations(), "recompilation", "recompilations"), " · ",
                   FormatCount(r.compiled_graphs(), "compiled graph", "compiled graphs"),
                   r.empty_graphs() > 0 ? absl::StrCat(" (and ", r.empty_graphs(), " empty)") : "",
                   " · ", FormatCount(r.graph_breaks(), "graph break", "graph breaks"), " · ",
                   FormatCount(r.iterations(), "iteration", "iterations")));
  t.EndLine();
}

// Warnings and errors are listed; informational notes (import counts) are only counted here and
// stay in the JSON and HTML reports.
void WriteDiagnostics(const v1::AnalysisReport& report, TerminalWriter& t) {
  if (report.diagnostics().empty()) return;
  std::vector<const v1::Diagnostic*> serious;
  for (const v1::Diagnostic& d : report.diagnostics()) {
    if (d.severity() == v1::Diagnostic::WARNING || d.severity() == v1::Diagnostic::ERROR)
      serious.push_back(&d);
  }
  WriteName("diagnostics", t);
  t.Text(absl::StrCat(FormatCount(report.diagnostics().size(), "import or validation note",
                                  "import or validation notes"),
                      ", ",
                      serious.size() == 1 ? "1 warning or error"
                                          : absl::StrCat(serious.size(), " warnings or errors")))
      .EndLine();
  for (size_t i = 0; i < std::min(serious.size(), static_cast<size_t>(kMaxItems)); ++i) {
    const v1::Diagnostic& d = *serious[i];
    t.Text("  ").Styled(Style::kWarn, Word(d.severity()));
    t.Text(absl::StrCat(" ", d.where(), ": ", d.message())).EndLine();
  }
  WriteMore(static_cast<int>(serious.size()), t);
}

}  // namespace

std::string RenderText(const v1::AnalysisReport& report, bool color) {
  TerminalWriter t(color);
  WriteHeader(report.metadata(), t);
  WriteVerdict(report.verdict(), t);
  WriteHealth(report.health(), t);
  WriteFailures(report.failures(), t);
  WriteRanks(report.ranks(), t);
  WriteIrDiff(report.ir_diff(), t);
  WriteRecompile(report.recompile(), t);
  WriteCompileTime(report.compile_time(), t);
  WriteCacheStability(report.cache_stability(), t);
  WriteDivergence(report.divergence(), t);
  WriteLint(report.lint(), t);
  WriteFusion(report.fusion(), t);
  WriteRoofline(report.roofline(), t);
  WriteRaw(report.raw(), t);
  WriteDiagnostics(report, t);
  return t.Release();
}

}  // namespace cl

#include "service/summary.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzers/common/restarts.h"
#include "common/number_format.h"
#include "proto/report_words.h"
#include "service/render/health_format.h"
#include "service/render/location_format.h"

namespace cl {

void FillMetadata(const v1::SessionCapture& head, const v1::SessionCapture* base,
                  v1::AnalysisReport* report) {
  const v1::Session& s = head.session();
  v1::Metadata* m = report->mutable_metadata();
  m->set_schema(head.schema());
  m->set_session_id(s.id());
  m->set_torch_version(s.torch_version());
  m->set_gpu(s.gpu());
  *m->mutable_labels() = s.labels();
  m->set_started_at(s.started_at());
  m->set_python_version(s.python_version());
  m->set_host(s.host());
  m->set_rank(s.rank());
  m->set_world_size(s.world_size());
  m->set_has_base(base != nullptr);
}

void FillRaw(const v1::SessionCapture& head, v1::AnalysisReport* report) {
  v1::RawSection* raw = report->mutable_raw();
  raw->set_schema(head.schema());
  uint32_t recompilations = 0, graph_breaks = 0, compiled_graphs = 0, empty_graphs = 0;
  const GraphBreakRestarts restart_breaks(head);
  for (const v1::Compile& c : head.compiles()) {
    if (!c.recompile_reasons().empty()) ++recompilations;
    graph_breaks += static_cast<uint32_t>(restart_breaks.Count(c));
    // A compile that succeeded produced a graph (each recompile its own).
    if (c.status() == v1::Compile::OK) ++compiled_graphs;
    if (c.status() == v1::Compile::EMPTY_GRAPH) ++empty_graphs;
  }
  raw->set_recompilations(recompilations);
  raw->set_compiled_graphs(compiled_graphs);
  raw->set_empty_graphs(empty_graphs);
  raw->set_graph_breaks(graph_breaks);
  raw->set_iterations(static_cast<uint32_t>(head.iterations_size()));
}

namespace {

void Add(v1::Verdict* verdict, absl::string_view section, std::string text) {
  v1::VerdictItem* item = verdict->add_items();
  item->set_section(std::string(section));
  item->set_text(std::move(text));
}

// On a multi-rank session, the rank with the most failed compiles and the one with the most
// recompilations, each when it has more than this rank: a quiet rank's report must not read as the
// whole job's.
void AddLouderRanks(const v1::AnalysisReport& report, v1::Verdict* verdict) {
  const v1::CrossRankSection& ranks = report.ranks();
  if (ranks.status() != v1::OK) return;
  const v1::RankRow* self = nullptr;
  for (const v1::RankRow& row : ranks.ranks()) {
    if (row.rank() == report.metadata().rank()) self = &row;
  }
  if (self == nullptr) return;
  struct Measure {
    uint32_t (v1::RankRow::*get)() const;
    absl::string_view one, many;
  };
  for (const Measure& m : {Measure{&v1::RankRow::failed, "failed compile", "failed compiles"},
                           Measure{&v1::RankRow::recompiles, "recompilation", "recompilations"}}) {
    const v1::RankRow* most = self;
    for (const v1::RankRow& row : ranks.ranks()) {
      if ((row.*m.get)() > (most->*m.get)()) most = &row;
    }
    if (most == self) continue;
    Add(verdict, "ranks",
        absl::StrCat("rank ", most->rank(), " has ", FormatCount((most->*m.get)(), m.one, m.many),
                     " (this is rank ", self->rank(), ", with ", (self->*m.get)(),
                     "): analyze it with --rank ", most->rank()));
  }
  // As many recompiles, for other reasons: another rank's report has other recompiles to read.
  for (const v1::RankDivergence& d : ranks.divergences()) {
    if (d.kind() != "recompile_reasons") continue;
    const bool self_odd =
        std::find(d.ranks().begin(), d.ranks().end(), self->rank()) != d.ranks().end();
    int32_t other = -1;  // an odd rank, or (when this one is odd) the first rank that is not
    for (const v1::RankRow& row : ranks.ranks()) {
      const bool odd = std::find(d.ranks().begin(), d.ranks().end(), row.rank()) != d.ranks().end();
      if (odd != self_odd) {
        other = row.rank();
        break;
      }
    }
    if (other < 0) continue;
    Add(verdict, "ranks",
        absl::StrCat("rank ", other, " recompiled for other reasons than this rank (rank ",
                     self->rank(), "), so it compiled other graphs: analyze it with --rank ",
                     other));
    break;
  }
}

// The recompiles that ask for a change: all but the expected clusters' (an input that changed once
// and that torch made dynamic), which the item only counts.
void AddRecompiles(const v1::RecompileSection& recompile, v1::Verdict* verdict) {
  const uint32_t expected = ExpectedRecompiles(recompile);
  const v1::RecompileCluster* top = nullptr;  // the largest cluster that asks for a change
  std::set<std::string> frames;               // the frames those clusters are in
  for (const v1::RecompileCluster& c : recompile.clusters()) {
    if (c.expected()) continue;
    if (top == nullptr) top = &c;
    frames.insert(absl::StrCat(c.frame(), "\x1f", c.location().file(), ":", c.location().line()));
  }
  if (recompile.total() <= expected) return;
  std::string text = FormatCount(recompile.total() - expected, "recompilation", "recompilations");
  if (expected == 0 && recompile.frames_size() > 1) {
    // Not all in the frame that recompiled most: say across how many.
    absl::StrAppend(&text, " in ", FormatCount(recompile.frames_size(), "frame", "frames"),
                    " (most in ", recompile.frame().name(), ")");
  } else if (expected > 0 && frames.size() > 1) {
    absl::StrAppend(&text, " in ", FormatCount(frames.size(), "frame", "frames"));
  } else if (top != nullptr && !top->frame().empty()) {
    absl::StrAppend(&text, " of ", top->frame());
  } else if (!recompile.frame().name().empty()) {
    absl::StrAppend(&text, " of ", recompile.frame().name());
  }
  if (top != nullptr) {
    absl::StrAppend(&text, ", most on ", Word(top->category()),
                    top->axis().empty() ? "" : absl::StrCat(" of ", top->axis()));
  }
  if (expected > 0) {
    absl::StrAppend(&text, "; ", expected,
                    " more expected (nothing to change; the recompile section says why)");
  }
  Add(verdict, "recompile", std::move(text));
}

// What torch.export could not prove, in one line: the decisions it took from the example inputs
// (asserted at run time), the guards on sizes declared dynamic, the operators it ran for want of
// a fake kernel.
std::string ExportVerdict(const v1::FailuresSection& failures) {
  int decisions = 0, decision_lines = 0, guards = 0, specialized = 0;
  std::vector<std::string> missing, mismatched, stopped;
  for (const v1::ExportFinding& f : failures.export_findings()) {
    switch (f.kind()) {
      case v1::ExportFinding::DATA_DEPENDENT:
        decisions += f.decisions_size();
        ++decision_lines;
        break;
      case v1::ExportFinding::GUARD_EVALUATED:
        guards += std::max(1, f.decisions_size());
        break;
      case v1::ExportFinding::SPECIALIZED:
        specialized += std::max(1, f.decisions_size());
        break;
      case v1::ExportFinding::MISSING_FAKE_KERNEL:
        missing.push_back(f.op());
        break;
      case v1::ExportFinding::MISMATCHED_FAKE_KERNEL:
        if (f.stopped()) {
          stopped.push_back(absl::StrCat(f.op(),
                                         " (torch cannot infer a fake kernel for a view "
                                         "with a storage offset)"));
        } else {
          mismatched.push_back(f.op());
        }
        break;
      case v1::ExportFinding::TRACE_FAILED:
        stopped.push_back(absl::StrCat(HasLocation(f.location())
                                           ? FormatLocation(f.location(), LocationStyle::kTerminal)
                                           : "an unknown line",
                                       f.op().empty() ? "" : absl::StrCat(" (", f.op(), ")")));
        break;
      default:
        break;
    }
  }
  std::vector<std::string> parts;
  if (decisions > 0) {
    parts.push_back(
        absl::StrCat(FormatCount(decisions, "decision", "decisions"), " at ",
                     FormatCount(decision_lines, "line", "lines"),
                     " taken from the example inputs' values, which the ",
                     UnprovenBy(failures) == "torch" ? "compiled graph" : "exported program",
                     " asserts at run time"));
  }
  if (specialized > 0) {
    parts.push_back(absl::StrCat(FormatCount(specialized, "size", "sizes"),
                                 " declared dynamic made a constant by the code"));
  }
  if (guards > 0) {
    parts.push_back(
        absl::StrCat(FormatCount(guards, "guard", "guards"), " on sizes declared dynamic"));
  }
  if (!missing.empty())
    parts.push_back(absl::StrCat("no fake kernel for ", absl::StrJoin(missing, ", ")));
  if (!mismatched.empty()) {
    parts.push_back(absl::StrCat("a fake kernel that disagrees with the real one for ",
                                 absl::StrJoin(mismatched, ", ")));
  }
  const absl::string_view who = UnprovenBy(failures);
  const std::string unproven =
      parts.empty()
          ? ""
          : absl::StrCat(who, " could not prove what it ", who == "torch" ? "compiled" : "exported",
                         ": ", absl::StrJoin(parts, "; "));
  if (stopped.empty()) return unproven;
  // The export raised: nothing was exported, and that comes first.
  return absl::StrCat(who, " stopped with an error at ", absl::StrJoin(stopped, ", "),
                      unproven.empty() ? "" : absl::StrCat("; ", unproven));
}

}  // namespace

void FillVerdict(v1::AnalysisReport* report) {
  v1::Verdict* verdict = report->mutable_verdict();
  verdict->Clear();
  const v1::HealthSection& health = report->health();
  if (health.failed_gates() > 0) {
    for (const v1::GateResult& gate : health.gates()) {
      if (gate.passed()) continue;
      Add(verdict, "health",
          absl::StrCat(FormatCount(health.failed_gates(), "gate", "gates"),
                       " failed: ", gate.message(), health.failed_gates() > 1 ? "; …" : ""));
      break;
    }
  }
  const v1::FailuresSection& failures = report->failures();
  if (failures.status() == v1::OK && !failures.failed().empty()) {
    // A failed torch.export raised to its caller: no frame of it was to run compiled.
    std::set<std::string> kinds, export_kinds;
    int exports = 0;
    for (const v1::FailedCompile& f : failures.failed()) {
      exports += f.exported();
      if (!f.fail_type().empty()) (f.exported() ? export_kinds : kinds).insert(f.fail_type());
    }
    const auto of = [](const std::set<std::string>& k) {
      return k.empty() ? "" : absl::StrCat(" (", absl::StrJoin(k, ", "), ")");
    };
    if (exports < failures.failed_size()) {
      Add(verdict, "failures",
          absl::StrCat(FormatCount(failures.failed_size() - exports, "compile", "compiles"),
                       " failed", of(kinds), ": those frames did not run compiled"));
    }
    if (exports > 0) {
      Add(verdict, "failures",
          absl::StrCat(FormatCount(exports, "export", "exports"), " failed", of(export_kinds),
                       ": torch.export raised, and those models were not exported"));
    }
  }
  if (failures.status() == v1::OK && !failures.export_findings().empty())
    Add(verdict, "failures", ExportVerdict(failures));
  const v1::RawSection& raw = report->raw();
  if (raw.compiled_graphs() == 0 && raw.empty_graphs() > 0) {
    // torch.compile was called and ran, but no op of the model went into a graph: the model ran
    // as plain Python (a DDP wrapper whose forward breaks before the model, a frame whose ops all
    // sit behind a break in a file Dynamo does not trace).
    Add(verdict, "recompile",
        absl::StrCat("torch compiled no op: ",
                     raw.empty_graphs() == 1
                         ? std::string("the one compile it finished has an empty graph")
                         : absl::StrCat("all ", raw.empty_graphs(),
                                        " compiles it finished have empty graphs"),
                     ", so the model ran eagerly"));
  }
  AddLouderRanks(*report, verdict);
  const v1::RecompileSection& recompile = report->recompile();
  if (recompile.status() == v1::OK) {
    for (const v1::CacheLimitHit& hit : recompile.cache_limit_hits()) {
      Add(verdict, "recompile",
          absl::StrCat(hit.frame().empty() ? "a frame" : hit.frame(), " hit ",
                       hit.limit().empty() ? "the recompile limit" : hit.limit(),
                       ": torch stopped compiling it"));
    }
    AddRecompiles(recompile, verdict);
    size_t skipped = 0, breaks = 0;
    for (const v1::GraphBreakSummary& gb : recompile.graph_breaks()) {
      (gb.frame_skipped() ? skipped : breaks) += gb.count();
    }
    if (skipped > 0) {
      Add(verdict, "recompile",
          absl::StrCat(FormatCount(skipped, "graph break", "graph breaks"),
                       " made torch skip a whole frame: it ran eagerly"));
    }
    if (breaks > 0) Add(verdict, "recompile", FormatCount(breaks, "graph break", "graph breaks"));
  }
  // The new breaks, unless a failed --no-new-graph-breaks gate already named them above.
  bool gate_named_breaks = false;
  for (const v1::GateResult& g : health.gates())
    gate_named_breaks |= !g.passed() && g.gate() == "no-new-graph-breaks";
  if (!health.new_breaks().empty() && !gate_named_breaks) {
    const v1::HealthBreak& first = health.new_breaks(0);
    Add(verdict, "health",
        absl::StrCat(FormatCount(health.new_breaks_size(), "graph break", "graph breaks"),
                     " the base did not have",
                     HasLocation(first.location())
                         ? absl::StrCat(", first at ",
                                        FormatLocation(first.location(), LocationStyle::kTerminal))
                         : "",
                     ": ", first.reason()));
  }
  const v1::DivergenceSection& divergence = report->divergence();
  if (divergence.status() == v1::OK && divergence.severity() == v1::DivergenceSection::ERROR) {
    std::string text = absl::StrCat(
        "the compiled model diverges from eager at ",
        divergence.first_divergent_layer().empty() ? std::string("an unnamed layer")
                                                   : divergence.first_divergent_layer(),
        " (max abs diff ", FormatScientific(divergence.max_abs_diff()), ")");
    if (!divergence.cause().name().empty())
      absl::StrAppend(&text, "; bisected to ", divergence.cause().name());
    Add(verdict, "divergence", std::move(text));
  }
  const v1::CacheStabilitySection& cache = report->cache_stability();
  if (cache.status() == v1::OK) {
    size_t stale = 0;
    for (const v1::CacheStabilityFinding& f : cache.findings())
      stale += f.verdict() == v1::CacheStabilityFinding::STALE;
    if (stale > 0) {
      Add(verdict, "cache-stability",
          absl::StrCat(FormatCount(stale, "iteration", "iterations"),
                       " served a stale compiled graph (state changed, no recompile, output "
                       "diverged)"));
    }
  }
  const v1::LintSection& lint = report->lint();
  if (lint.status() == v1::OK) {
    size_t errors = 0;
    for (const v1::LintFinding& f : lint.findings())
      errors += f.severity() == v1::LintFinding::ERROR;
    if (errors > 0) {
      Add(verdict, "lint",
          absl::StrCat(FormatCount(errors, "lint error", "lint errors"),
                       ": source patterns known to break torch.compile"));
    }
  }
  verdict->set_clean(verdict->items().empty());
}

}  // namespace cl

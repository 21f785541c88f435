#include "analyzers/compile_time/compile_time.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "analyzers/common/location.h"
#include "analyzers/common/post_grad_graph.h"
#include "analyzers/common/restarts.h"
#include "analyzers/lowered_facts.h"
#include "analyzers/recompile/advice.h"
#include "analyzers/recompile/cause.h"
#include "analyzers/recompile/frames.h"
#include "common/number_format.h"
#include "proto/report_words.h"

namespace cl {
namespace {

// One phase compilation_metrics times: its name (torch's chromium event name where there is
// one, so the two can be held to each other), the field older torch wrote in seconds and the one
// newer torch writes in microseconds.
struct MetricPhase {
  absl::string_view name;
  absl::string_view seconds_field;
  absl::string_view micros_field;
};

// Whole frame first, then what runs inside it, outermost first.
constexpr MetricPhase kMetricPhases[] = {
    {"entire_frame_compile", "entire_frame_compile_time_s", "dynamo_cumulative_compile_time_us"},
    {"dynamo_before_restart", "dynamo_time_before_restart_s",
     "dynamo_compile_time_before_restart_us"},
    {"backend_compile", "backend_compile_time_s", "aot_autograd_cumulative_compile_time_us"},
    {"inductor_compile", "inductor_compile_time_s", "inductor_cumulative_compile_time_us"},
    {"code_gen", "code_gen_time_s", "inductor_code_gen_cumulative_compile_time_us"},
    {"cpp_triton_compile", "", "triton_compile_time_us"},
    {"pre_grad_passes", "", "pre_grad_pass_time_us"},
    {"joint_graph_passes", "", "joint_graph_pass_time_us"},
    {"post_grad_passes", "", "post_grad_pass_time_us"},
    {"runtime_triton_autotune", "", "runtime_triton_autotune_time_us"},
    {"backward_compile", "", "backward_cumulative_compile_time_us"},
};

static_assert(kMetricPhases[3].name == "inductor_compile");

// The phases held to each other when both sources time them: beyond both tolerances, a gap.
constexpr absl::string_view kComparedPhases[] = {"entire_frame_compile", "backend_compile",
                                                 "inductor_compile", "code_gen"};
constexpr double kGapFraction = 0.05, kGapSeconds = 0.05;

std::optional<double> MetricNumber(const v1::Compile& compile, absl::string_view field) {
  if (field.empty()) return std::nullopt;
  const auto& fields = compile.metrics().fields();
  auto it = fields.find(std::string(field));
  if (it == fields.end() || it->second.kind_case() != google::protobuf::Value::kNumberValue)
    return std::nullopt;
  const double v = it->second.number_value();
  if (!std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

std::optional<double> MetricSeconds(const v1::Compile& compile, const MetricPhase& phase) {
  if (auto s = MetricNumber(compile, phase.seconds_field)) return *s;
  if (auto us = MetricNumber(compile, phase.micros_field)) return *us / 1e6;
  return std::nullopt;
}

std::optional<double> EventSeconds(const v1::Compile& compile, absl::string_view name) {
  for (const v1::Phase& p : compile.phases()) {
    if (p.name() == name) return static_cast<double>(p.duration_us()) / 1e6;
  }
  return std::nullopt;
}

bool IsResumeFrame(absl::string_view name) {
  return absl::StartsWith(name, "torch_dynamo_resume_in_");
}

std::string Seconds(double s) { return absl::StrFormat("%.2f s", s); }

// What each cache's lookups are called in the report's words.
absl::string_view CacheWords(absl::string_view cache) {
  if (cache == "fx_graph") return "FX graph cache";
  if (cache == "aot_autograd") return "AOT autograd cache";
  if (cache == "triton") return "Triton autotune cache";
  return cache;
}

// A key for pairing a head frame with the base's: its code object, not its id (ids are the
// order frames first compiled, which a code change shifts).
std::string FrameKey(const FrameStats& f) { return absl::StrCat(f.file, ":", f.line, ":", f.name); }

// The time a miss cost to compile: torch's own figure for the lookup, else the compile's
// Inductor phase.
double MissSeconds(const v1::CacheEvent& e, const v1::Compile& compile) {
  if (e.time_us() > 0) return static_cast<double>(e.time_us()) / 1e6;
  // The Inductor phase as CompilePhases reads it: the metric, else the trace event.
  if (std::optional<double> s = MetricSeconds(compile, kMetricPhases[3])) return *s;
  return EventSeconds(compile, "inductor_compile").value_or(0);
}

// The compile's recompile cluster, as the recompile pass files it: its frame and the first
// cause failure's category and axis; and how a ledger line of it reads.
struct ClusterKey {
  std::string group;
  std::string one, many;              // "size recompile", "size recompiles"
  std::string tail;                   // " of `forward` (x[0])"
  std::optional<GuardFailure> cause;  // the first cause failure, when the compile gives one
};

ClusterKey RecompileCluster(const v1::Compile& compile, const FrameStats& frame) {
  const RecompileCause cause = ParseRecompileCause(compile);
  const std::string of = absl::StrCat(" of `", frame.name, "`");
  if (cause.causes.empty())
    return {absl::StrCat(compile.frame_id(), "/"), "recompile", "recompiles", of, std::nullopt};
  const GuardFailure& f = *cause.causes.front();
  const std::string axis = f.Axis();
  const absl::string_view category = Word(f.category);
  return {absl::StrCat(compile.frame_id(), "/", category, "/", axis),
          absl::StrCat(category, " recompile"), absl::StrCat(category, " recompiles"),
          absl::StrCat(of, axis.empty() ? "" : absl::StrCat(" (", axis, ")")), f};
}

// Whether a recompile line is torch's expected behaviour, as the recompile pass advises its
// cluster: an input that changed once and that automatic dynamic made dynamic.
bool ExpectedLine(const ClusterKey& key, uint32_t count, const FrameStats& frame) {
  if (!key.cause) return false;
  Cluster cluster;
  cluster.category = key.cause->category;
  cluster.example = *key.cause;
  cluster.count = count;
  cluster.NoteGuardComment(*key.cause);
  return Advise(cluster, frame).expected;
}

// What made torch trace the ledger's restarted compiles again: graph breaks, or a restart of its
// analysis of another kind (an exception class: TensorifyScalarRestartAnalysis).
struct RestartKinds {
  size_t graph_breaks = 0, others = 0;
  std::set<std::string> classes;  // "TensorifyScalarRestartAnalysis"

  std::string Why() const {
    const std::string named =
        classes.empty() ? "" : absl::StrCat(" (", absl::StrJoin(classes, ", "), ")");
    if (others == 0) return "a graph break restarted them";
    if (graph_breaks == 0) return absl::StrCat("torch restarted its analysis", named);
    return absl::StrCat("a restart: ", graph_breaks, " at a graph break, ", others,
                        " of torch's analysis", named);
  }
};

// Files a restarted compile's restart (its reasons are on the attempt after it) under its kind.
void NoteRestart(const std::vector<const v1::Compile*>& attempts, RestartKinds* kinds) {
  bool graph_break = false;
  std::set<std::string> classes;
  for (const v1::Compile* attempt : attempts) {
    for (const std::string& reason : attempt->restart_reasons()) {
      if (IsGraphBreakRestart(reason)) {
        graph_break = true;
        continue;
      }
      // "<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>": its last name.
      absl::string_view name = reason;
      if (absl::ConsumePrefix(&name, "<class '") && absl::ConsumeSuffix(&name, "'>"))
        classes.insert(std::string(name.substr(name.rfind('.') + 1)));
    }
  }
  // A break torch records on the attempt itself (a graph-break record) restarts it too.
  for (const v1::Compile* attempt : attempts) graph_break |= !attempt->graph_breaks().empty();
  if (graph_break || classes.empty()) {
    ++kinds->graph_breaks;
  } else {
    ++kinds->others;
    kinds->classes.insert(classes.begin(), classes.end());
  }
}

// Ledger lines as they fill: cause plus a grouping key (a recompile cluster) to one line.
struct LedgerLine {
  v1::CompileCost cost;
  size_t order = 0;
  const FrameStats* frame = nullptr;  // the one frame of its compiles; null when several
  bool several_frames = false;
  std::optional<ClusterKey> cluster;  // a recompile line's
};

class Ledger {
 public:
  // `cluster`: a recompile's (its group names the line); otherwise one line per cause.
  void Add(absl::string_view cause, const std::optional<ClusterKey>& cluster, double seconds,
           const std::string& compile_id, const FrameStats& frame) {
    if (seconds <= 0 && cause != "first_compile" && cause != "recompile") return;
    auto [it, inserted] =
        lines_.try_emplace(absl::StrCat(cause, "\x1f", cluster ? cluster->group : ""));
    LedgerLine& line = it->second;
    if (inserted) {
      line.cost.set_cause(std::string(cause));
      line.order = lines_.size();
      line.frame = &frame;
      line.cluster = cluster;
    }
    if (FrameKey(*line.frame) != FrameKey(frame)) line.several_frames = true;
    line.cost.set_seconds(line.cost.seconds() + std::max(0.0, seconds));
    if (line.cost.compile_ids().empty() ||
        line.cost.compile_ids(line.cost.compile_ids_size() - 1) != compile_id) {
      line.cost.add_compile_ids(compile_id);
      line.cost.set_count(line.cost.count() + 1);
    }
  }
  std::vector<LedgerLine*> Sorted() {
    std::vector<LedgerLine*> out;
    for (auto& [key, line] : lines_) out.push_back(&line);
    std::sort(out.begin(), out.end(), [](const LedgerLine* a, const LedgerLine* b) {
      if (a->cost.seconds() != b->cost.seconds()) return a->cost.seconds() > b->cost.seconds();
      return a->order < b->order;
    });
    return out;
  }

 private:
  std::map<std::string, LedgerLine> lines_;
};

// The k-th lookup of one cache by one frame, for pairing head and base.
using LookupKey = std::tuple<std::string, std::string, int>;  // frame key, cache, ordinal
struct Lookup {
  const v1::Compile* compile = nullptr;
  const v1::CacheEvent* event = nullptr;
};

std::map<LookupKey, Lookup> Lookups(const v1::SessionCapture& capture,
                                    const std::map<uint32_t, FrameStats>& frames) {
  std::map<LookupKey, Lookup> out;
  std::map<std::pair<std::string, std::string>, int> seen;
  for (const v1::Compile& c : capture.compiles()) {
    const std::string frame = FrameKey(frames.at(c.frame_id()));  // CollectFrames has them all
    for (const v1::CacheEvent& e : c.cache_events()) {
      if (e.cache() == "triton") continue;
      const int k = seen[{frame, e.cache()}]++;
      out[{frame, e.cache(), k}] = {&c, &e};
    }
  }
  return out;
}

void DiffKeys(const v1::CacheEvent& base, const v1::CacheEvent& head, v1::CacheKeyDiff* diff) {
  std::map<std::string, const v1::CacheKeyComponent*> in_base;
  for (const v1::CacheKeyComponent& c : base.components()) in_base.emplace(c.name(), &c);
  std::set<std::string> in_head;
  for (const v1::CacheKeyComponent& c : head.components()) {
    in_head.insert(c.name());
    auto it = in_base.find(c.name());
    if (it != in_base.end() && it->second->hash() == c.hash()) continue;
    v1::KeyComponentChange* change = diff->add_changed();
    change->set_name(c.name());
    change->set_head_value(c.value());
    if (it == in_base.end()) {
      change->set_change("added");
    } else {
      change->set_change("changed");
      change->set_base_value(it->second->value());
    }
  }
  for (const v1::CacheKeyComponent& c : base.components()) {
    if (in_head.count(c.name()) > 0) continue;
    v1::KeyComponentChange* change = diff->add_changed();
    change->set_name(c.name());
    change->set_change("removed");
    change->set_base_value(c.value());
  }
}

// A diagnostic for each phase compilation_metrics and the chromium events both time, where they
// disagree past both tolerances. The section uses the metrics; the gap is the reader's to judge.
// `attempts`: every attempt of c's frame compile. After a restart torch's metrics for the attempt
// that finished count the abandoned attempts' time too (a TensorifyScalarRestartAnalysis restart
// abandons a backend_compile), while each event pair is the attempt's it ended in: such a metric
// that matches the events of all the attempts is no disagreement.
void WarnWhereSourcesDisagree(const v1::Compile& c, const std::vector<const v1::Compile*>& attempts,
                              v1::AnalysisReport* out) {
  const auto close = [](double a, double b) {
    const double gap = std::abs(a - b);
    return gap <= kGapSeconds || gap <= kGapFraction * std::max(a, b);
  };
  for (const MetricPhase& metric : kMetricPhases) {
    if (std::find(std::begin(kComparedPhases), std::end(kComparedPhases), metric.name) ==
        std::end(kComparedPhases))
      continue;
    const std::optional<double> a = MetricSeconds(c, metric);
    const std::optional<double> b = EventSeconds(c, metric.name);
    if (!a || !b || close(*a, *b)) continue;
    if (c.attempt() > 0) {
      double all = 0;
      for (const v1::Compile* attempt : attempts)
        all += EventSeconds(*attempt, metric.name).value_or(0);
      if (close(*a, all)) continue;
    }
    v1::Diagnostic* d = out->add_diagnostics();
    d->set_severity(v1::Diagnostic::WARNING);
    d->set_where(absl::StrCat("compile ", c.id()));
    d->set_message(absl::StrCat("compile time disagrees: compilation_metrics times ", metric.name,
                                " at ", Seconds(*a), ", the chromium events at ", Seconds(*b),
                                " (the section uses compilation_metrics)"));
  }
}

// Why head graphs missed where the base had a lookup of the same frame and cache: the key parts
// that changed, or that the base had this very key.
void DiffAgainstBase(const v1::SessionCapture& capture,
                     const std::map<uint32_t, FrameStats>& frames,
                     const v1::SessionCapture& base_capture, v1::CompileTimeSection* section) {
  const std::map<uint32_t, FrameStats> base_frames = CollectFrames(base_capture);
  const std::map<LookupKey, Lookup> base = Lookups(base_capture, base_frames);
  for (const auto& [key, head] : Lookups(capture, frames)) {
    if (head.event->status() != "miss") continue;
    auto it = base.find(key);
    if (it == base.end()) continue;
    const Lookup& b = it->second;
    v1::CacheKeyDiff* diff = section->add_key_diffs();
    diff->set_compile_id(head.compile->id());
    diff->set_base_compile_id(b.compile->id());
    diff->set_frame(frames.at(head.compile->frame_id()).name);
    diff->set_cache(head.event->cache());
    diff->set_seconds_lost(MissSeconds(*head.event, *head.compile));
    if (!head.event->key().empty() && head.event->key() == b.event->key()) {
      diff->set_base_hit_or_miss_same_key(true);
    } else if (!b.event->components().empty() && !head.event->components().empty()) {
      DiffKeys(*b.event, *head.event, diff);
    }
  }
}

}  // namespace

// The graph's calls by (file, line, op): in a stack of N blocks of one class each of the block's
// (line, op) pairs comes N times, or a multiple of N (two LayerNorms on one line). The most
// common count is N when the pairs that come a multiple of N times hold most of the calls.
std::optional<RepeatedBlock> FindRepeatedBlock(const v1::Graph& graph) {
  std::map<std::tuple<absl::string_view, uint32_t, absl::string_view>, int> calls;
  int sourced = 0;
  for (const v1::Node& n : graph.nodes()) {
    // A library's own loops (a foreach optimizer's per-parameter code) are no block of the model.
    if (n.op() != "call_function" || n.source().file().empty() || IsLibraryFile(n.source().file()))
      continue;
    ++calls[{n.source().file(), n.source().line(), n.target()}];
    ++sourced;
  }
  std::map<int, int> pairs_by_count;
  for (const auto& [key, count] : calls) ++pairs_by_count[count];
  int times = 0, most = 0;
  for (const auto& [count, pairs] : pairs_by_count) {
    if (pairs >= most) std::tie(times, most) = std::pair{count, pairs};
  }
  if (times < 2) return std::nullopt;
  RepeatedBlock block;
  block.times = times;
  std::map<absl::string_view, int> by_file;
  for (const auto& [key, count] : calls) {
    if (count % times == 0) by_file[std::get<0>(key)] += count;
  }
  for (const auto& [file, n] : by_file) {
    if (n > block.nodes) std::tie(block.file, block.nodes) = std::pair{std::string(file), n};
  }
  if (block.nodes < 0.6 * sourced) return std::nullopt;
  for (const auto& [key, count] : calls) {
    const auto& [file, line, target] = key;
    if (count % times != 0 || file != block.file) continue;
    if (block.first_line == 0 || line < block.first_line) block.first_line = line;
    block.last_line = std::max(block.last_line, line);
  }
  return block;
}

namespace {

// A first compile that takes most of a slow session, of a graph that is one block repeated:
// compiling the block instead compiles it once (checked on torch 2.6: twelve blocks compiled one
// by one, `layer.compile()`, made two compiles, the second for an input needing grad).
void SuggestRegionalCompilation(const PassInput& in, v1::CompileTimeSection* section) {
  const v1::SessionCapture& capture = in.head;
  constexpr double kSlowFirstCompile = 10.0;  // seconds: below it a cold start is no bother
  constexpr int kBlocks = 4;
  double first_s = 0;
  for (const v1::CompileCost& cost : section->ledger()) {
    if (cost.cause() == "first_compile") first_s += cost.seconds();
  }
  if (first_s < kSlowFirstCompile || first_s < 0.5 * section->total_s()) return;
  for (const v1::Graph* graph : LoweredGraphsPerFrame(capture)) {
    const LoweredGraphFacts* kept = LoweredFactsOf(in, *graph);
    const std::optional<RepeatedBlock> block =
        kept != nullptr ? kept->block : FindRepeatedBlock(*graph);
    if (!block || block->times < kBlocks) continue;
    const v1::Location where = MakeLocation(capture.session(), block->file, block->first_line);
    const std::string lines =
        block->last_line > block->first_line
            ? absl::StrCat(where.file(), ":", block->first_line, "-", block->last_line)
            : absl::StrCat(where.file(), ":", block->first_line);
    v1::Suggestion* s = section->add_suggestions();
    s->set_text(absl::StrCat(
        "First compiles are most of the compile time, and a compiled graph is one block's code (",
        lines, ") repeated ", block->times,
        " times, every copy of which Inductor lowers: compile the block rather than the whole "
        "model (regional compilation: `for block in model.layers: block.compile()`). Blocks of "
        "the same code and input shapes share one compiled graph, their weights its inputs, so "
        "a cold start compiles each kind of block once"));
    s->set_evidence(absl::StrCat(Seconds(first_s), " of ", Seconds(section->total_s()),
                                 " went to first compiles; ", graph->id(), " repeats ", lines, " ",
                                 block->times, " times (", block->nodes, " of its ",
                                 kept != nullptr ? kept->nodes : graph->nodes_size(), " nodes)"));
    return;
  }
}

// The remedies, each with its evidence: per bypass reason, per dominant cost, per key diff.
void Suggest(const std::map<std::pair<std::string, std::string>, v1::BypassCount>& bypasses,
             v1::CompileTimeSection* section) {
  const double total = section->total_s();
  const auto suggest = [&](std::string text, std::string evidence) {
    v1::Suggestion* s = section->add_suggestions();
    s->set_text(std::move(text));
    s->set_evidence(std::move(evidence));
  };
  for (const auto& [key, b] : bypasses) {
    const std::string evidence =
        absl::StrCat(FormatCount(b.count(), "bypass", "bypasses"), " of the ",
                     CacheWords(key.first), ": \"", b.reason(), "\"");
    if (b.reason_class() == "custom_pass_no_uuid") {
      suggest(
          "Give the custom pass a uuid(): make it a torch._inductor.custom_graph_pass."
          "CustomGraphPass whose uuid() changes only when the pass does, and the cache can "
          "key the graph again",
          evidence);
    } else if (b.reason_class() == "autocast") {
      suggest(
          "Move the autocast region out of the compiled graph (or compile inside it): a "
          "graph that enters autocast is not cached",
          evidence);
    } else if (b.reason_class() == "unsupported_op") {
      suggest(
          "The graph calls an op the cache cannot key: keep that op out of the compiled "
          "region, or accept a cold compile of this graph every run",
          evidence);
    } else if (key.first != "triton") {
      suggest(absl::StrCat("Every run compiles this graph cold: the ", CacheWords(key.first),
                           " refuses it"),
              evidence);
    }
  }
  double recompile_s = 0, expected_s = 0, fragment_s = 0, autotune_s = 0;
  for (const v1::CompileCost& cost : section->ledger()) {
    if (cost.cause() == "recompile") recompile_s += cost.seconds();
    if (cost.cause() == "recompile" && cost.expected()) expected_s += cost.seconds();
    if (cost.cause() == "graph_break_fragment" || cost.cause() == "restart")
      fragment_s += cost.seconds();
  }
  for (const v1::CompileTime& row : section->compiles()) {
    if (auto it = row.phases().find("runtime_triton_autotune"); it != row.phases().end())
      autotune_s += it->second;
  }
  // Shares of a session that compiled in under a second are not worth a remedy.
  constexpr double kWorthASuggestion = 1.0;
  if (recompile_s >= kWorthASuggestion && recompile_s > 0.5 * total) {
    if (expected_s >= 0.5 * recompile_s) {
      // Mostly expected (an input made dynamic, a no_grad evaluation's graph): nothing to fix;
      // an input made dynamic has one compile to save.
      suggest(
          "Recompiles are most of the compile time, and mostly expected ones (an input that "
          "changed once made dynamic, a second mode such as `torch.no_grad()` evaluation): "
          "nothing to fix; to save the compile of an input made dynamic, mark it dynamic before "
          "the first call (`torch._dynamo.mark_dynamic` for a tensor's dim)",
          absl::StrCat(Seconds(recompile_s), " of ", Seconds(total), " went to recompiles, ",
                       Seconds(expected_s), " of them expected"));
    } else {
      suggest("Recompiles are most of the compile time: apply the recompile section's remedy first",
              absl::StrCat(Seconds(recompile_s), " of ", Seconds(total), " went to recompiles"));
    }
  }
  if (fragment_s >= kWorthASuggestion && fragment_s > 0.3 * total) {
    suggest(
        "Graph breaks cost compile time of their own (the frames they create and the "
        "restarts): fix the breaks the recompile section lists, most frequent first",
        absl::StrCat(Seconds(fragment_s), " of ", Seconds(total),
                     " went to graph-break fragments and restarts"));
  }
  if (autotune_s >= kWorthASuggestion && autotune_s > 0.3 * total) {
    suggest(
        "Autotuning dominates: persist TORCHINDUCTOR_CACHE_DIR (or use a remote autotune "
        "cache) so that the next run reads the tuned configs",
        absl::StrCat(Seconds(autotune_s), " of ", Seconds(total), " went to autotuning"));
  }
  uint32_t same_key = 0;
  double same_key_s = 0;
  std::map<std::string, uint32_t> changed_parts;
  for (const v1::CacheKeyDiff& d : section->key_diffs()) {
    if (d.base_hit_or_miss_same_key()) {
      ++same_key;
      same_key_s += d.seconds_lost();
    }
    for (const v1::KeyComponentChange& ch : d.changed()) {
      if (!absl::StartsWith(ch.name(), "gm") && !absl::StartsWith(ch.name(), "example_inputs"))
        ++changed_parts[ch.name()];
    }
  }
  if (same_key > 0) {
    suggest(
        "The cache was empty here: these graphs have the base's very keys. Persist "
        "TORCHINDUCTOR_CACHE_DIR across runs (a volume, not the container's /tmp), or use a "
        "remote cache",
        absl::StrCat(FormatCount(same_key, "graph", "graphs"), " missed with the base's key, ",
                     Seconds(same_key_s), " to compile again"));
  }
  for (const auto& [name, n] : changed_parts) {
    suggest(absl::StrCat("`", name,
                         "` changed since the base: every graph keyed on it "
                         "compiles cold; set it the same way in both runs if the change was not "
                         "meant"),
            absl::StrCat(FormatCount(n, "missed graph", "missed graphs"), " name it"));
  }
}

}  // namespace

std::vector<PhaseSeconds> CompilePhases(const v1::Compile& compile) {
  std::vector<PhaseSeconds> out;
  std::set<std::string> named;
  for (const MetricPhase& phase : kMetricPhases) {
    if (std::optional<double> s = MetricSeconds(compile, phase)) {
      out.push_back({std::string(phase.name), *s});
      named.insert(std::string(phase.name));
    }
  }
  for (const v1::Phase& p : compile.phases()) {
    if (named.insert(p.name()).second)
      out.push_back({p.name(), static_cast<double>(p.duration_us()) / 1e6});
  }
  return out;
}

double CompileSeconds(const v1::Compile& compile) {
  if (std::optional<double> s = MetricSeconds(compile, kMetricPhases[0])) return *s;
  if (std::optional<double> s = EventSeconds(compile, "entire_frame_compile")) return *s;
  return 0;
}

absl::string_view ClassifyBypassReason(absl::string_view reason) {
  const std::string r = absl::AsciiStrToLower(reason);
  if (absl::StrContains(r, "custom pass") || absl::StrContains(r, "uuid") ||
      absl::StrContains(r, "custom_pass"))
    return "custom_pass_no_uuid";
  if (absl::StrContains(r, "autocast")) return "autocast";
  if (absl::StrContains(r, "freezing")) return "freezing";
  if (absl::StrContains(r, "user defined triton") || absl::StrContains(r, "triton kernel"))
    return "user_triton_kernel";
  if (absl::StrContains(r, "unsupported call_function") ||
      absl::StrContains(r, "unsupported target") || absl::StrContains(r, "higher_order") ||
      absl::StrContains(r, "unsupported op"))
    return "unsupported_op";
  if (absl::StrContains(r, "pickl")) return "unpicklable";
  if (absl::StrContains(r, "unbacked") || absl::StrContains(r, "symint") ||
      absl::StrContains(r, "dynamic shape"))
    return "dynamic_shapes";
  if (absl::StrContains(r, "config") || absl::StrContains(r, "cacheable"))
    return "non_cacheable_config";
  return "other";
}

absl::Status CompileTimePass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  const v1::SessionCapture& capture = in.head;
  v1::CompileTimeSection* section = out->mutable_compile_time();
  if (capture.compiles().empty()) {
    section->set_status(v1::SKIPPED);
    section->set_reason("no compiles in the capture");
    return absl::OkStatus();
  }
  const std::map<uint32_t, FrameStats> frames = CollectFrames(capture);
  bool from_metrics = false, from_events = false;
  for (const v1::Compile& c : capture.compiles()) {
    from_metrics |= MetricSeconds(c, kMetricPhases[0]).has_value();
    from_events |= EventSeconds(c, "entire_frame_compile").has_value();
  }
  if (!from_metrics && !from_events) {
    section->set_status(v1::SKIPPED);
    section->set_reason(
        "no compile times in the capture: the log has no compilation_metrics and no chromium "
        "trace events for its compiles");
    return absl::OkStatus();
  }
  section->set_source(from_metrics && from_events ? "compilation_metrics and chromium events"
                      : from_metrics              ? "compilation_metrics"
                                                  : "chromium events");

  // The seconds each fx_graph / aot_autograd key cost where it missed, and where it was first
  // looked up (a miss on a key looked up before is one the session shows was avoidable).
  absl::flat_hash_map<std::string, double> cold_seconds;
  absl::flat_hash_map<std::string, size_t> first_lookup;  // key -> compile index
  for (int i = 0; i < capture.compiles_size(); ++i) {
    const v1::Compile& c = capture.compiles(i);
    for (const v1::CacheEvent& e : c.cache_events()) {
      if (e.key().empty() || e.cache() == "triton") continue;
      const std::string key = absl::StrCat(e.cache(), ":", e.key());
      first_lookup.try_emplace(key, i);
      if (e.status() == "miss") cold_seconds.try_emplace(key, MissSeconds(e, c));
    }
  }
  // And the base's, for what a head hit saved where the head never compiled the key cold.
  absl::flat_hash_map<std::string, double> base_cold_seconds;
  if (in.base != nullptr) {
    for (const v1::Compile& c : in.base->compiles()) {
      for (const v1::CacheEvent& e : c.cache_events()) {
        if (e.status() == "miss" && !e.key().empty())
          base_cold_seconds.try_emplace(absl::StrCat(e.cache(), ":", e.key()), MissSeconds(e, c));
      }
    }
  }

  Ledger ledger;
  // By code object: torch._dynamo.reset() gives one function new frame ids.
  std::map<std::string, v1::FrameCompileTime> by_frame;
  std::map<std::string, v1::CacheOutcomes> caches;
  std::map<std::pair<std::string, std::string>, v1::BypassCount> bypasses;
  double total = 0;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<const v1::Compile*>> attempts;
  RestartKinds restarts;
  for (const v1::Compile& c : capture.compiles())
    attempts[{c.frame_id(), c.frame_compile_id()}].push_back(&c);
  // A frame's first compile after torch._dynamo.reset() whose code compiled before the reset:
  // the same function compiled again from nothing (a test suite's or a loop's reset).
  absl::flat_hash_map<uint32_t, uint32_t> reset_round;  // frame id → Frame.reset_round
  for (const v1::Frame& f : capture.frames()) reset_round[f.id()] = f.reset_round();
  std::set<std::tuple<std::string, std::string, uint32_t>> compiled_code;  // name, file, line
  uint32_t again_after_reset = 0;
  for (int i = 0; i < capture.compiles_size(); ++i) {
    if (in.Cancelled()) return absl::CancelledError("compile_time pass cancelled");
    const v1::Compile& c = capture.compiles(i);
    const FrameStats& frame = frames.at(c.frame_id());
    const double seconds = CompileSeconds(c);
    total += seconds;
    v1::CompileTime* row = section->add_compiles();
    row->set_id(c.id());
    row->set_frame(frame.name);
    row->set_seconds(seconds);
    const std::vector<PhaseSeconds> phases = CompilePhases(c);
    for (const PhaseSeconds& p : phases) (*row->mutable_phases())[p.name] = p.seconds;
    const std::vector<const v1::Compile*>& tries = attempts[{c.frame_id(), c.frame_compile_id()}];
    WarnWhereSourcesDisagree(c, tries, out);
    // Torch logs a recompile's reasons on its first attempt; a restart's later attempt, which
    // carries the time, is filed under them too, as the recompile pass files the frame compile.
    const v1::Compile* with_reasons = &c;
    if (c.recompile_reasons().empty()) {
      auto logged = std::find_if(tries.begin(), tries.end(), [](const v1::Compile* attempt) {
        return !attempt->recompile_reasons().empty();
      });
      if (logged != tries.end()) with_reasons = *logged;
    }

    // The compile's own cause, less what a restart and an avoidable miss took of it.
    std::string cause = "first_compile";
    std::optional<ClusterKey> cluster;
    if (c.status() == v1::Compile::FAILED) {
      cause = "failed";
    } else if (c.frame_compile_id() > 0 || !with_reasons->recompile_reasons().empty()) {
      cause = "recompile";
      cluster = RecompileCluster(*with_reasons, frame);
    } else if (IsResumeFrame(frame.name)) {
      cause = "graph_break_fragment";
    }
    const bool code_seen = !compiled_code.emplace(frame.name, frame.file, frame.line).second;
    if (cause == "first_compile" && c.attempt() == 0 && code_seen && reset_round[c.frame_id()] > 0)
      ++again_after_reset;
    double rest = seconds;
    // Time before a restart, of a compile torch restarted. A frame dynamo skipped (a resume
    // function left with nothing to compile) logs its time there too, with no restart: that is its
    // own.
    const bool restarted = c.attempt() > 0 || !c.restart_reasons().empty();
    if (cause != "failed" && restarted) {
      for (const PhaseSeconds& p : phases) {
        if (p.name != "dynamo_before_restart" || p.seconds <= 0) continue;
        const double restart = std::min(rest, p.seconds);
        ledger.Add("restart", std::nullopt, restart, c.id(), frame);
        rest -= restart;
        NoteRestart(tries, &restarts);
      }
    }
    // A compile's FX graph and AOT autograd misses time the same Inductor work: the largest
    // avoidable one is carved out, once.
    double avoidable = 0;
    for (const v1::CacheEvent& e : c.cache_events()) {
      v1::CompileCacheLookup* lookup = row->add_caches();
      lookup->set_cache(e.cache());
      lookup->set_outcome(e.status());
      lookup->set_key(e.key());
      const std::string key = absl::StrCat(e.cache(), ":", e.key());
      v1::CacheOutcomes& totals = caches[e.cache()];
      totals.set_cache(e.cache());
      if (e.status() == "hit") {
        totals.set_hits(totals.hits() + 1);
        double saved = static_cast<double>(e.time_us()) / 1e6;
        if (saved <= 0) {
          if (auto it = cold_seconds.find(key); it != cold_seconds.end()) saved = it->second;
          if (auto it = base_cold_seconds.find(key); saved <= 0 && it != base_cold_seconds.end())
            saved = it->second;
        }
        lookup->set_saved_s(saved);
        totals.set_saved_s(totals.saved_s() + saved);
      } else if (e.status() == "miss") {
        totals.set_misses(totals.misses() + 1);
        auto first = first_lookup.find(key);
        // A recompile on a dynamic-shape guard looks up its graph's key again, and the entry
        // saved for it keeps the same shape guards, which fail the same way: a miss it must take.
        const bool shape_guard = cluster && cluster->cause &&
                                 cluster->cause->category == v1::RecompileCategory::SYMBOLIC_SHAPE;
        if (cause != "failed" && !shape_guard && !e.key().empty() && e.cache() != "triton" &&
            first != first_lookup.end() && first->second < static_cast<size_t>(i))
          avoidable = std::max(avoidable, MissSeconds(e, c));
      } else if (e.status() == "bypass") {
        totals.set_bypasses(totals.bypasses() + 1);
        lookup->set_reason(e.reason());
        const absl::string_view cls = ClassifyBypassReason(e.reason());
        lookup->set_reason_class(std::string(cls));
        v1::BypassCount& b = bypasses[{e.cache(), std::string(cls)}];
        if (b.count() == 0) {
          b.set_reason_class(std::string(cls));
          b.set_reason(e.reason());
        }
        b.set_count(b.count() + 1);
      }
    }
    if (avoidable > 0) {
      const double lost = std::min(rest, avoidable);
      ledger.Add("avoidable_cache_miss", std::nullopt, lost, c.id(), frame);
      rest -= lost;
    }
    // An attempt torch restarted has no time of its own: it is in the next attempt's.
    if (c.status() == v1::Compile::RESTARTED && seconds == 0) {
      row->set_cause("restart");
    } else {
      ledger.Add(cause, cluster, rest, c.id(), frame);
      row->set_cause(cause);
    }

    v1::FrameCompileTime& f = by_frame[FrameKey(frame)];
    if (f.compiles() == 0) {
      f.set_frame(frame.name);
      if (!frame.file.empty())
        *f.mutable_location() = MakeLocation(capture.session(), frame.file, frame.line);
    }
    f.set_seconds(f.seconds() + seconds);
    f.set_compiles(f.compiles() + 1);
  }
  section->set_status(v1::OK);
  section->set_total_s(total);

  for (LedgerLine* line : ledger.Sorted()) {
    v1::CompileCost& cost = line->cost;
    const std::string n = FormatCount(cost.count(), "compile", "compiles");
    const std::string& cause = cost.cause();
    if (cause == "first_compile") {
      cost.set_detail(absl::StrCat(
          n, ": the first of each frame",
          again_after_reset == 0
              ? ""
              : absl::StrCat(" (", again_after_reset,
                             " of them the same code again after `torch._dynamo.reset()`, "
                             "which drops every compiled graph: reset only where a test or "
                             "benchmark needs a cold start)")));
    } else if (cause == "recompile" && line->cluster) {
      const ClusterKey& k = *line->cluster;
      cost.set_expected(!line->several_frames && ExpectedLine(k, cost.count(), *line->frame));
      cost.set_detail(absl::StrCat(FormatCount(cost.count(), k.one, k.many), k.tail,
                                   cost.expected() ? ", expected" : ""));
    } else if (cause == "graph_break_fragment") {
      cost.set_detail(
          absl::StrCat(n, " of frames a graph break created (torch_dynamo_resume_in_…)"));
    } else if (cause == "restart") {
      cost.set_detail(absl::StrCat(n, " traced again after ", restarts.Why()));
    } else if (cause == "failed") {
      cost.set_detail(absl::StrCat(n, " that failed: their time bought nothing"));
    } else if (cause == "avoidable_cache_miss") {
      cost.set_detail(absl::StrCat(n,
                                   " missed the cache on a key the session had already "
                                   "looked up: the entry was not kept, or the shape guards it "
                                   "was saved with did not hold"));
    }
  }
  for (LedgerLine* line : ledger.Sorted()) {
    // Where: the line's one frame, when all its compiles are of one.
    if (!line->several_frames && line->frame != nullptr && !line->frame->file.empty()) {
      *line->cost.mutable_location() =
          MakeLocation(capture.session(), line->frame->file, line->frame->line);
    }
    *section->add_ledger() = line->cost;
  }

  std::vector<v1::FrameCompileTime> frame_rows;
  for (auto& [id, f] : by_frame) frame_rows.push_back(std::move(f));
  std::stable_sort(frame_rows.begin(), frame_rows.end(),
                   [](const auto& a, const auto& b) { return a.seconds() > b.seconds(); });
  for (v1::FrameCompileTime& f : frame_rows) *section->add_frames() = std::move(f);
  for (auto& [name, totals] : caches) {
    const uint32_t lookups = totals.hits() + totals.misses() + totals.bypasses();
    if (lookups > 0) totals.set_hit_ratio(static_cast<double>(totals.hits()) / lookups);
    for (auto& [key, b] : bypasses) {
      if (key.first == name) *totals.add_bypass_reasons() = b;
    }
    *section->add_caches() = std::move(totals);
  }

  if (in.base != nullptr) DiffAgainstBase(capture, frames, *in.base, section);
  Suggest(bypasses, section);
  SuggestRegionalCompilation(in, section);
  return absl::OkStatus();
}

}  // namespace cl

#include "capture/torch_trace/trace_parser.h"

#include <algorithm>
#include <ctime>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "capture/torch_trace/fx_graph.h"
#include "capture/torch_trace/guard_tree.h"
#include "capture/torch_trace/json_value.h"
#include "capture/torch_trace/lens_records.h"
#include "capture/validate.h"
#include "common/digest.h"
#include "common/utf8.h"
#include "simdjson.h"

namespace cl {
namespace {

using simdjson::dom::element;

constexpr int kMaxDiagnostics = 50;  // individual problems listed; the rest are only counted

// The keys of the envelope; the one other key is the event (reference/tlparse.md §1.3).
bool IsEnvelopeKey(std::string_view key) {
  return key == "rank" || key == "frame_id" || key == "frame_compile_id" || key == "attempt" ||
         key == "compiled_autograd_id" || key == "has_payload" || key == "stack" ||
         key == "subgraph_name" || key == "severity" || key == "timestamp" || key == "pathname" ||
         key == "thread";
}

std::optional<v1::Graph::Stage> GraphStage(absl::string_view name) {
  static const auto* const kStages = new std::vector<std::pair<absl::string_view, v1::Graph::Stage>>{
      {"dynamo_output_graph", v1::Graph::DYNAMO},
      {"aot_forward_graph", v1::Graph::AOT_FORWARD},
      {"aot_backward_graph", v1::Graph::AOT_BACKWARD},
      {"aot_inference_graph", v1::Graph::AOT_INFERENCE},
      {"aot_joint_graph", v1::Graph::AOT_JOINT},
      {"inductor_pre_grad_graph", v1::Graph::PRE_GRAD},
      {"before_pre_grad_graph", v1::Graph::PRE_GRAD},
      {"after_pre_grad_graph", v1::Graph::PRE_GRAD},
      {"before_recompile_pre_grad", v1::Graph::PRE_GRAD},
      {"after_recompile_pre_grad", v1::Graph::PRE_GRAD},
      {"inductor_post_grad_graph", v1::Graph::POST_GRAD},
      {"before_post_grad_graph", v1::Graph::POST_GRAD},
      {"after_post_grad_graph", v1::Graph::POST_GRAD},
      {"before_recompile_post_grad", v1::Graph::POST_GRAD},
      {"after_recompile_post_grad", v1::Graph::POST_GRAD},
  };
  for (const auto& [event, stage] : *kStages) {
    if (event == name) return stage;
  }
  return std::nullopt;
}

// "fx_graph_cache_miss" -> {"fx_graph", "miss"}; "aotautograd_cache_hit" -> {"aot_autograd", "hit"}.
std::optional<std::pair<std::string, std::string>> CacheArtifact(absl::string_view name) {
  for (const auto& [prefix, cache] : {std::pair<absl::string_view, absl::string_view>{"fx_graph_cache_", "fx_graph"},
                                      {"aotautograd_cache_", "aot_autograd"}}) {
    if (!absl::StartsWith(name, prefix)) continue;
    const absl::string_view status = name.substr(prefix.size());
    if (status == "hit" || status == "miss" || status == "bypass") {
      return std::make_pair(std::string(cache), std::string(status));
    }
  }
  return std::nullopt;
}

// The user frames of a graph-break payload's "User code traceback:" block.
void ReadUserStack(absl::string_view payload, v1::GraphBreak* out) {
  const size_t at = payload.find("User code traceback:");
  if (at == absl::string_view::npos) return;
  absl::string_view rest = payload.substr(at);
  size_t pos = 0;
  while ((pos = rest.find("File \"", pos)) != absl::string_view::npos) {
    const size_t file_start = pos + 6;
    const size_t file_end = rest.find("\", line ", file_start);
    const size_t eol = rest.find('\n', file_start);
    if (file_end == absl::string_view::npos || (eol != absl::string_view::npos && file_end > eol)) break;
    // Stop at the compiler's own traceback, which follows a blank line.
    const absl::string_view before = rest.substr(0, pos);
    if (before.find("\n\n") != absl::string_view::npos) break;
    uint32_t line = 0;
    size_t i = file_end + 8;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') line = line * 10 + (rest[i++] - '0');
    std::string name;
    if (absl::StartsWith(rest.substr(i), ", in ")) {
      const size_t name_end = rest.find('\n', i);
      name = std::string(rest.substr(i + 5, name_end == absl::string_view::npos ? absl::string_view::npos : name_end - i - 5));
    }
    v1::StackFrame* f = out->add_user_stack();
    f->set_file(std::string(rest.substr(file_start, file_end - file_start)));
    f->set_line(line);
    f->set_name(name);
    pos = i;
  }
}

std::string Rfc3339(int year, const TraceRecord& r) {
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, r.month, r.day, r.hour, r.minute,
                         r.second, r.micros / 1000);
}

// A stable id for a session read from a log: the same log always gets the same id.
std::string SessionIdFor(const TraceRecord& first) {
  const std::string seed = absl::StrCat(first.pid, " ", first.month, first.day, first.hour, first.minute,
                                        first.second, first.micros, " ", first.metadata);
  const std::string hex = Md5Hex(seed);
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-", hex.substr(16, 4),
                      "-", hex.substr(20, 12));
}

}  // namespace

struct TraceParser::Envelope {
  std::optional<int64_t> rank, frame_id, frame_compile_id, attempt, ca_id;
  std::string event;
  std::string compile_id;  // empty unless the record names a whole compile
};

TraceParser::TraceParser(TraceParseOptions options)
    : options_(std::move(options)), json_(std::make_unique<simdjson::dom::parser>()) {}

TraceParser::~TraceParser() = default;

void TraceParser::Diagnose(v1::Diagnostic::Severity severity, uint64_t line, std::string message) {
  if (diagnostics_kept_++ >= kMaxDiagnostics) return;
  v1::Diagnostic* d = capture_.add_diagnostics();
  d->set_severity(severity);
  d->set_where(absl::StrCat(options_.source_name, ":", line));
  d->set_message(std::move(message));
}

void TraceParser::Problem(ImportCounter counter, uint64_t line, std::string message) {
  Count(counter);
  Diagnose(InfoOf(counter).severity, line, std::move(message));
}

void TraceParser::Add(TraceRecord&& r) {
  if (!r.md5_ok) Diagnose(v1::Diagnostic::WARNING, r.line, "payload md5 does not match has_payload (kept)");
  // Payload text becomes proto strings, which must be valid UTF-8: check once here (fast, and
  // nearly always true) rather than walking the finished capture. The metadata is JSON, which the
  // JSON parser checks itself.
  if (!simdjson::validate_utf8(r.payload.data(), r.payload.size())) {
    r.payload = ToValidUtf8(r.payload);
    Count(ImportCounter::kInvalidUtf8Payloads);
  }
  element root;
  if (json_->parse(r.metadata).get(root) != simdjson::SUCCESS || !root.is_object()) {
    Problem(ImportCounter::kBadJson, r.line,
            "the record's metadata is not a JSON object (skipped)");
    return;
  }
  Envelope env;
  env.rank = json::Int(root, "rank");
  env.frame_id = json::Int(root, "frame_id");
  env.frame_compile_id = json::Int(root, "frame_compile_id");
  env.attempt = json::Int(root, "attempt");
  env.ca_id = json::Int(root, "compiled_autograd_id");
  element event_value;
  for (simdjson::dom::key_value_pair kv : json::AsObject(root)) {
    if (IsEnvelopeKey(kv.key)) continue;
    if (env.event.empty()) {
      env.event = std::string(kv.key);
      event_value = kv.value;
    }
  }
  if (env.event.empty()) {
    Problem(ImportCounter::kNoEvent, r.line, "the record names no event (skipped)");
    return;
  }
  if (env.event != "str") {
    // tlparse's rule (§1.4): the first ranked record fixes the rank; records of another rank, and
    // unranked records after the first ranked one, belong to another process's log.
    if (env.rank) {
      if (!rank_) rank_ = env.rank;
      if (*env.rank != *rank_) {
        Count(ImportCounter::kOtherRank);
        return;
      }
      seen_ranked_ = true;
    } else if (seen_ranked_) {
      Count(ImportCounter::kOtherRank);
      return;
    }
  }
  if (env.frame_id && env.frame_compile_id && *env.frame_id >= 0 && *env.frame_compile_id >= 0) {
    // What a compile id can spell (capture/validate.h): past it, the record keeps no compile.
    const auto fits = [](std::optional<int64_t> n) { return !n || (*n >= 0 && *n <= kMaxCompileIdNumber); };
    if (fits(env.frame_id) && fits(env.frame_compile_id) && fits(env.ca_id) &&
        env.attempt.value_or(0) <= kMaxCompileIdNumber) {
      env.compile_id = absl::StrCat(env.ca_id ? absl::StrCat("!", *env.ca_id, "/") : "", *env.frame_id, "/",
                                    *env.frame_compile_id,
                                    env.attempt.value_or(0) > 0 ? absl::StrCat("_", *env.attempt) : "");
    } else {
      Diagnose(v1::Diagnostic::WARNING, r.line,
               absl::StrCat("compile id numbers past ", kMaxCompileIdNumber, " (the record is kept without a compile)"));
    }
  }
  if (!first_) first_ = r;
  Dispatch(r, env, event_value);
}

void TraceParser::Dispatch(const TraceRecord& r, const Envelope& env, element value) {
  const std::string& e = env.event;
  // Every record that names a whole compile id is part of that compile, whatever its event.
  if (e != "str") CompileFor(env);
  if (e == "str") {
    std::string_view s;
    int64_t index;
    if (value.is_array() && value.at(0).get_string().get(s) == simdjson::SUCCESS &&
        value.at(1).get_int64().get(index) == simdjson::SUCCESS) {
      strings_[index] = std::string(s);
    } else {
      Count(ImportCounter::kBadStrRecord);
    }
    return;
  }
  if (e == "dynamo_start") {
    if (std::optional<element> stack = json::Field(value, "stack")) OnDynamoStart(env, *stack);
    else CompileFor(env);
    return;
  }
  if (e == "compilation_metrics") return OnMetrics(r, env, value);
  if (e == "artifact") {
    const std::string name = json::String(value, "name").value_or("");
    if (LensRecordOf(name)) return OnLensRecord(r, name, value);
    return OnArtifact(r, env, name);
  }
  if (e == "dynamo_cpp_guards_str") return OnGuards(r, env);
  if (std::optional<v1::Graph::Stage> stage = GraphStage(e)) return OnGraph(r, env, e, *stage);
  if (e == "dynamo_graph_break_reason") return OnArtifact(r, env, e);  // the 2024 top-level form
  KeepExtra(r, env, e);
}

v1::Compile* TraceParser::CompileFor(const Envelope& env) {
  if (env.compile_id.empty()) return nullptr;
  auto [it, inserted] = compile_index_.try_emplace(env.compile_id, capture_.compiles_size());
  if (!inserted) return capture_.mutable_compiles(it->second);
  v1::Compile* c = capture_.add_compiles();
  c->set_id(env.compile_id);
  c->set_frame_id(static_cast<uint32_t>(*env.frame_id));
  c->set_frame_compile_id(static_cast<uint32_t>(*env.frame_compile_id));
  c->set_attempt(static_cast<uint32_t>(std::max<int64_t>(0, env.attempt.value_or(0))));
  c->set_rank(static_cast<int32_t>(rank_.value_or(0)));
  if (!frame_index_.contains(c->frame_id())) {
    frame_index_[c->frame_id()] = capture_.frames_size();
    capture_.add_frames()->set_id(c->frame_id());
  }
  return c;
}

void TraceParser::OnDynamoStart(const Envelope& env, element stack) {
  v1::Compile* c = CompileFor(env);
  if (c == nullptr || !stack.is_array()) return;
  // The compiled frame is the last user frame: skip dynamo's own wrapper frames at the end.
  v1::Frame* frame = capture_.mutable_frames(frame_index_[c->frame_id()]);
  if (!frame->name().empty()) return;
  simdjson::dom::array frames = json::AsArray(stack);
  std::vector<element> items(frames.begin(), frames.end());
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    std::string file = json::String(*it, "filename").value_or("");
    if (file.empty()) {
      if (std::optional<int64_t> index = json::Int(*it, "filename")) {
        auto s = strings_.find(*index);
        if (s != strings_.end()) file = s->second;
      }
    }
    if (absl::StrContains(file, "torch/_dynamo/convert_frame.py") || absl::StrContains(file, "torch/_dynamo/eval_frame.py")) {
      continue;
    }
    frame->set_name(json::String(*it, "name").value_or(""));
    frame->set_file(file);
    frame->set_line(static_cast<uint32_t>(std::max<int64_t>(0, json::Int(*it, "line").value_or(0))));
    return;
  }
}

void TraceParser::OnMetrics(const TraceRecord& r, const Envelope& env, element m) {
  v1::Compile* c = CompileFor(env);
  if (c == nullptr) {
    KeepExtra(r, env, "compilation_metrics");
    return;
  }
  if (!m.is_object()) return;
  google::protobuf::Struct* metrics = c->mutable_metrics();
  for (simdjson::dom::key_value_pair kv : json::AsObject(m)) {
    json::ToProtoValue(kv.value, &(*metrics->mutable_fields())[std::string(kv.key)]);
  }
  // Seconds (older torch) as microseconds, or nothing when they do not fit in an int64 of them.
  const auto micros = [&](const char* key) -> std::optional<int64_t> {
    const std::optional<double> seconds = json::Number(m, key);
    if (!seconds) return std::nullopt;
    if (std::optional<int64_t> us = json::ToInt64(*seconds * 1e6)) return us;
    Diagnose(v1::Diagnostic::WARNING, r.line,
             absl::StrCat("compilation_metrics.", key, " ", *seconds, " s is out of range (ignored)"));
    return std::nullopt;
  };
  if (auto v = json::Int(m, "start_time_us")) c->set_start_us(*v);
  else if (auto us = micros("start_time")) c->set_start_us(*us);
  if (auto v = json::Int(m, "duration_us")) c->set_duration_us(std::max<int64_t>(0, *v));
  else if (auto us = micros("entire_frame_compile_time_s")) c->set_duration_us(std::max<int64_t>(0, *us));
  if (auto v = json::Int(m, "guard_count")) c->set_guard_count(static_cast<uint32_t>(std::max<int64_t>(0, *v)));
  if (auto v = json::String(m, "fail_type")) c->set_fail_type(*v);
  if (auto v = json::String(m, "fail_reason")) c->set_fail_reason(*v);
  if (std::optional<element> restarts = json::Field(m, "restart_reasons"); restarts && restarts->is_array()) {
    for (element item : json::AsArray(*restarts)) {
      std::string_view s;
      if (item.get_string().get(s) == simdjson::SUCCESS) c->add_restart_reasons(std::string(s));
    }
  }
  if (c->recompile_reasons().empty()) {
    if (auto v = json::String(m, "recompile_reason"); v && !v->empty()) c->add_recompile_reasons(*v);
  }
  if (!year_) {
    if (auto s = json::Number(m, "start_time"); s && *s > 0) {
      const std::time_t t = static_cast<std::time_t>(*s);
      std::tm tm{};
      gmtime_r(&t, &tm);
      year_ = tm.tm_year + 1900;
    }
  }
  if (auto v = json::String(m, "python_version"); v && capture_.session().python_version().empty()) {
    capture_.mutable_session()->set_python_version(*v);
  }
  // co_name / co_filename / co_firstlineno name the compiled code object exactly.
  v1::Frame* frame = capture_.mutable_frames(frame_index_[c->frame_id()]);
  if (auto v = json::String(m, "co_name")) frame->set_name(*v);
  if (auto v = json::String(m, "co_filename")) frame->set_file(*v);
  if (auto v = json::Int(m, "co_firstlineno"); v && *v >= 0) frame->set_line(static_cast<uint32_t>(*v));
}

void TraceParser::OnArtifact(const TraceRecord& r, const Envelope& env, absl::string_view name) {
  if (std::optional<v1::Graph::Stage> stage = GraphStage(name)) return OnGraph(r, env, name, *stage);
  if (name == "inductor_runtime_and_tensor_meta" || name == "inductor_tlparse_runtime" ||
      name == "triton_kernel_info") {
    return OnKernels(r, env, name);
  }
  v1::Compile* c = CompileFor(env);
  if (name == "recompile_reasons" && c != nullptr) {
    element payload;
    if (json_->parse(r.payload).get(payload) != simdjson::SUCCESS) {
      Problem(ImportCounter::kBadArtifactJson, r.line, "recompile_reasons payload is not JSON (skipped)");
      return;
    }
    c->clear_recompile_reasons();
    std::string_view s;
    if (payload.get_string().get(s) == simdjson::SUCCESS) {
      c->add_recompile_reasons(std::string(s));
    } else if (payload.is_array()) {
      for (element item : json::AsArray(payload)) {
        if (item.get_string().get(s) == simdjson::SUCCESS) c->add_recompile_reasons(std::string(s));
      }
    }
    return;
  }
  if (name == "dynamo_graph_break_reason" && c != nullptr) {
    v1::GraphBreak* gb = c->add_graph_breaks();
    const size_t tb = r.payload.find("\nUser code traceback:");
    gb->set_reason(r.payload.substr(0, tb));
    ReadUserStack(r.payload, gb);
    return;
  }
  if (std::optional<std::pair<std::string, std::string>> cache = CacheArtifact(name); cache && c != nullptr) {
    v1::CacheEvent* ev = c->add_cache_events();
    ev->set_cache(cache->first);
    ev->set_status(cache->second);
    element payload;
    if (json_->parse(r.payload).get(payload) == simdjson::SUCCESS) {
      if (auto key = json::String(payload, "key")) ev->set_key(*key);
    }
    return;
  }
  KeepExtra(r, env, absl::StrCat("artifact:", name));
}

void TraceParser::OnGraph(const TraceRecord& r, const Envelope& env, absl::string_view event,
                          v1::Graph::Stage stage) {
  v1::Compile* c = CompileFor(env);
  std::string id = absl::StrCat(env.compile_id.empty() ? "-" : env.compile_id, "/", event);
  if (const int n = ++graph_count_[id]; n > 1) absl::StrAppend(&id, "#", n);
  v1::Graph graph;
  graph.set_id(id);
  if (c != nullptr) graph.set_compile_id(c->id());
  graph.set_stage(stage);
  const FxParseResult parsed = ParseFxGraphText(r.payload, &graph);
  Count(ImportCounter::kGraphs);
  if (parsed.skipped_lines > 0) {
    Problem(ImportCounter::kGraphLinesNotUnderstood, r.line,
            absl::StrCat(event, ": ", parsed.skipped_lines, " line(s) of the FX text not understood",
                         parsed.problems.empty() ? "" : absl::StrCat(" (first: ", parsed.problems[0], ")")));
  }
  // The passes rely on unique node names; a graph that breaks that is dropped, not half-used.
  absl::flat_hash_set<absl::string_view> names;
  for (const v1::Node& n : graph.nodes()) {
    if (!names.insert(n.name()).second) {
      Problem(ImportCounter::kGraphsDropped, r.line,
              absl::StrCat(event, ": node \"", absl::CHexEscape(n.name()), "\" is defined twice; graph dropped"));
      return;
    }
  }
  if (c != nullptr) {
    c->add_graph_ids(id);
    if (stage == v1::Graph::POST_GRAD && !absl::StartsWith(event, "before_")) lowered_graph_[c->id()] = id;
  }
  *capture_.add_graphs() = std::move(graph);
}

void TraceParser::OnKernels(const TraceRecord& r, const Envelope& env, absl::string_view name) {
  element payload;
  if (json_->parse(r.payload).get(payload) != simdjson::SUCCESS) {
    Problem(ImportCounter::kBadArtifactJson, r.line, absl::StrCat(name, " payload is not JSON (skipped)"));
    return;
  }
  if (name == "triton_kernel_info") {
    if (!payload.is_object()) return;
    for (simdjson::dom::key_value_pair kv : json::AsObject(payload)) {
      const std::string kernel(kv.key);
      if (kernel_index_.try_emplace(kernel, capture_.kernels_size()).second) {
        capture_.add_kernels()->set_name(kernel);
      }
    }
    return;
  }
  // inductor_runtime_and_tensor_meta: {"ops": [{"name", "type", "estimated_runtime_ns", "outputs"}]}
  std::optional<element> ops = json::Field(payload, "ops");
  if (!ops || !ops->is_array()) return;
  for (element op : json::AsArray(*ops)) {
    v1::Kernel* k = capture_.add_kernels();
    k->set_name(json::String(op, "name").value_or(""));
    if (auto ns = json::Number(op, "estimated_runtime_ns")) k->set_estimated_us(*ns / 1000.0);
    k->set_launches(1);
    // The graph it ran for: the compile's graph lowered last, or, when none has come yet, the one
    // it lowers last once every graph is known (at Finish).
    if (env.compile_id.empty()) continue;
    auto lowered = lowered_graph_.find(env.compile_id);
    k->set_graph_id(lowered != lowered_graph_.end() ? lowered->second : absl::StrCat("?", env.compile_id));
  }
}

void TraceParser::OnGuards(const TraceRecord& r, const Envelope& env) {
  v1::Compile* c = CompileFor(env);
  if (c == nullptr) {
    Problem(ImportCounter::kGuardTreesWithoutCompile, r.line, "dynamo_cpp_guards_str names no compile (skipped)");
    return;
  }
  GuardTreeSources guards = ReadGuardSources(r.payload);
  for (const GuardTreeProblem& problem : guards.problems) {
    // Payload lines follow the header line, one each.
    Problem(ImportCounter::kGuardTreeLinesNotUnderstood, r.line + 1 + problem.line,
            absl::StrCat("dynamo_cpp_guards_str: ", problem.what, " (skipped)"));
  }
  if (!guards.has_tree) {
    Problem(ImportCounter::kGuardTreesWithoutGuardLine, r.line,
            "dynamo_cpp_guards_str payload holds no guard tree (no \"+- \" node line)");
    return;
  }
  c->clear_guarded_sources();
  for (std::string& source : guards.sources) c->add_guarded_sources(std::move(source));
}

void TraceParser::OnLensRecord(const TraceRecord& r, absl::string_view name, element artifact) {
  if (auto encoding = json::String(artifact, "encoding"); encoding && *encoding != "json") {
    Problem(ImportCounter::kLensRecordsNotValid, r.line,
            absl::StrCat(name, " payload is not valid: encoding is \"", absl::CHexEscape(*encoding),
                         "\", not \"json\" (skipped)"));
    return;
  }
  const std::optional<LensRecord> kind = LensRecordOf(name);
  std::vector<std::string> warnings;
  const absl::Status status = MergeLensRecord(*kind, r.payload, &capture_, &warnings);
  if (!status.ok()) {
    Problem(ImportCounter::kLensRecordsNotValid, r.line, std::string(status.message()));
    return;
  }
  if (*kind == LensRecord::kIteration) iteration_lines_.push_back(r.line);
  for (std::string& warning : warnings) {
    Problem(ImportCounter::kLensRecordsWithWarning, r.line, std::move(warning));
  }
}

// An iteration must name a frame and compile of this log (the capture's own invariant); one that
// does not came from another process or a damaged log, and is dropped rather than failing the
// whole import.
void TraceParser::DropDanglingIterations() {
  auto* iterations = capture_.mutable_iterations();
  int kept = 0;
  for (int i = 0; i < iterations->size(); ++i) {
    const v1::Iteration& it = iterations->Get(i);
    const uint64_t line = i < static_cast<int>(iteration_lines_.size()) ? iteration_lines_[i] : 0;
    std::string problem;
    if (!frame_index_.contains(it.frame_id())) {
      problem = absl::StrCat("frame ", it.frame_id());
    } else if (!it.compile_id().empty() && !compile_index_.contains(it.compile_id())) {
      problem = absl::StrCat("compile \"", absl::CHexEscape(it.compile_id()), "\"");
    }
    if (!problem.empty()) {
      Problem(ImportCounter::kLensIterationsWithoutCompile, line,
              absl::StrCat("compile_lens_iteration ", it.index(), " names ", problem,
                           ", which this log never compiled (skipped)"));
      continue;
    }
    if (kept != i) iterations->SwapElements(kept, i);
    ++kept;
  }
  while (iterations->size() > kept) iterations->RemoveLast();
}

void TraceParser::KeepExtra(const TraceRecord& r, const Envelope& env, absl::string_view kind) {
  counts_.AddKeptInExtras(kind);
  if (extras_bytes_ >= options_.extras_budget) {
    Count(ImportCounter::kExtrasOverBudget);
    return;
  }
  v1::Extra* x = capture_.add_extras();
  x->set_kind(std::string(kind));
  x->set_compile_id(env.compile_id);
  // The metadata, a newline and the payload, cut at the cap on a character boundary (both are
  // valid UTF-8 by now): copy only what is kept. The cap is a budget, so no mark is added; the
  // extra says it was truncated.
  const size_t cap = options_.extra_payload_cap;
  const absl::string_view metadata = Utf8Prefix(r.metadata, cap);
  std::string* text = x->mutable_payload();
  text->assign(metadata.data(), metadata.size());
  bool truncated = metadata.size() < r.metadata.size();
  if (r.has_payload) {
    if (!truncated && text->size() < cap) {
      const absl::string_view payload = Utf8Prefix(r.payload, cap - text->size() - 1);
      text->reserve(text->size() + 1 + payload.size());
      text->push_back('\n');
      text->append(payload.data(), payload.size());
      truncated = payload.size() < r.payload.size();
    } else {
      truncated = true;
    }
  }
  x->set_truncated(truncated);
  extras_bytes_ += text->size();
}

v1::SessionCapture TraceParser::Finish(const TokenizerCounters& t) {
  DropDanglingIterations();
  // Statuses: a compile's own metrics decide; without them, a later attempt means it restarted.
  // The highest attempt of each frame compile, rather than a set of every earlier attempt's id:
  // the attempt is the log's number, up to 999,999,999 (a fuzzed log's took minutes to list).
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint32_t> last_attempt;  // (frame, frame compile)
  for (const v1::Compile& c : capture_.compiles()) {
    uint32_t& last = last_attempt[{c.frame_id(), c.frame_compile_id()}];
    last = std::max(last, c.attempt());
  }
  // Only a compile whose id is the plain "frame/compile[_attempt]" of its own numbers (not a
  // compiled-autograd one) is named by a later attempt's restart.
  const auto restarted = [&](const v1::Compile& c) {
    return c.attempt() < last_attempt.find({c.frame_id(), c.frame_compile_id()})->second &&
           c.id() == absl::StrCat(c.frame_id(), "/", c.frame_compile_id(),
                                  c.attempt() > 0 ? absl::StrCat("_", c.attempt()) : "");
  };
  for (v1::Compile& c : *capture_.mutable_compiles()) {
    const auto& f = c.metrics().fields();
    if (!f.empty()) {
      auto ops = f.find("graph_op_count");
      if (!c.fail_type().empty()) c.set_status(v1::Compile::FAILED);
      else if (ops != f.end() && ops->second.kind_case() == google::protobuf::Value::kNumberValue &&
               ops->second.number_value() == 0)
        c.set_status(v1::Compile::EMPTY_GRAPH);
      else c.set_status(v1::Compile::OK);
    } else if (restarted(c)) {
      c.set_status(v1::Compile::RESTARTED);
    } else {
      Count(ImportCounter::kCompilesWithoutMetrics);
    }
  }
  for (v1::Kernel& k : *capture_.mutable_kernels()) {
    if (!absl::StartsWith(k.graph_id(), "?")) continue;
    auto it = lowered_graph_.find(k.graph_id().substr(1));
    k.set_graph_id(it == lowered_graph_.end() ? "" : it->second);
  }
  std::sort(capture_.mutable_frames()->begin(), capture_.mutable_frames()->end(),
            [](const v1::Frame& a, const v1::Frame& b) { return a.id() < b.id(); });

  capture_.set_schema("0.5.0");
  v1::Session* s = capture_.mutable_session();
  if (first_) {
    if (s->id().empty()) s->set_id(SessionIdFor(*first_));
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    s->set_started_at(Rfc3339(year_.value_or(tm.tm_year + 1900), *first_));
  }
  if (rank_) s->set_rank(static_cast<int32_t>(*rank_));

  // The counters, as data: what was read, and every oddity.
  counts_.AddTokenizer(t);
  counts_.AppendDiagnostics(options_.source_name, &capture_);
  return std::move(capture_);
}

}  // namespace cl

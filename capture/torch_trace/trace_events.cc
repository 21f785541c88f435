// TraceParser's handlers of the events the capture model knows (trace_parser.h): which handler
// reads which event, and what each takes from its record. The envelope, the extras and the
// finished capture are trace_parser.cc's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "capture/torch_trace/fx_graph.h"
#include "capture/torch_trace/guard_tree.h"
#include "capture/torch_trace/json_value.h"
#include "capture/torch_trace/lens_records.h"
#include "capture/torch_trace/lowered_graphs.h"
#include "capture/torch_trace/trace_parser.h"
#include "common/number_format.h"
#include "common/utf8.h"
#include "simdjson.h"

namespace cl {
namespace {

using simdjson::dom::element;

std::optional<v1::Graph::Stage> GraphStage(absl::string_view name) {
  static const auto* const kStages =
      new std::vector<std::pair<absl::string_view, v1::Graph::Stage>>{
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

bool IsCacheOutcome(absl::string_view status) {
  return status == "hit" || status == "miss" || status == "bypass";
}

// "fx_graph_cache_miss" -> {"fx_graph", "miss"}; "aotautograd_cache_hit" -> {"aot_autograd",
// "hit"}; torch 2.6's "aotautograd_cache_hash" -> {"aot_autograd", ""}: its payload's
// cache_state says which.
std::optional<std::pair<std::string, std::string>> CacheArtifact(absl::string_view name) {
  for (const auto& [prefix, cache] :
       {std::pair<absl::string_view, absl::string_view>{"fx_graph_cache_", "fx_graph"},
        {"aotautograd_cache_", "aot_autograd"}}) {
    if (!absl::StartsWith(name, prefix)) continue;
    const absl::string_view status = name.substr(prefix.size());
    if (IsCacheOutcome(status)) return std::make_pair(std::string(cache), std::string(status));
    if (status == "hash") return std::make_pair(std::string(cache), std::string());
  }
  return std::nullopt;
}

// One "[hash] name: value" element of a cache payload's `components`.
std::optional<v1::CacheKeyComponent> ReadKeyComponent(absl::string_view text) {
  constexpr size_t kHashChars = 16, kValueBytes = 160;
  if (!absl::ConsumePrefix(&text, "[")) return std::nullopt;
  const size_t close = text.find("] ");
  const size_t colon = text.find(": ", close);
  if (close == absl::string_view::npos || colon == absl::string_view::npos) return std::nullopt;
  v1::CacheKeyComponent c;
  // A hash is hex in torch's logs; cut as text all the same, never inside a character.
  c.set_hash(std::string(Utf8Prefix(text.substr(0, close), kHashChars)));
  c.set_name(std::string(text.substr(close + 2, colon - close - 2)));
  c.set_value(ClipUtf8(text.substr(colon + 2), kValueBytes));  // a graph's code: its start
  return c;
}

// What a kept component costs in memory: the message, its slot in the repeated field, each
// non-empty string's own std::string (protobuf allocates one per set field) and, past the short
// string held inside it, its buffer. The text alone is under half of that for torch's typical
// "[hash] inductor_config[name]: value" part.
size_t MemoryOf(const v1::CacheKeyComponent& component) {
  size_t bytes = sizeof(v1::CacheKeyComponent) + sizeof(void*);
  for (const std::string* s : {&component.name(), &component.hash(), &component.value()}) {
    if (s->empty()) continue;
    bytes += sizeof(std::string);
    const char* own = reinterpret_cast<const char*>(s);
    if (s->data() < own || s->data() >= own + sizeof(std::string)) bytes += s->capacity() + 1;
  }
  return bytes;
}

// dynamo's own frames, which wrap the compiled one at the end of a dynamo_start stack.
bool IsDynamoWrapperFrame(const v1::StackFrame& frame) {
  return absl::StrContains(frame.file(), "torch/_dynamo/convert_frame.py") ||
         absl::StrContains(frame.file(), "torch/_dynamo/eval_frame.py");
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
    if (file_end == absl::string_view::npos || (eol != absl::string_view::npos && file_end > eol))
      break;
    // Stop at the compiler's own traceback, which follows a blank line.
    const absl::string_view before = rest.substr(0, pos);
    if (before.find("\n\n") != absl::string_view::npos) break;
    uint32_t line = 0;
    size_t i = file_end + 8;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9')
      line = line * 10 + (rest[i++] - '0');
    std::string name;
    if (absl::StartsWith(rest.substr(i), ", in ")) {
      const size_t name_end = rest.find('\n', i);
      name = std::string(rest.substr(
          i + 5, name_end == absl::string_view::npos ? absl::string_view::npos : name_end - i - 5));
    }
    v1::StackFrame* f = out->add_user_stack();
    f->set_file(std::string(rest.substr(file_start, file_end - file_start)));
    f->set_line(line);
    f->set_name(name);
    pos = i;
  }
}

}  // namespace

void TraceParser::Dispatch(const TraceRecord& r, const Envelope& env, element value, element root) {
  const std::string& e = env.event;
  // Every record that names a whole compile id is part of that compile, whatever its event.
  if (e != "str") CompileFor(env);
  if (e == "str") {
    std::string_view s;
    int64_t index;
    if (value.is_array() && value.at(0).get_string().get(s) == simdjson::SUCCESS &&
        value.at(1).get_int64().get(index) == simdjson::SUCCESS) {
      absl::string_view name(s.data(), s.size());
      if (name.size() > kMaxStrNameBytes) {
        Count(ImportCounter::kLongStrNames);
        name = Utf8Prefix(name, kMaxStrNameBytes);
      }
      strings_[index] = std::string(name);
    } else {
      Count(ImportCounter::kBadStrRecord);
    }
    return;
  }
  if (e == "dynamo_start") {
    if (std::optional<element> stack = json::Field(value, "stack"))
      OnDynamoStart(env, *stack);
    else
      CompileFor(env);
    return;
  }
  if (e == "compilation_metrics") return OnMetrics(r, env, value);
  // Torch 2.6 logs a compile it refused (RecompileLimitExceeded at the cache-size limit) under
  // this name, with fail_type and fail_reason: for a compile with no metrics of its own they are
  // its metrics. A backward compile's record (its compile already has metrics) stays an extra.
  if (e == "bwd_compilation_metrics" && !env.compile_id.empty()) {
    if (v1::Compile* c = CompileFor(env); c != nullptr && c->metrics().fields().empty() &&
                                          json::String(value, "fail_type").has_value()) {
      return OnMetrics(r, env, value);
    }
  }
  if (e == "artifact") {
    const std::string name = json::String(value, "name").value_or("");
    if (LensRecordOf(name)) return OnLensRecord(r, name, value);
    if (name == "make_fx_fail_partial" && env.compile_id.empty()) return OnTraceFailed(r, env);
    return OnArtifact(r, env, name);
  }
  if (e == "dynamo_cpp_guards_str") return OnGuards(r, env);
  if (e == "create_unbacked_symbol" && env.compile_id.empty())
    return OnExportSymbol(r, value, root);
  if (e == "create_symbol" || e == "create_unbacked_symbol") {
    return OnSymbol(env, value, e == "create_unbacked_symbol");
  }
  if (e == "symbolic_shape_specialization") {
    // Of no compile, a size of the export's inputs (it has a source) made a constant; an unbacked
    // symbol's (`pos = start.item()` indexing) is its propagate_real_tensors decision already.
    if (!env.compile_id.empty()) return OnSpecialization(env, value);
    if (std::optional<element> sources = json::Field(value, "sources");
        sources && sources->is_array() && json::AsArray(*sources).size() > 0) {
      return OnExportIssue(r, env, v1::ExportIssue::SPECIALIZED, value, root);
    }
    return;
  }
  // Draft export's records name no compile: a guard it evaluated ("eval") on a dim declared
  // dynamic is one of its issues; a compile's guards are the compile's.
  if (e == "guard_added" && env.compile_id.empty() &&
      json::String(value, "prefix").value_or("") == "eval") {
    return OnExportIssue(r, env, v1::ExportIssue::GUARD_EVALUATED, value, root);
  }
  if (e == "guard_added_fast" || e == "guard_added") {
    return OnShapeGuard(env, value, e == "guard_added_fast");
  }
  if (e == "propagate_real_tensors" || e == "propagate_real_tensors_provenance")
    return OnExportIssue(r, env, v1::ExportIssue::DATA_DEPENDENT, value, root);
  if (e == "missing_fake_kernel")
    return OnExportIssue(r, env, v1::ExportIssue::MISSING_FAKE_KERNEL, value, root);
  if (e == "mismatched_fake_kernel")
    return OnExportIssue(r, env, v1::ExportIssue::MISMATCHED_FAKE_KERNEL, value, root);
  if (e == "chromium_event" && r.has_payload) return OnChromiumEvent(r);
  if (std::optional<v1::Graph::Stage> stage = GraphStage(e)) return OnGraph(r, env, e, *stage);
  if (e == "dynamo_graph_break_reason") return OnArtifact(r, env, e);  // the 2024 top-level form
  KeepExtra(r, env, e);
}

// A trace event: {"name", "ts" (microseconds since the epoch), "args": {"compile_id"}, "ph"}.
// A "B" and the next "E" of the same name and compile make one phase of that compile.
void TraceParser::OnChromiumEvent(const TraceRecord& r) {
  element event;
  if (json_->parse(r.payload).get(event) != simdjson::SUCCESS) return;
  const std::optional<double> ts = json::Number(event, "ts");
  if (ts && !year_) NoteYear(*ts / 1e6);
  const std::optional<std::string> name = json::String(event, "name");
  const std::optional<std::string> ph = json::String(event, "ph");
  std::optional<element> args = json::Field(event, "args");
  if (!ts || !name || !ph || !args) return;
  std::optional<std::string> torch_id = json::String(*args, "compile_id");
  if (!torch_id) return;
  if (*ph != "B" && *ph != "E") return;
  // Pairs open under torch's own id: a compile's first events begin before its dynamo_start is
  // logged, and after a torch._dynamo.reset() that dynamo_start is what starts the new round.
  const std::pair<std::string, std::string> key{*torch_id, *name};
  if (*ph == "B") {
    open_phases_[key].push_back(*ts);
    return;
  }
  const std::string id = reset_round_ == 0 ? *torch_id : absl::StrCat(*torch_id, "@", reset_round_);
  // torch names the frame compile, not the attempt ("0/0" through a restart's 0/0_1): the time
  // goes to the attempt running when the event ended, the latest one.
  auto compile = compile_index_.find(id);
  if (torch_id->find('_') == std::string::npos) {
    for (int attempt = 1;; ++attempt) {
      std::string later = absl::StrCat(*torch_id, "_", attempt);
      if (reset_round_ != 0) absl::StrAppend(&later, "@", reset_round_);
      auto it = compile_index_.find(later);
      if (it == compile_index_.end()) break;
      compile = it;
    }
  }
  auto open = open_phases_.find(key);
  if (open == open_phases_.end() || open->second.empty()) return;
  const double begun = open->second.back();
  open->second.pop_back();
  if (open->second.empty()) open_phases_.erase(open);
  if (*ts < begun || compile == compile_index_.end()) return;
  // Times past what an int64 of microseconds holds (a hostile or broken log) are no phase.
  const std::optional<int64_t> begin_us = json::ToInt64(begun), end_us = json::ToInt64(*ts);
  if (!begin_us || !end_us || *begin_us < 0) return;
  v1::Compile& c = *capture_.mutable_compiles(compile->second);
  // A pair that begins after its compile's frame compile has ended is work torch did later under
  // the same id: in training, the backward graph compiled at the first backward() (compile_fx's
  // bw_compiler, with an inductor_compile and code_gen of its own), which the compile's
  // compilation_metrics leave out. Its phases are kept apart from the frame's.
  std::string phase_name = *name;
  if (*name != "entire_frame_compile") {
    for (const v1::Phase& p : c.phases()) {
      if (p.name() != "entire_frame_compile") continue;
      if (p.spans_us_size() > 0 && p.spans_us(p.spans_us_size() - 1) <= *begin_us)
        absl::StrAppend(&phase_name, kAfterFrameCompile);
      break;  // phases are one per name
    }
  }
  v1::Phase* phase = nullptr;
  for (v1::Phase& p : *c.mutable_phases()) {
    if (p.name() == phase_name) phase = &p;
  }
  if (phase == nullptr) {
    phase = c.add_phases();
    phase->set_name(phase_name);
    phase->set_start_us(*begin_us);
  } else {
    // Torch logs some events again, word for word, under the envelopes of the compiles after
    // (the collectives logs of tlparse's corpus: 0/1's pairs three times, under 0/1, 0/2 and 0/3):
    // a pair already counted is not counted again.
    for (int i = 0; i + 1 < phase->spans_us_size(); i += 2) {
      if (phase->spans_us(i) == *begin_us && phase->spans_us(i + 1) == *end_us) return;
    }
  }
  // The difference of the doubles, as torch's own figures are read (0 <= spent <= end_us).
  const int64_t spent = json::ToInt64(*ts - begun).value_or(*end_us - *begin_us);
  phase->set_duration_us(phase->duration_us() > INT64_MAX - spent ? INT64_MAX
                                                                  : phase->duration_us() + spent);
  if (constexpr int kMaxSpans = 64; phase->spans_us_size() < 2 * kMaxSpans) {
    phase->add_spans_us(*begin_us);
    phase->add_spans_us(*end_us);
  }
}

void TraceParser::ReadJsonStack(element stack,
                                google::protobuf::RepeatedPtrField<v1::StackFrame>* out,
                                bool with_code) {
  if (!stack.is_array()) return;
  for (element item : json::AsArray(stack)) {
    v1::StackFrame* frame = out->Add();
    std::string file = json::String(item, "filename").value_or("");
    if (file.empty()) {  // an index into the `str` table
      if (std::optional<int64_t> index = json::Int(item, "filename")) {
        auto s = strings_.find(*index);
        if (s != strings_.end()) {
          file = s->second;
          copied_from_str_table_ += file.size();
          // A stack of many frames naming one long name: no more copies once past the budget.
          if (!TakeIn(file.size())) return;
        }
      }
    }
    frame->set_file(std::move(file));
    frame->set_name(json::String(item, "name").value_or(""));
    frame->set_line(
        static_cast<uint32_t>(std::max<int64_t>(0, json::Int(item, "line").value_or(0))));
    if (with_code) {
      constexpr size_t kMaxCodeBytes = 512;
      std::string_view code;
      if (std::optional<element> loc = json::Field(item, "loc");
          loc && loc->get_string().get(code) == simdjson::SUCCESS) {
        frame->set_code(
            std::string(Utf8Prefix(absl::string_view(code.data(), code.size()), kMaxCodeBytes)));
      }
    }
  }
}

void TraceParser::OnDynamoStart(const Envelope& env, element stack) {
  v1::Compile* c = CompileFor(env);
  if (c == nullptr || !stack.is_array() || !c->stack().empty()) return;
  ReadJsonStack(stack, c->mutable_stack());
  // The compiled frame is the last user frame: dynamo's own wrapper frames at the end go.
  while (!c->stack().empty() && IsDynamoWrapperFrame(*c->stack().rbegin()))
    c->mutable_stack()->RemoveLast();
  v1::Frame* frame = capture_.mutable_frames(frame_index_[c->frame_id()]);
  if (!frame->name().empty() || c->stack().empty()) return;
  const v1::StackFrame& last = *c->stack().rbegin();
  frame->set_name(last.name());
  frame->set_file(last.file());
  frame->set_line(last.line());
}

void TraceParser::OnSpecialization(const Envelope& env, element value) {
  v1::Compile* c = CompileFor(env);
  if (c == nullptr || !value.is_object()) return;
  v1::Specialization* s = c->add_specializations();
  s->set_symbol(json::String(value, "symbol").value_or(""));
  if (std::optional<element> sources = json::Field(value, "sources");
      sources && sources->is_array()) {
    for (element item : json::AsArray(*sources)) {
      std::string_view source;
      if (item.get_string().get(source) == simdjson::SUCCESS) s->add_sources(std::string(source));
    }
  }
  s->set_value(json::String(value, "value").value_or(""));
  s->set_reason(json::String(value, "reason").value_or(""));
  ReadStacks(value, s->mutable_user_stack(), s->mutable_stack());
}

// A shape-env record's "user_stack" (the user frames) and "stack" (torch's own), when present.
void TraceParser::ReadStacks(element value,
                             google::protobuf::RepeatedPtrField<v1::StackFrame>* user_stack,
                             google::protobuf::RepeatedPtrField<v1::StackFrame>* stack) {
  if (std::optional<element> user = json::Field(value, "user_stack"))
    ReadJsonStack(*user, user_stack);
  if (std::optional<element> own = json::Field(value, "stack")) ReadJsonStack(*own, stack);
}

void TraceParser::OnShapeGuard(const Envelope& env, element value, bool fast) {
  v1::Compile* c = CompileFor(env);
  if (c == nullptr || !value.is_object()) return;
  v1::ShapeGuard* g = c->add_shape_guards();
  g->set_expr(json::String(value, "expr").value_or(""));
  g->set_fast(fast);
  ReadStacks(value, g->mutable_user_stack(), g->mutable_stack());
}

void TraceParser::OnSymbol(const Envelope& env, element value, bool unbacked) {
  v1::Compile* c = CompileFor(env);
  if (c == nullptr || !value.is_object()) return;
  const std::optional<std::string> name = json::String(value, "symbol");
  if (!name || name->empty()) {
    Count(ImportCounter::kBadSymbolRecord);
    return;
  }
  if (!symbols_seen_.insert(absl::StrCat(c->id(), " ", *name)).second) return;  // logged again
  v1::Symbol* symbol = c->add_symbols();
  symbol->set_name(*name);
  symbol->set_unbacked(unbacked);
  // torch writes the hint as a string ("4"); accept a number too. An unbacked symbol has none.
  std::optional<std::string> hint = json::String(value, "val");
  if (!hint) {
    if (std::optional<int64_t> number = json::Int(value, "val")) hint = absl::StrCat(*number);
  }
  // A nested tensor's jagged size has the value "j1" (a nested int): no number to evaluate at.
  double number = 0;
  if (hint && !(absl::SimpleAtod(*hint, &number) && std::isfinite(number))) {
    Count(ImportCounter::kSymbolValuesNotNumbers);
    hint.reset();
  }
  if (hint && !unbacked) symbol->set_hint(*std::move(hint));
  symbol->set_range(json::String(value, "vr").value_or(""));
  symbol->set_source(json::String(value, "source").value_or(""));
  if (std::optional<element> stack = json::Field(value, "user_stack")) {
    ReadJsonStack(*stack, symbol->mutable_user_stack());
  }
}

namespace {

// What a log's export records are kept of, each kind: draft export logs a few dozen; past this a
// log is not one torch wrote, and the rest are counted.
constexpr int kMaxExportRecords = 4096;
// An export record's expression, result, operator or reason: torch's run a few dozen bytes; the
// analysis rewrites each expression once per local, so a hostile one is cut here.
constexpr size_t kMaxExportText = 4096;
// A symbol's source or a local's value: "L['x'].size()[0]", "u0 + 1".
constexpr size_t kMaxValueBytes = 512;

// An export record's text field `key`, cut at kMaxExportText.
std::string ExportText(element value, absl::string_view key) {
  return std::string(Utf8Prefix(json::String(value, key).value_or(""), kMaxExportText));
}

}  // namespace

void TraceParser::ReadStringMap(element object,
                                google::protobuf::Map<std::string, std::string>* out) {
  constexpr size_t kMaxEntries = 64;
  if (!object.is_object()) return;
  for (simdjson::dom::key_value_pair kv : json::AsObject(object)) {
    if (out->size() >= kMaxEntries) return;
    std::string_view text;
    if (kv.value.get_string().get(text) != simdjson::SUCCESS) continue;
    (*out)[std::string(kv.key)] =
        std::string(Utf8Prefix(absl::string_view(text.data(), text.size()), kMaxValueBytes));
  }
}

void TraceParser::OnExportIssue(const TraceRecord& r, const Envelope& env,
                                v1::ExportIssue::Kind kind, element value, element root) {
  if (!value.is_object()) return;
  if (capture_.export_issues_size() >= kMaxExportRecords) {
    Count(ImportCounter::kExportRecordsOverCap);
    return;
  }
  v1::ExportIssue* issue = capture_.add_export_issues();
  issue->set_kind(kind);
  if (kind == v1::ExportIssue::SPECIALIZED) {
    // {"symbol": "s0", "sources": ["L['x'].size()[0]"], "value": "4", "reason": ...}
    const std::string symbol = json::String(value, "symbol").value_or("");
    issue->set_expr(symbol);
    issue->set_result(json::String(value, "value").value_or(""));
    if (std::optional<element> sources = json::Field(value, "sources");
        sources && sources->is_array() && !symbol.empty()) {
      for (element source : json::AsArray(*sources)) {
        std::string_view text;
        if (source.get_string().get(text) != simdjson::SUCCESS) continue;
        (*issue->mutable_symbol_sources())[symbol] =
            std::string(Utf8Prefix(absl::string_view(text.data(), text.size()), kMaxValueBytes));
        break;
      }
    }
  } else {
    issue->set_expr(ExportText(value, "expr"));
    issue->set_result(ExportText(value, "result"));
  }
  issue->set_op(ExportText(value, "op"));
  issue->set_reason(ExportText(value, "reason"));
  issue->set_compile_id(env.compile_id);
  issue->set_line(r.line);
  if (std::optional<element> user = json::Field(value, "user_stack"))
    ReadJsonStack(*user, issue->mutable_user_stack(), /*with_code=*/true);
  // torch 2.6 logs no user frames of its own: its whole stack is the record's (a specialization's)
  // or the envelope's (the others').
  if (issue->user_stack().empty()) {
    std::optional<element> stack = json::Field(value, "stack");
    if (!stack) stack = json::Field(root, "stack");
    if (stack) ReadJsonStack(*stack, issue->mutable_stack(), /*with_code=*/true);
  }
  if (std::optional<element> frame = json::Field(value, "frame_locals")) {
    if (std::optional<element> locals = json::Field(*frame, "locals"))
      ReadStringMap(*locals, issue->mutable_locals());
    if (std::optional<element> symbols = json::Field(*frame, "symbols"))
      ReadStringMap(*symbols, issue->mutable_symbol_sources());
  }
  if (std::optional<element> sources = json::Field(value, "symbol_to_sources"))
    ReadStringMap(*sources, issue->mutable_symbol_sources());
}

void TraceParser::OnTraceFailed(const TraceRecord& r, const Envelope& env) {
  if (capture_.export_issues_size() >= kMaxExportRecords) {
    Count(ImportCounter::kExportRecordsOverCap);
    return;
  }
  v1::ExportIssue* issue = capture_.add_export_issues();
  issue->set_kind(v1::ExportIssue::TRACE_FAILED);
  issue->set_line(r.line);
  // The graph traced so far: its last op is where the trace stopped, and its source comment the
  // user's line. A partial graph never returns, which the parse counts and nobody reads.
  v1::Graph partial;
  ParseFxGraphText(r.payload, &partial);
  for (auto n = partial.nodes().rbegin(); n != partial.nodes().rend(); ++n) {
    if (n->op() != "call_function" && n->op() != "call_method" && n->op() != "call_module")
      continue;
    issue->set_op(n->target());
    if (!n->source().file().empty()) {
      v1::StackFrame* frame = issue->add_stack();
      frame->set_file(n->source().file());
      frame->set_line(n->source().line());
      frame->set_name(n->source().fn());
      frame->set_code(n->source().code());
    }
    break;
  }
}

void TraceParser::OnExportSymbol(const TraceRecord& r, element value, element root) {
  if (!value.is_object()) return;
  const std::optional<std::string> name = json::String(value, "symbol");
  if (!name || name->empty()) {
    Count(ImportCounter::kBadSymbolRecord);
    return;
  }
  if (capture_.export_symbols_size() >= kMaxExportRecords) {
    Count(ImportCounter::kExportRecordsOverCap);
    return;
  }
  v1::Symbol* symbol = capture_.add_export_symbols();
  symbol->set_name(*name);
  symbol->set_unbacked(true);
  symbol->set_range(json::String(value, "vr").value_or(""));
  symbol->set_line(r.line);
  if (std::optional<element> user = json::Field(value, "user_stack"))
    ReadJsonStack(*user, symbol->mutable_user_stack(), /*with_code=*/true);
  if (symbol->user_stack().empty()) {
    if (std::optional<element> stack = json::Field(root, "stack"))
      ReadJsonStack(*stack, symbol->mutable_stack(), /*with_code=*/true);
  }
}

void TraceParser::NoteYear(double epoch_seconds) {
  // Only a plausible wall-clock time: a monotonic clock's seconds would say 1970.
  if (year_ || !(epoch_seconds > 946684800.0 && epoch_seconds < 4102444800.0)) return;  // 2000–2100
  const std::time_t t = static_cast<std::time_t>(epoch_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  year_ = tm.tm_year + 1900;
}

bool TraceParser::KeepConfigSnapshot(const v1::Compile& c, std::string_view key, element value) {
  if (key == "inductor_config") return false;
  std::string_view text;
  if (key != "dynamo_config" || value.get_string().get(text) != simdjson::SUCCESS) return true;
  std::string& last = kept_dynamo_config_[c.frame_id()];
  if (last == text) return false;
  last = std::string(text);
  return true;
}

void TraceParser::OnMetrics(const TraceRecord& r, const Envelope& env, element m) {
  v1::Compile* c = CompileFor(env);
  // A compile torch logged with no compile id (AOTInductor's, export's) is a compile still; a
  // runtime record (is_runtime) or one whose id did not fit is not.
  if (c == nullptr && !env.frame_id && m.is_object()) {
    std::optional<element> id = json::Field(m, "compile_id");
    std::optional<element> runtime = json::Field(m, "is_runtime");
    bool is_runtime = false;
    if (runtime && runtime->get_bool().get(is_runtime) != simdjson::SUCCESS) is_runtime = false;
    if ((!id || id->is_null()) && !is_runtime) {
      Count(ImportCounter::kCompilesWithoutId);
      c = AddNoFrameCompile();
    }
  }
  if (c == nullptr) {
    KeepExtra(r, env, "compilation_metrics");
    return;
  }
  if (!m.is_object()) return;
  google::protobuf::Struct* metrics = c->mutable_metrics();
  for (simdjson::dom::key_value_pair kv : json::AsObject(m)) {
    if (AnalysisOnly() && !KeepConfigSnapshot(*c, kv.key, kv.value)) continue;
    json::ToProtoValue(kv.value, &(*metrics->mutable_fields())[std::string(kv.key)]);
  }
  // Seconds (older torch) as microseconds, or nothing when they do not fit in an int64 of them.
  const auto micros = [&](const char* key) -> std::optional<int64_t> {
    const std::optional<double> seconds = json::Number(m, key);
    if (!seconds) return std::nullopt;
    if (std::optional<int64_t> us = json::ToInt64(*seconds * 1e6)) return us;
    Diagnose(
        v1::Diagnostic::WARNING, r.line,
        absl::StrCat("compilation_metrics.", key, " ", *seconds, " s is out of range (ignored)"));
    return std::nullopt;
  };
  if (auto v = json::Int(m, "start_time_us"))
    c->set_start_us(*v);
  else if (auto us = micros("start_time"))
    c->set_start_us(*us);
  if (auto v = json::Int(m, "duration_us"))
    c->set_duration_us(std::max<int64_t>(0, *v));
  else if (auto us = micros("entire_frame_compile_time_s"))
    c->set_duration_us(std::max<int64_t>(0, *us));
  else if (auto v = json::Int(m, "dynamo_cumulative_compile_time_us"))  // newer torch
    c->set_duration_us(std::max<int64_t>(0, *v));
  else if (auto start = json::Int(m, "start_time_us"), end = json::Int(m, "end_time_us");
           start && end && *end >= *start)
    c->set_duration_us(*end - *start);
  if (auto v = json::Int(m, "guard_count"))
    c->set_guard_count(static_cast<uint32_t>(std::max<int64_t>(0, *v)));
  if (auto v = json::String(m, "fail_type")) c->set_fail_type(*v);
  if (auto v = json::String(m, "fail_reason")) c->set_fail_reason(*v);
  if (std::optional<element> restarts = json::Field(m, "restart_reasons");
      restarts && restarts->is_array()) {
    for (element item : json::AsArray(*restarts)) {
      std::string_view s;
      if (item.get_string().get(s) == simdjson::SUCCESS) c->add_restart_reasons(std::string(s));
    }
  }
  if (c->recompile_reasons().empty()) {
    if (auto v = json::String(m, "recompile_reason"); v && !v->empty())
      c->add_recompile_reasons(*v);
  }
  if (auto s = json::Number(m, "start_time")) NoteYear(*s);
  if (auto v = json::String(m, "python_version");
      v && capture_.session().python_version().empty()) {
    capture_.mutable_session()->set_python_version(*v);
  }
  // co_name / co_filename / co_firstlineno name the compiled code object exactly.
  v1::Frame* frame = capture_.mutable_frames(frame_index_[c->frame_id()]);
  if (auto v = json::String(m, "co_name")) frame->set_name(*v);
  if (auto v = json::String(m, "co_filename")) frame->set_file(*v);
  if (auto v = json::Int(m, "co_firstlineno"); v && *v >= 0)
    frame->set_line(static_cast<uint32_t>(*v));
}

void TraceParser::OnArtifact(const TraceRecord& r, const Envelope& env, absl::string_view name) {
  if (std::optional<v1::Graph::Stage> stage = GraphStage(name))
    return OnGraph(r, env, name, *stage);
  if (name == "inductor_runtime_and_tensor_meta" || name == "inductor_tlparse_runtime" ||
      name == "triton_kernel_info") {
    return OnKernels(r, env, name);
  }
  if (name == "fx_graph_runnable" && capture_.session().torch_version().empty()) {
    // The repro script torch writes names the version that ran it: "# torch version: 2.6.0+...".
    static constexpr absl::string_view kVersion = "# torch version: ";
    const absl::string_view payload = r.payload;
    if (const size_t at = payload.find(kVersion); at != absl::string_view::npos) {
      const size_t start = at + kVersion.size();
      const absl::string_view version =
          absl::StripAsciiWhitespace(payload.substr(start, payload.find('\n', start) - start));
      if (!version.empty() && version.size() <= 64) {
        capture_.mutable_session()->set_torch_version(std::string(version));
      }
    }
  }
  v1::Compile* c = CompileFor(env);
  if (name == "recompile_reasons" && c != nullptr) {
    element payload;
    if (json_->parse(r.payload).get(payload) != simdjson::SUCCESS) {
      Problem(ImportCounter::kBadArtifactJson, r.line,
              "recompile_reasons payload is not JSON (skipped)");
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
  if (std::optional<std::pair<std::string, std::string>> cache = CacheArtifact(name);
      cache && c != nullptr) {
    OnCacheLookup(r, c, cache->first, cache->second);
    return;
  }
  KeepExtra(r, env, absl::StrCat("artifact:", name));
}

void TraceParser::OnCacheLookup(const TraceRecord& r, v1::Compile* c, const std::string& cache,
                                std::string status) {
  element payload;
  const bool parsed = json_->parse(r.payload).get(payload) == simdjson::SUCCESS;
  if (status.empty() && parsed) status = json::String(payload, "cache_state").value_or("");
  if (!IsCacheOutcome(status)) {
    Problem(ImportCounter::kBadArtifactJson, r.line,
            absl::StrCat(cache, " cache record names no hit, miss or bypass (skipped)"));
    return;
  }
  v1::CacheEvent* ev = c->add_cache_events();
  ev->set_cache(cache);
  ev->set_status(std::move(status));
  if (!parsed) return;
  if (auto key = json::String(payload, "key")) ev->set_key(*key);
  if (auto reason = json::String(payload, "cache_bypass_reason")) ev->set_reason(*reason);
  const char* time_field = ev->status() == "hit" ? "time_saved_ns" : "time_taken_ns";
  if (std::optional<int64_t> ns = json::Int(payload, time_field); ns && *ns > 0)
    ev->set_time_us(*ns / 1000);
  std::optional<element> components = json::Field(payload, "components");
  if (ev->status() != "miss" || !components || !components->is_array()) return;
  // All of a key or none (a half key would diff as removed parts), so the parts are gathered aside
  // and freed with it when they are over the budget: a cleared repeated field would keep them.
  std::vector<v1::CacheKeyComponent> kept;
  size_t bytes = 0;  // this key's, counted against the budget only if all of it is kept
  for (element item : json::AsArray(*components)) {
    std::string_view text;
    if (item.get_string().get(text) != simdjson::SUCCESS) continue;
    std::optional<v1::CacheKeyComponent> component =
        ReadKeyComponent(absl::string_view(text.data(), text.size()));
    if (!component) continue;
    bytes += MemoryOf(*component);
    if (cache_components_bytes_ + bytes > options_.cache_components_budget) return;
    kept.push_back(std::move(*component));
  }
  cache_components_bytes_ += bytes;
  ev->mutable_components()->Reserve(static_cast<int>(kept.size()));
  for (v1::CacheKeyComponent& component : kept) *ev->add_components() = std::move(component);
}

bool TraceParser::ParseGraph(const TraceRecord& r, absl::string_view event, v1::Graph* graph) {
  const FxParseResult parsed =
      ParseFxGraphText(r.payload, graph, AnalysisOnly() ? FxDetail::kAnalysis : FxDetail::kFull);
  if (parsed.skipped_lines > 0) {
    Problem(ImportCounter::kGraphLinesNotUnderstood, r.line,
            absl::StrCat(
                event, ": ", FormatCount(parsed.skipped_lines, "line", "lines"),
                " of the FX text not understood",
                parsed.problems.empty() ? "" : absl::StrCat(" (first: ", parsed.problems[0], ")")));
  }
  // The passes rely on unique node names; a graph that breaks that is dropped, not half-used.
  absl::flat_hash_set<absl::string_view> names;
  for (const v1::Node& n : graph->nodes()) {
    if (!names.insert(n.name()).second) {
      Problem(ImportCounter::kGraphsDropped, r.line,
              absl::StrCat(event, ": node \"", absl::CHexEscape(n.name()),
                           "\" is defined twice; graph dropped"));
      return false;
    }
  }
  return true;
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
  // A graph whose nodes no pass reads is not parsed: the source files its comments name are picked
  // out, to be read with the others. Import-trace and a comparison with a base parse it, and
  // report the problems of its statements; one that is not even shaped like a GraphModule (cut
  // off, not FX at all) is parsed here too, for what is wrong with it, and its nodes dropped. Of
  // the post-grad graphs, a frame's recompiles and the before_ copies are not read either; a graph
  // that is read until a later one displaces it (an earlier compile of its frame lowering after
  // it) drops its nodes then, so that what a long log keeps stops growing with its recompiles. With
  // a lowered sink, a graph read is handed to it and drops its nodes at once: what the passes make
  // of them is all that stays, so that it stops growing with the log's frames too.
  Count(ImportCounter::kGraphs);
  std::optional<PostGradGraphRef> lowered;
  if (stage == v1::Graph::POST_GRAD && c != nullptr) {
    lowered =
        PostGradGraphRef{c->frame_id(), compile_index_.at(c->id()), capture_.graphs_size(), event};
  }
  const bool nodes_unread = options_.graph_nodes == GraphNodes::kLoweredOnly &&
                            (!lowered || !lowered_choice_.WouldRead(*lowered));
  if (!nodes_unread || !ScanFxSourceFiles(r.payload, &unkept_source_files_)) {
    if (!ParseGraph(r, event, &graph)) return;
    if (nodes_unread) DropNodes(&graph);
  }
  if (c != nullptr) {
    c->add_graph_ids(id);
    if (stage == v1::Graph::POST_GRAD && !IsBeforeEvent(event)) lowered_graph_[c->id()] = id;
  }
  last_graph_id_ = id;
  *capture_.add_graphs() = std::move(graph);
  if (options_.graph_nodes == GraphNodes::kLoweredOnly && !nodes_unread) {
    std::vector<int> unread;
    lowered_choice_.Add(*lowered, &unread);
    for (int i : unread) DropNodes(capture_.mutable_graphs(i));
    if (options_.lowered_sink) {
      v1::Graph* added = capture_.mutable_graphs(capture_.graphs_size() - 1);
      options_.lowered_sink(*added, *c);
      DropNodes(added);
    }
  }
  if (options_.graph_sink) {
    v1::Graph* added = capture_.mutable_graphs(capture_.graphs_size() - 1);
    options_.graph_sink(*added);
    DropNodes(added);
  }
}

void TraceParser::DropNodes(v1::Graph* graph) {
  for (const v1::Node& n : graph->nodes()) {
    if (!n.source().file().empty()) unkept_source_files_.insert(n.source().file());
  }
  // Clear() would keep every node's allocation for reuse: swapped out, they are freed.
  google::protobuf::RepeatedPtrField<v1::Node> dropped;
  graph->mutable_nodes()->Swap(&dropped);
}

void TraceParser::OnKernels(const TraceRecord& r, const Envelope& env, absl::string_view name) {
  element payload;
  if (json_->parse(r.payload).get(payload) != simdjson::SUCCESS) {
    Problem(ImportCounter::kBadArtifactJson, r.line,
            absl::StrCat(name, " payload is not JSON (skipped)"));
    return;
  }
  if (name == "triton_kernel_info") {
    if (!payload.is_object()) return;
    // {"triton_poi_fused_relu_1": {"autotune_cache_state": "miss", "num_configs": 2, ...}}: each
    // kernel's autotune cache lookup ("only 1 config" is no lookup: nothing to tune).
    v1::Compile* c = CompileFor(env);
    for (simdjson::dom::key_value_pair kv : json::AsObject(payload)) {
      const std::string kernel(kv.key);
      if (kernel_index_.try_emplace(kernel, capture_.kernels_size()).second) {
        capture_.add_kernels()->set_name(kernel);
      }
      const std::optional<std::string> state = json::String(kv.value, "autotune_cache_state");
      if (c != nullptr && state && (*state == "hit" || *state == "miss" || *state == "bypass")) {
        v1::CacheEvent* ev = c->add_cache_events();
        ev->set_cache("triton");
        ev->set_status(*state);
        ev->set_key(kernel);
      }
    }
    return;
  }
  // inductor_runtime_and_tensor_meta: {"ops": [{"name", "type", "estimated_runtime_ns",
  // "outputs"}]}
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
    k->set_graph_id(lowered != lowered_graph_.end() ? lowered->second
                                                    : absl::StrCat("?", env.compile_id));
  }
}

void TraceParser::OnGuards(const TraceRecord& r, const Envelope& env) {
  v1::Compile* c = CompileFor(env);
  if (c == nullptr) {
    Problem(ImportCounter::kGuardTreesWithoutCompile, r.line,
            "dynamo_cpp_guards_str names no compile (skipped)");
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
  c->clear_guarded_source_ids();
  // Each source once per frame: a frame's recompiles guard nearly the same ones, and a deep model's
  // sources are long ("L['self']._modules['layers']._modules['11']._modules['attn']..."). The
  // compile's frame was indexed when the compile was made (CompileFor).
  v1::Frame& f = *capture_.mutable_frames(frame_index_.at(c->frame_id()));
  absl::flat_hash_map<absl::string_view, uint32_t>& ids = guard_source_ids_[c->frame_id()];
  c->mutable_guarded_source_ids()->Reserve(static_cast<int>(guards.sources.size()));
  for (std::string& source : guards.sources) {
    auto it = ids.find(source);
    if (it == ids.end()) {
      const auto id = static_cast<uint32_t>(f.guarded_sources_size());
      std::string* kept = f.add_guarded_sources();
      *kept = std::move(source);
      it = ids.emplace(*kept, id).first;  // the frame's string does not move as the field grows
    }
    c->add_guarded_source_ids(it->second);
  }
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
  if (*kind == LensRecord::kIteration) {
    iteration_lines_.push_back(r.line);
    // The record names torch's frame and compile: after a reset, this round's.
    v1::Iteration* it = capture_.mutable_iterations(capture_.iterations_size() - 1);
    if (reset_round_ > 0) {
      if (auto f = round_frames_.find(it->frame_id()); f != round_frames_.end()) {
        it->set_frame_id(f->second);
      } else {
        it->set_frame_id(next_frame_id_);  // no frame of this round: dropped at Finish
      }
      if (!it->compile_id().empty()) {
        it->set_compile_id(absl::StrCat(it->compile_id(), "@", reset_round_));
      }
    }
  }
  for (std::string& warning : warnings) {
    Problem(ImportCounter::kLensRecordsWithWarning, r.line, std::move(warning));
  }
}

}  // namespace cl

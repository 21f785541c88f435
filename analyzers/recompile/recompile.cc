#include "analyzers/recompile/recompile.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzers/recompile/graph_breaks.h"
#include "analyzers/common/location.h"
#include "analyzers/recompile/reason.h"
#include "capture/torch_trace/json_value.h"
#include "capture/validate.h"
#include "common/utf8.h"
#include "google/protobuf/struct.pb.h"
#include "proto/report_words.h"

namespace cl {
namespace {

using Category = v1::RecompileCategory;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;

constexpr char kArrow[] = "\u2192";  // →, as the seed report prints transitions

// --- What the capture says about dynamo's configuration ------------------------------------

// The facts of compilation_metrics.dynamo_config the heuristics of §1.7 need.
struct DynamoConfig {
  std::optional<bool> automatic_dynamic_shapes;  // false: compiled with dynamic=False
  std::string limit_name = "recompile_limit";
  uint64_t limit = 8;  // torch's default
  bool limit_from_capture = false;
  std::string accumulated_name = "accumulated_recompile_limit";
  uint64_t accumulated_limit = 256;
};

std::optional<uint64_t> NumberField(const Struct& s, const char* name) {
  auto it = s.fields().find(name);
  if (it == s.fields().end() || it->second.kind_case() != Value::kNumberValue) return std::nullopt;
  const double v = it->second.number_value();
  if (!(v >= 0)) return std::nullopt;
  // A "no limit" of 2^63-1 arrives as a double; clamp rather than overflow.
  if (v >= static_cast<double>(std::numeric_limits<uint64_t>::max())) {
    return std::numeric_limits<uint64_t>::max();
  }
  return static_cast<uint64_t>(v);
}

// Reads metrics.dynamo_config: a JSON string in torch's compilation_metrics, or already a Struct
// when an importer expanded it. Unreadable or absent config leaves torch's defaults.
std::optional<DynamoConfig> ReadDynamoConfig(const Struct& metrics) {
  auto it = metrics.fields().find("dynamo_config");
  if (it == metrics.fields().end()) return std::nullopt;
  Struct parsed;
  const Struct* config = nullptr;
  if (it->second.kind_case() == Value::kStructValue) {
    config = &it->second.struct_value();
  } else if (it->second.kind_case() == Value::kStringValue && json::ParseStruct(it->second.string_value(), &parsed)) {
    config = &parsed;
  } else {
    return std::nullopt;
  }
  DynamoConfig out;
  if (auto f = config->fields().find("automatic_dynamic_shapes");
      f != config->fields().end() && f->second.kind_case() == Value::kBoolValue) {
    out.automatic_dynamic_shapes = f->second.bool_value();
  }
  // Torch renamed cache_size_limit to recompile_limit around 2.6 and kept the old name as an
  // alias; the name that carries a number is the one the run used.
  for (const char* name : {"recompile_limit", "cache_size_limit"}) {
    if (auto v = NumberField(*config, name)) {
      out.limit_name = name;
      out.limit = *v;
      out.limit_from_capture = true;
      break;
    }
  }
  for (const char* name : {"accumulated_recompile_limit", "accumulated_cache_size_limit"}) {
    if (auto v = NumberField(*config, name)) {
      out.accumulated_name = name;
      out.accumulated_limit = *v;
      break;
    }
  }
  return out;
}

// --- Frames --------------------------------------------------------------------------------

struct FrameStats {
  uint32_t id = 0;
  std::string name;
  std::string file;
  uint32_t line = 0;
  std::set<uint32_t> entries;  // frame_compile_ids compiled: the frame's cache entries
  uint32_t recompiles = 0;
  DynamoConfig config;  // from the frame's latest compile that recorded it
  bool has_config = false;
  size_t first_seen = 0;
};

std::string StringField(const Struct& s, const char* name) {
  auto it = s.fields().find(name);
  return it != s.fields().end() && it->second.kind_case() == Value::kStringValue
             ? it->second.string_value()
             : "";
}

// One FrameStats per frame that compiled. Frames come from `frames[]`; a compile whose frame the
// capture does not list is named from its compilation_metrics (co_name, co_filename, ...).
std::map<uint32_t, FrameStats> CollectFrames(const v1::SessionCapture& capture) {
  std::map<uint32_t, FrameStats> frames;
  for (const v1::Frame& frame : capture.frames()) {
    FrameStats& stats = frames[frame.id()];
    stats.id = frame.id();
    stats.name = frame.name();
    stats.file = frame.file();
    stats.line = frame.line();
  }
  for (int i = 0; i < capture.compiles_size(); ++i) {
    const v1::Compile& compile = capture.compiles(i);
    auto [it, inserted] = frames.try_emplace(compile.frame_id());
    FrameStats& stats = it->second;
    if (inserted) {
      stats.id = compile.frame_id();
      stats.first_seen = static_cast<size_t>(i);
    }
    if (stats.name.empty()) stats.name = StringField(compile.metrics(), "co_name");
    if (stats.file.empty()) stats.file = StringField(compile.metrics(), "co_filename");
    if (stats.line == 0) {
      if (auto line = NumberField(compile.metrics(), "co_firstlineno")) {
        stats.line = static_cast<uint32_t>(std::min<uint64_t>(*line, UINT32_MAX));
      }
    }
    stats.entries.insert(compile.frame_compile_id());
  }
  // A frame's config is its latest compile's that recorded one: look from the end, so that each
  // frame's config JSON is parsed once rather than once per compile.
  for (int i = capture.compiles_size() - 1; i >= 0; --i) {
    const v1::Compile& compile = capture.compiles(i);
    FrameStats& stats = frames[compile.frame_id()];
    if (stats.has_config) continue;
    if (auto config = ReadDynamoConfig(compile.metrics())) {
      stats.config = *config;
      stats.has_config = true;
    }
  }
  for (auto& [id, stats] : frames) {
    if (stats.name.empty()) stats.name = absl::StrCat("frame ", id);
  }
  return frames;
}

// --- Clusters ------------------------------------------------------------------------------

struct Cluster {
  uint32_t frame_id = 0;
  Category::Value category = Category::UNSPECIFIED;
  std::string axis;
  GuardFailure example;  // the first primary failure: variable, dim, rule, check
  uint32_t count = 0;
  std::vector<std::string> transitions;     // "16→32", deduplicated, in order
  std::vector<std::string> guarded_values;  // expected values of guards that print no actual
  size_t first_seen = 0;
};

void AddUnique(std::vector<std::string>* list, std::string value) {
  if (std::find(list->begin(), list->end(), value) == list->end())
    list->push_back(std::move(value));
}

// The bullet that explains a recompile: the one against the frame's first cache entry, else the
// newest (the first listed).
size_t PrimaryBullet(const std::vector<std::vector<GuardFailure>>& bullets, uint32_t first_entry) {
  for (size_t i = 0; i < bullets.size(); ++i) {
    for (const GuardFailure& f : bullets[i]) {
      auto parts = ParseCompileId(f.entry_id);
      if (parts && parts->frame_compile_id == first_entry) return i;
    }
  }
  return 0;
}

// --- Suggestions ---------------------------------------------------------------------------

// `s` clipped to `n` bytes on a character boundary (ClipUtf8): report strings are proto3 `string`
// fields, which must stay valid UTF-8.
std::string Truncate(absl::string_view s, size_t n) { return ClipUtf8(s, n); }

std::string Code(absl::string_view s) { return absl::StrCat("`", s, "`"); }
std::string Named(absl::string_view var) { return var.empty() ? "an input" : Code(var); }

std::string TorchDtype(absl::string_view scalar_type) {
  static const auto* const kNames =
      new absl::flat_hash_map<std::string, std::string>{{"Float", "float32"},
                                                        {"Half", "float16"},
                                                        {"BFloat16", "bfloat16"},
                                                        {"Double", "float64"},
                                                        {"Long", "int64"},
                                                        {"Int", "int32"},
                                                        {"Short", "int16"},
                                                        {"Char", "int8"},
                                                        {"Byte", "uint8"},
                                                        {"Bool", "bool"},
                                                        {"ComplexFloat", "complex64"}};
  auto it = kNames->find(scalar_type);
  return absl::StrCat("torch.", it != kNames->end() ? it->second : "float32");
}

// One cluster's remedy. `info` marks expected behaviour that needs no change.
struct Advice {
  std::string text;
  bool info = false;
};

Advice AdviseSize(const Cluster& c, const FrameStats& frame) {
  const GuardFailure& f = c.example;
  if (f.rule == "rank") {
    return {absl::StrCat(Named(f.variable), " is passed with a different number of dimensions (",
                         absl::StrJoin(c.transitions, ", "),
                         ") — each rank is its own graph: split the call sites, or reshape to one "
                         "rank before the call.")};
  }
  const bool dynamic_off = frame.has_config && frame.config.automatic_dynamic_shapes == false;
  if (c.count == 1 && !dynamic_off) {
    return {absl::StrCat(Named(f.variable), " dim ", f.dim,
                         " changed size once and torch made it dynamic (automatic dynamic "
                         "shapes) — expected; nothing to change unless it keeps recompiling."),
            true};
  }
  return {absl::StrCat(Named(f.variable), " dim ", f.dim,
                       " keeps changing size — mark it dynamic to stop the recompiles: "
                       "`torch._dynamo.mark_dynamic(",
                       f.variable.empty() ? "x" : f.variable, ", ", f.dim,
                       ")` (or compile with `dynamic=True`).")};
}

Advice AdviseGlobalState(const Cluster& c) {
  const GuardFailure& f = c.example;
  if (f.rule == "dispatch_key") {
    return {absl::StrCat(Named(f.variable),
                         " was created under a different mode in some calls (inference_mode, a "
                         "dispatch mode or a tensor subclass) — create inputs the same way every "
                         "time; use `torch.no_grad()` rather than `torch.inference_mode()` for "
                         "tensors you feed back.")};
  }
  if (f.variable == "grad_mode") {
    return {
        "grad mode differs between calls (`torch.no_grad()` evaluation vs training) — call a "
        "separate compiled wrapper for the no-grad path, or keep grad mode constant around "
        "the compiled call."};
  }
  if (f.rule == "default_device") {
    return {
        "the default device changed between calls (`torch.set_default_device` / `with "
        "torch.device(...)`) — set it once, before the first compiled call."};
  }
  if (f.rule == "transform_state") {
    return {
        "the functorch transform state (vmap / grad level) differs between calls — call the "
        "compiled function under the same transforms every time."};
  }
  return {absl::StrCat("global state ", Code(f.variable),
                       " differs between calls — set it once (at start-up) and keep it constant "
                       "around compiled calls, or compile a separate wrapper per setting; every "
                       "combination costs a cache entry.")};
}

Advice Advise(const Cluster& c, const FrameStats& frame) {
  const GuardFailure& f = c.example;
  const std::string var = Named(f.variable);
  if (c.category == Category::SIZE) return AdviseSize(c, frame);
  if (c.category == Category::GLOBAL_STATE) return AdviseGlobalState(c);
  if (c.category == Category::STRIDE) {
    return {absl::StrCat(var, " arrives with different strides on dim ", f.dim,
                         " (a transposed, sliced or channels_last view) — call `.contiguous()` "
                         "(or use one memory format) before the compiled call.")};
  }
  if (c.category == Category::DTYPE) {
    return {absl::StrCat(var, " changes dtype (", absl::StrJoin(c.transitions, ", "),
                         ") — cast it once at the boundary (e.g. `",
                         f.variable.empty() ? "x" : f.variable, ".to(", TorchDtype(f.expected),
                         ")`) or keep autocast consistent; if every dtype is intended, each "
                         "costs its own cache entry.")};
  }
  if (c.category == Category::DEVICE) {
    return {absl::StrCat(var,
                         f.rule == "device_index" ? " arrives on different device indices"
                                                  : " arrives on a different device type",
                         " — move inputs to one device before the call; with several GPUs in "
                         "one process expect one cache entry per device.")};
  }
  if (c.category == Category::REQUIRES_GRAD) {
    return {absl::StrCat(var,
                         " is passed with and without `requires_grad` — compile separate "
                         "callables for training and inference, or keep `requires_grad` "
                         "consistent (under `torch.no_grad()` this recompile is avoidable).")};
  }
  if (c.category == Category::VALUE && f.rule == "length") {
    return {absl::StrCat(Code(c.axis),
                         " changes between calls — pass one stacked or padded tensor instead of "
                         "a list whose length varies.")};
  }
  if (c.category == Category::VALUE && f.rule == "obj_id") {
    return {absl::StrCat(var,
                         " flips between True / False / None — each value is its own graph: "
                         "pass it as a tensor, or branch outside the compiled function.")};
  }
  if (c.category == Category::VALUE) {
    return {absl::StrCat(var,
                         " is a Python constant that changes between calls — wrap it in a "
                         "tensor (`torch.tensor(value)`) so one graph serves every value; for "
                         "ints let automatic dynamic make it a SymInt, for floats set "
                         "`torch._dynamo.config.specialize_float = False`.")};
  }
  if (c.category == Category::IDENTITY) {
    if (f.rule == "data_ptr") {
      return {absl::StrCat(var,
                           "'s storage changed between calls — reuse one buffer (copy into "
                           "it) instead of passing a new tensor.")};
    }
    return {absl::StrCat(var,
                         " is a different object on each call — create it once and reuse it "
                         "(hoist lambdas, `functools.partial` and per-call module or processor "
                         "objects out of the loop).")};
  }
  if (c.category == Category::TYPE) {
    return {absl::StrCat(
        var, " changes Python type",
        c.transitions.empty() ? "" : absl::StrCat(" (", absl::StrJoin(c.transitions, ", "), ")"),
        " — pass the same type every time (e.g. always a tensor); for a "
        "submodule of several classes, compile each class separately.")};
  }
  if (c.category == Category::SYMBOLIC_SHAPE) {
    if (f.rule == "dynamic_marker") {
      return {absl::StrCat(var,
                           " is marked dynamic on some calls and not others — call "
                           "`torch._dynamo.mark_dynamic` on it consistently, every call.")};
    }
    if (!f.dim.empty()) {
      return {absl::StrCat("a dynamic-shape guard on ", Code(c.axis), " failed (", Code(f.expected),
                           ") — the dim was specialised (a size-0/1 input or a branch on the "
                           "size): use `torch._dynamo.mark_unbacked(",
                           f.variable, ", ", f.dim,
                           ")`, or replace the branch with `torch._check`.")};
    }
    return {absl::StrCat("a dynamic-shape guard failed (", Code(f.check),
                         ") — remove the branch on the size or use `torch._dynamo.mark_unbacked` "
                         "on the dims that can be 0 or 1.")};
  }
  if (c.category == Category::MODULE_MODE) {
    return {absl::StrCat(var,
                         " flips between calls (train / eval) — two cache entries are "
                         "expected; do not toggle it inside the inner loop, or compile "
                         "separate train and eval callables.")};
  }
  if (c.category == Category::ALIASING) {
    return {absl::StrCat("inputs ", var,
                         " alias each other in some calls only — do not pass the "
                         "same tensor twice; `.clone()` one argument.")};
  }
  if (c.category == Category::BACKEND_CONFIG) {
    if (f.variable == "dynamo_config") {
      return {
          "`torch._dynamo.config` changed between calls — set dynamo config once, before "
          "compiling."};
    }
    if (f.variable == "fullgraph") {
      return {"the frame is compiled both with and without `fullgraph=True` — use one setting."};
    }
    return {
        "a new backend object reaches `torch.compile` on each call — build the compiled "
        "callable once, or reuse one backend callable."};
  }
  if (c.category == Category::CONTAINER) {
    if (f.rule == "module_state") {
      return {absl::StrCat(var,
                           "'s attributes are mutated between calls — set module state "
                           "before compiling, not between calls.")};
    }
    return {absl::StrCat("the keys, members or attributes of ", var,
                         " change between calls — keep them invariant, or pass tensors "
                         "instead.")};
  }
  return {absl::StrCat("torch's guard failure text was not recognised (",
                       Code(Truncate(f.check, 80)),
                       ") — rerun with `TORCH_LOGS=recompiles_verbose` to see the failing guard.")};
}

std::string Evidence(const Cluster& c, const FrameStats& frame, bool several_frames) {
  std::string evidence = absl::StrCat(Word(c.category), " cluster");
  if (!c.axis.empty()) absl::StrAppend(&evidence, " on ", c.axis);
  if (several_frames) absl::StrAppend(&evidence, " in ", Code(frame.name));
  absl::StrAppend(&evidence, " — ", c.count, " recompile(s)");
  if (!c.transitions.empty()) {
    absl::StrAppend(&evidence, " (values ", absl::StrJoin(c.transitions, ", "), ")");
  } else if (!c.guarded_values.empty()) {
    absl::StrAppend(&evidence, " (guarded values ", absl::StrJoin(c.guarded_values, ", "), ")");
  }
  // The fact that makes a single size recompile a problem rather than automatic dynamic.
  if (c.category == Category::SIZE && c.count == 1 && frame.has_config &&
      frame.config.automatic_dynamic_shapes.has_value()) {
    absl::StrAppend(&evidence, "; dynamo_config automatic_dynamic_shapes=",
                    *frame.config.automatic_dynamic_shapes ? "True" : "False");
  }
  // §1.7: as many distinct values as the limit allows entries means the frame will go eager.
  const size_t distinct = std::max(c.transitions.size(), c.guarded_values.size());
  if (distinct + 1 >= frame.config.limit) {
    absl::StrAppend(&evidence, "; ", distinct + 1, " variants reach ", frame.config.limit_name,
                    " (", frame.config.limit, ") and the frame falls back to eager");
  }
  return evidence;
}

// --- Cache-limit hits ----------------------------------------------------------------------

struct LimitHits {
  std::vector<v1::CacheLimitHit> hits;
  // (frame id, or the function a message names when no frame is known; limit) → hits[i]. By id:
  // two frames may share a name (every module's `forward`).
  using Key = std::tuple<std::optional<uint32_t>, std::string, std::string>;
  std::map<Key, size_t> index;

  void Add(const FrameStats* frame, const std::string& function, const std::string& limit,
           std::optional<uint64_t> value, const std::string& evidence, const v1::Session& session) {
    const std::string name = frame != nullptr ? frame->name : function;
    const Key key = frame != nullptr ? Key{frame->id, "", limit} : Key{std::nullopt, name, limit};
    auto [it, inserted] = index.try_emplace(key, hits.size());
    if (inserted) {
      v1::CacheLimitHit& hit = hits.emplace_back();
      hit.set_frame(name);
      hit.set_limit(limit);
      if (frame != nullptr && !frame->file.empty()) {
        *hit.mutable_location() = MakeLocation(session, frame->file, frame->line);
      }
    }
    v1::CacheLimitHit& hit = hits[it->second];
    if (value) hit.set_value(static_cast<uint32_t>(std::min<uint64_t>(*value, UINT32_MAX)));
    hit.set_evidence(hit.evidence().empty() ? evidence
                                            : absl::StrCat(hit.evidence(), "; ", evidence));
  }
};

// Extra records torch writes whole from its own data (trace events, tensor descriptions, generated
// code, graph dumps): they never carry dynamo's log text, and they are most of a capture's extras
// (all 234 KB of the hero head's), which the limit scan would otherwise search four times over.
bool IsGeneratedRecord(absl::string_view kind) {
  static constexpr absl::string_view kGenerated[] = {
      "chromium_event", "describe_storage", "describe_tensor", "describe_source", "inductor_output_code",
      "artifact:fx_graph_runnable", "artifact:aot_forward_graph_fw_metadata", "artifact:before_pre_grad_graph",
      "artifact:after_pre_grad_graph", "artifact:before_post_grad_graph", "artifact:after_post_grad_graph"};
  return std::find(std::begin(kGenerated), std::end(kGenerated), kind) != std::end(kGenerated);
}

// (a) torch said so: a limit message in a compile's failure, restart or graph-break text, or in
// an extra record that is not generated whole; (b) a frame's cache-entry count reached the limit in
// its dynamo_config.
LimitHits FindLimitHits(const v1::SessionCapture& capture, std::map<uint32_t, FrameStats>& frames) {
  LimitHits out;
  // The frame a message is about: the one of the compile it was logged in, unless the message
  // names another; then the frame whose name, file and first line match the message's (as far as
  // it gives them), or failing the line (a frame read from a stack has its current line), whose
  // name and file do. Names alone do not tell frames apart: every module's `forward` shares one.
  auto frame_for = [&](const CacheLimitMessage& msg,
                       std::optional<uint32_t> frame_id) -> FrameStats* {
    FrameStats* own = nullptr;
    if (frame_id) {
      auto it = frames.find(*frame_id);
      if (it != frames.end()) own = &it->second;
    }
    if (msg.function.empty()) return own;
    const auto named = [&msg](const FrameStats& f, bool by_line) {
      return f.name == msg.function && (msg.file.empty() || f.file == msg.file) &&
             (!by_line || msg.line == 0 || f.line == msg.line);
    };
    for (const bool by_line : {true, false}) {
      if (own != nullptr && named(*own, by_line)) return own;
      for (auto& [id, stats] : frames) {
        if (named(stats, by_line)) return &stats;
      }
    }
    return own;
  };
  // `where` names the text in the evidence; it is built only for a text that holds a message (most
  // hold none, and there is one scan per compile field and per extra record).
  auto scan = [&](absl::string_view text, std::optional<uint32_t> frame_id, auto where_fn) {
    std::optional<CacheLimitMessage> msg = ParseCacheLimitMessage(text);
    if (!msg) return;
    const std::string where = where_fn();
    FrameStats* frame = frame_for(*msg, frame_id);
    std::optional<uint64_t> value = msg->value;
    if (!value && frame != nullptr) value = frame->config.limit;
    std::string evidence = absl::StrCat("torch reported hitting ", msg->limit);
    if (msg->value) absl::StrAppend(&evidence, " (", *msg->value, ")");
    absl::StrAppend(&evidence, " in ", where);
    if (!msg->last_reason.empty()) absl::StrAppend(&evidence, "; last reason: ", msg->last_reason);
    out.Add(frame, msg->function, msg->limit, value, evidence, capture.session());
  };
  for (const v1::Compile& compile : capture.compiles()) {
    const auto in_compile = [&](absl::string_view field) {
      return [&compile, field] { return absl::StrCat("compile ", compile.id().empty() ? "?" : compile.id(), " ", field); };
    };
    scan(compile.fail_type(), compile.frame_id(), in_compile("fail_type"));
    scan(compile.fail_reason(), compile.frame_id(), in_compile("fail_reason"));
    for (const std::string& reason : compile.restart_reasons()) {
      scan(reason, compile.frame_id(), in_compile("restart reason"));
    }
    for (const v1::GraphBreak& gb : compile.graph_breaks()) {
      scan(gb.reason(), compile.frame_id(), in_compile("graph break"));
    }
  }
  for (const v1::Extra& extra : capture.extras()) {
    if (IsGeneratedRecord(extra.kind())) continue;
    std::optional<uint32_t> frame_id;
    if (auto parts = ParseCompileId(extra.compile_id())) frame_id = parts->frame_id;
    scan(extra.payload(), frame_id, [&extra] { return absl::StrCat("a `", extra.kind(), "` record"); });
  }
  for (auto& [id, frame] : frames) {
    const size_t entries = frame.entries.size();
    const std::string source =
        frame.config.limit_from_capture ? "dynamo_config" : "torch's default";
    for (const auto& [name, limit] :
         {std::make_pair(frame.config.limit_name, frame.config.limit),
          std::make_pair(frame.config.accumulated_name, frame.config.accumulated_limit)}) {
      if (entries < limit) continue;
      out.Add(&frame, frame.name, name, limit,
              absl::StrCat(Code(frame.name), " compiled ", entries, " cache entries, reaching ",
                           name, " = ", limit, " (", source,
                           "); further guard failures run the frame eagerly"),
              capture.session());
    }
  }
  return out;
}

}  // namespace

absl::Status RecompilePass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  const v1::SessionCapture& capture = in.head;
  v1::RecompileSection* section = out->mutable_recompile();
  if (capture.compiles().empty()) {
    section->set_status(v1::SKIPPED);
    section->set_reason("no compiles in the capture");
    return absl::OkStatus();
  }
  std::map<uint32_t, FrameStats> frames = CollectFrames(capture);

  // Parse every recompile and file its primary reason under a cluster.
  std::vector<Cluster> clusters;
  std::map<std::tuple<uint32_t, Category::Value, std::string>, size_t> cluster_index;
  std::set<std::pair<uint32_t, uint32_t>> recompiles;  // (frame, frame_compile_id)
  uint32_t unrecognised = 0;
  std::string first_unrecognised;
  for (const v1::Compile& compile : capture.compiles()) {
    if (in.Cancelled()) return absl::CancelledError("recompile pass cancelled");
    if (compile.recompile_reasons().empty()) continue;
    // A restarted compile ("0/1_1") repeats its first attempt's reasons: one recompile.
    if (!recompiles.emplace(compile.frame_id(), compile.frame_compile_id()).second) continue;
    FrameStats& frame = frames[compile.frame_id()];
    ++frame.recompiles;

    std::vector<std::vector<GuardFailure>> bullets;
    for (const std::string& reason : compile.recompile_reasons()) {
      bullets.push_back(ParseRecompileReason(reason));
      for (const GuardFailure& f : bullets.back()) {
        v1::ParsedReason* parsed = section->add_reasons();
        parsed->set_compile_id(compile.id());
        parsed->set_entry_id(f.entry_id);
        parsed->set_category(f.category);
        parsed->set_variable(f.variable);
        parsed->set_axis(f.Axis());
        parsed->set_expected(f.expected);
        parsed->set_actual(f.actual);
        parsed->set_raw(reason);
        if (f.category == Category::OTHER) {
          if (unrecognised == 0) first_unrecognised = reason;
          ++unrecognised;
        }
      }
    }
    const uint32_t first_entry = frame.entries.empty() ? 0 : *frame.entries.begin();
    // One count per cluster per recompile.
    std::set<std::pair<Category::Value, std::string>> filed;
    for (const GuardFailure& f : bullets[PrimaryBullet(bullets, first_entry)]) {
      const std::string axis = f.Axis();
      if (!filed.emplace(f.category, axis).second) continue;
      auto [it, inserted] =
          cluster_index.try_emplace({compile.frame_id(), f.category, axis}, clusters.size());
      if (inserted) {
        Cluster& c = clusters.emplace_back();
        c.frame_id = compile.frame_id();
        c.category = f.category;
        c.axis = axis;
        c.example = f;
        c.first_seen = clusters.size() - 1;
      }
      Cluster& c = clusters[it->second];
      ++c.count;
      if (!f.expected.empty() && !f.actual.empty()) {
        AddUnique(&c.transitions, absl::StrCat(f.expected, kArrow, f.actual));
      } else if (!f.expected.empty()) {
        AddUnique(&c.guarded_values, f.expected);
      }
    }
  }

  section->set_status(v1::OK);
  section->set_total(static_cast<uint32_t>(recompiles.size()));

  // Frames, most recompiles first.
  std::vector<const FrameStats*> recompiling;
  for (const auto& [id, frame] : frames) {
    if (frame.recompiles > 0) recompiling.push_back(&frame);
  }
  std::stable_sort(
      recompiling.begin(), recompiling.end(),
      [](const FrameStats* a, const FrameStats* b) { return a->recompiles > b->recompiles; });
  for (const FrameStats* frame : recompiling) {
    v1::RecompileFrame* f = section->add_frames();
    f->set_name(frame->name);
    f->set_recompiles(frame->recompiles);
    if (!frame->file.empty())
      *f->mutable_location() = MakeLocation(capture.session(), frame->file, frame->line);
  }
  if (section->frames_size() > 0) *section->mutable_frame() = section->frames(0);

  // Clusters, largest first; their suggestions in the same order, expected behaviour last.
  std::stable_sort(clusters.begin(), clusters.end(),
                   [](const Cluster& a, const Cluster& b) { return a.count > b.count; });
  std::set<Category::Value> categories;
  std::vector<v1::Suggestion> info;
  LimitHits limits = FindLimitHits(capture, frames);
  for (const v1::CacheLimitHit& hit : limits.hits) {
    v1::Suggestion* s = section->add_suggestions();
    s->set_category(Category::CACHE_LIMIT);
    s->set_text(absl::StrCat(Code(hit.frame()), " reached ", Code(hit.limit()),
                             ": later guard failures run it eagerly — fix the dominant recompile "
                             "cause below; raise `torch._dynamo.config.",
                             hit.limit(),
                             "` only as a last resort, and use "
                             "`torch.compiler.set_stance(\"fail_on_recompile\")` in CI to catch "
                             "regressions."));
    s->set_evidence(hit.evidence());
  }
  for (const v1::CacheLimitHit& hit : limits.hits) *section->add_cache_limit_hits() = hit;
  const bool several_frames = recompiling.size() > 1;
  for (const Cluster& c : clusters) {
    const FrameStats& frame = frames[c.frame_id];
    categories.insert(c.category);
    v1::RecompileCluster* rc = section->add_clusters();
    rc->set_category(c.category);
    rc->set_count(c.count);
    rc->set_variable(c.example.variable);
    rc->set_axis(c.axis);
    for (const std::string& t : c.transitions) rc->add_transitions(t);
    rc->set_frame(frame.name);
    if (!frame.file.empty())
      *rc->mutable_location() = MakeLocation(capture.session(), frame.file, frame.line);

    Advice advice = Advise(c, frame);
    v1::Suggestion s;
    s.set_text(advice.text);
    s.set_evidence(Evidence(c, frame, several_frames));
    s.set_category(c.category);
    if (advice.info) {
      info.push_back(std::move(s));
    } else {
      *section->add_suggestions() = std::move(s);
    }
  }
  for (v1::Suggestion& s : info) *section->add_suggestions() = std::move(s);
  section->set_categories(static_cast<uint32_t>(categories.size()));

  absl::StatusOr<std::vector<v1::GraphBreakSummary>> breaks = SummarizeGraphBreaks(in);
  if (!breaks.ok()) return breaks.status();
  for (v1::GraphBreakSummary& gb : *breaks) *section->add_graph_breaks() = std::move(gb);

  // Unrecognised text is reported, never silently dropped.
  if (unrecognised > 0) {
    v1::Diagnostic* d = out->add_diagnostics();
    d->set_severity(v1::Diagnostic::WARNING);
    d->set_where("pass recompile");
    d->set_message(absl::StrCat(unrecognised,
                                " recompile reason(s) not recognised (category "
                                "\"other\"); first: ",
                                Truncate(first_unrecognised, 200)));
  }
  return absl::OkStatus();
}

}  // namespace cl

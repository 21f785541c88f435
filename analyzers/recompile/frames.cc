#include "analyzers/recompile/frames.h"

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "analyzers/common/location.h"
#include "capture/torch_trace/json_value.h"
#include "google/protobuf/struct.pb.h"

namespace cl {
namespace {

using ::google::protobuf::Struct;
using ::google::protobuf::Value;

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
  } else if (it->second.kind_case() == Value::kStringValue &&
             json::ParseStruct(it->second.string_value(), &parsed)) {
    config = &parsed;
  } else {
    return std::nullopt;
  }
  DynamoConfig out;
  for (auto [name, field] : {std::pair{"automatic_dynamic_shapes", &out.automatic_dynamic_shapes},
                             std::pair{"specialize_float", &out.specialize_float}}) {
    if (auto f = config->fields().find(name);
        f != config->fields().end() && f->second.kind_case() == Value::kBoolValue) {
      *field = f->second.bool_value();
    }
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

std::string StringField(const Struct& s, const char* name) {
  auto it = s.fields().find(name);
  return it != s.fields().end() && it->second.kind_case() == Value::kStringValue
             ? it->second.string_value()
             : "";
}

}  // namespace

std::map<uint32_t, FrameStats> CollectFrames(const v1::SessionCapture& capture) {
  std::map<uint32_t, FrameStats> frames;
  for (const v1::Frame& frame : capture.frames()) {
    FrameStats& stats = frames[frame.id()];
    stats.id = frame.id();
    stats.name = frame.name();
    stats.file = frame.file();
    stats.line = frame.line();
    if (frame.reset_round() > 0 && stats.name.empty()) {
      stats.name =
          absl::StrCat("frame ", frame.torch_id(), " (reset round ", frame.reset_round(), ")");
    }
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
    if (compile.fail_type() == "RecompileLimitExceeded" && compile.attempt() == 0) {
      stats.refused.push_back(compile.id());
    }
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
  // A compiled module whose forward is torch's own (an nn.Sequential) compiles torch's wrapper
  // `inner` (torch/_dynamo/external_utils.py): the user's line that called it, the innermost frame
  // of its first compile's stack outside installed packages, is where the user can look.
  std::set<uint32_t> placed;  // each wrapper frame once, at its first compile's call
  for (const v1::Compile& compile : capture.compiles()) {
    FrameStats& stats = frames[compile.frame_id()];
    if (placed.contains(compile.frame_id())) continue;
    if (const v1::StackFrame* user = NameTorchWrapper(compile, stats.file, &stats.name)) {
      placed.insert(compile.frame_id());
      stats.torch_wrapper = true;
      stats.file = user->file();
      stats.line = user->line();
    }
  }
  return frames;
}

}  // namespace cl

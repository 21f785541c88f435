// The frames that compiled, as the recompile pass reads them: each frame's cache entries and
// recompiles, and the dynamo configuration its compiles recorded (docs/torch-semantics.md
// §1.7), which the advice and the cache-limit hits both read.
#ifndef ANALYZERS_RECOMPILE_FRAMES_H_
#define ANALYZERS_RECOMPILE_FRAMES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analyzers/pass.h"

namespace cl {

// The facts of compilation_metrics.dynamo_config the heuristics of §1.7 need.
struct DynamoConfig {
  std::optional<bool> automatic_dynamic_shapes;  // false: compiled with dynamic=False
  // false: a float that changes is made a graph input on its recompile (torch 2.6's default), as
  // automatic dynamic makes a size one
  std::optional<bool> specialize_float;
  std::string limit_name = "recompile_limit";
  uint64_t limit = 8;  // torch's default
  bool limit_from_capture = false;
  std::string accumulated_name = "accumulated_recompile_limit";
  uint64_t accumulated_limit = 256;
};

// One frame that compiled. The pass counts `recompiles`; the rest is the capture's.
struct FrameStats {
  uint32_t id = 0;
  std::string name;
  std::string file;
  uint32_t line = 0;
  // torch's wrapper of a compiled built-in module (external_utils.py's `inner`), placed at the
  // user's call: `file` and `line` are that call's.
  bool torch_wrapper = false;
  std::set<uint32_t> entries;  // frame_compile_ids torch tried: the frame's cache entries
  // The compiles torch refused at a cache-size limit (fail_type RecompileLimitExceeded), by id:
  // they are in `entries` but hold no cache entry.
  std::vector<std::string> refused;
  uint32_t recompiles = 0;
  DynamoConfig config;  // from the frame's latest compile that recorded it
  bool has_config = false;
  size_t first_seen = 0;
};

// One FrameStats per frame that compiled. Frames come from `frames[]`; a compile whose frame the
// capture does not list is named from its compilation_metrics (co_name, co_filename, ...).
std::map<uint32_t, FrameStats> CollectFrames(const v1::SessionCapture& capture);

}  // namespace cl

#endif  // ANALYZERS_RECOMPILE_FRAMES_H_

// Restarts that were graph breaks.
//
// When Dynamo meets something it cannot trace in the middle of a frame, it abandons the attempt and
// restarts analysis to compile the graph up to that point (a speculation restart): the break is
// recorded only as the next attempt's `restart_reasons` ("'skip function graph_break in file
// .../decorators.py'"), with no graph-break record of its own. Such a restart is the graph break it
// is. Restarts of another kind carry an exception class instead of a reason ("<class
// 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>") and are not breaks.
#ifndef ANALYZERS_COMMON_RESTARTS_H_
#define ANALYZERS_COMMON_RESTARTS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

// True when a restart reason is a graph break's.
bool IsGraphBreakRestart(absl::string_view reason);

// The graph-break restarts of a capture's compiles. Torch logs a break on attempt 0 and its
// reason on attempt 1, so a restart reason is a break of its own only when no attempt of the same
// frame compile records it; the attempts' records are indexed once, so a capture of many
// restarted compiles costs one pass, not one per restart.
class GraphBreakRestarts {
 public:
  explicit GraphBreakRestarts(const compile_lens::v1::SessionCapture& capture);

  // The restart reasons of `compile` (one of the capture's) that are graph breaks no attempt of
  // its frame compile already records.
  std::vector<absl::string_view> Of(const compile_lens::v1::Compile& compile) const;

  // The graph breaks of `compile`: its graph-break records and its graph-break restarts.
  size_t Count(const compile_lens::v1::Compile& compile) const {
    return static_cast<size_t>(compile.graph_breaks_size()) + Of(compile).size();
  }

 private:
  // (frame id, frame compile id) → the graph-break records of all its attempts.
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>,
                      std::vector<const compile_lens::v1::GraphBreak*>>
      recorded_;
};

}  // namespace cl

#endif  // ANALYZERS_COMMON_RESTARTS_H_

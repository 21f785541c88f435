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

#include <vector>

#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

// True when a restart reason is a graph break's.
bool IsGraphBreakRestart(absl::string_view reason);

// The restart reasons of `compile` that are graph breaks no attempt of its frame compile in
// `capture` already records (torch logs the break on attempt 0 and the reason on attempt 1).
std::vector<absl::string_view> RestartGraphBreaks(const compile_lens::v1::Compile& compile,
                                                  const compile_lens::v1::SessionCapture& capture);

// The graph breaks of `compile`: its graph-break records and its graph-break restarts.
inline size_t GraphBreakCount(const compile_lens::v1::Compile& compile,
                              const compile_lens::v1::SessionCapture& capture) {
  return static_cast<size_t>(compile.graph_breaks_size()) +
         RestartGraphBreaks(compile, capture).size();
}

}  // namespace cl

#endif  // ANALYZERS_COMMON_RESTARTS_H_

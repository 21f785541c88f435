// A session's compiles on a timeline: Chrome Trace Event Format JSON (the JSON Object Format,
// {"traceEvents": [...]}) that ui.perfetto.dev and chrome://tracing open. One process per rank,
// named "rank N"; on its thread each compile attempt is a complete ("X") event spanning its
// phases, and each phase pair torch's chromium events recorded is an "X" event inside it, both
// with the compile id and frame in `args`. Times are torch's clock, in microseconds.
#ifndef SERVICE_RENDER_TRACE_EVENTS_H_
#define SERVICE_RENDER_TRACE_EVENTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

// The captures' compiles as trace events (a multi-rank session: one capture per rank). A compile
// with neither a start time nor a timed phase has no place on the timeline and is left out.
absl::StatusOr<std::string> RenderTraceEvents(
    const std::vector<const compile_lens::v1::SessionCapture*>& captures);

}  // namespace cl

#endif  // SERVICE_RENDER_TRACE_EVENTS_H_

// Graph breaks: what tlparse users ask for, deduplicated by reason and user frame.
//
// A graph break reason reaches the capture in one of several shapes (docs/torch-semantics.md
// §2.1): the whole `dynamo_graph_break_reason` payload ("Graph break in user code at f:l /
// Reason: ... / User code traceback: ..."), a TORCH_LOGS=graph_breaks record, a structured
// "unimplemented_v2" message (gb_type, Explanation, Hints, GB id link) or a terse legacy reason
// ("generic_jump TensorVariable()"). ParseGraphBreak reads any of them; SummarizeGraphBreaks
// groups a capture's breaks for the recompile section. It is a helper of the recompile pass, not
// a pass of its own.
#ifndef ANALYZERS_RECOMPILE_GRAPH_BREAKS_H_
#define ANALYZERS_RECOMPILE_GRAPH_BREAKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analyzers/pass.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

// One graph break reason, parsed.
struct ParsedGraphBreak {
  std::string reason;  // the reason's first line; the gb_type for structured messages
  std::string gb_id;   // "GB0170" when the text links to the graph-break registry
  v1::GraphBreakCategory::Value category = v1::GraphBreakCategory::UNSPECIFIED;  // §2.2
  std::string remedy;          // what to change, for the category
  bool specific = false;       // the remedy is for this one call, not its whole category
  bool frame_skipped = false;  // the whole frame fell back to eager
  // The user frame the text names (the header's "at f:l", or the last user traceback line).
  std::string file;
  uint32_t line = 0;
  std::string function;
};

ParsedGraphBreak ParseGraphBreak(absl::string_view text);

// Every `Compile.graph_breaks` entry of the head capture, grouped by (reason, user frame
// file:line), with counts; frame-skipping breaks first, then by count. Locations are relative to
// the project root. Fails only with CancelledError when `in` is cancelled.
absl::StatusOr<std::vector<compile_lens::v1::GraphBreakSummary>> SummarizeGraphBreaks(
    const PassInput& in);

}  // namespace cl

#endif  // ANALYZERS_RECOMPILE_GRAPH_BREAKS_H_

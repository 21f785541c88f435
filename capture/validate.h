// Validation of a SessionCapture's internal consistency.
//
// Parsing guarantees types; this checks what the passes rely on: ids have their grammar and are
// unique, and every reference (a compile's frame, a graph's compile, a node's arguments, an
// iteration's cache entry, a kernel's graph) names something that exists. Errors name the field
// path, e.g. `compiles[3].id: "0/x" is not a compile id`.
#ifndef CAPTURE_VALIDATE_H_
#define CAPTURE_VALIDATE_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// OK, or INVALID_ARGUMENT naming the first problem (and how many more there are).
absl::Status ValidateCapture(const v1::SessionCapture& capture);

// What ValidateCapture checks of one graph's nodes (names, ops, each argument naming an earlier
// node), for a graph whose nodes the capture will not keep; problems are named from
// `graph "<id>".nodes[...]`.
absl::Status ValidateGraphNodes(const v1::Graph& graph);

// A compile id split into its parts: "0/1" or "0/1_2" (frame 0, compile 1, attempt 2), with
// compiled autograd "!3/0/1" (torch's spelling: compiled autograd graph 3), after the Nth
// torch._dynamo.reset() "0/1@N", and "-/4" for the fifth compile logged with no compile id.
struct CompileId {
  uint32_t frame_id = 0;  // torch's frame id (Frame.torch_id when reset_round > 0)
  uint32_t frame_compile_id = 0;
  uint32_t attempt = 0;
  std::optional<uint32_t> compiled_autograd_id;
  uint32_t reset_round = 0;
  bool no_frame = false;  // "-/N": frame_compile_id is N
};
inline constexpr size_t kCompileIdDigits = 9;  // the most each number may have
inline constexpr int64_t kMaxCompileIdNumber = [] {
  int64_t n = 0;
  for (size_t i = 0; i < kCompileIdDigits; ++i) n = n * 10 + 9;
  return n;
}();
std::optional<CompileId> ParseCompileId(absl::string_view id);

}  // namespace cl

#endif  // CAPTURE_VALIDATE_H_

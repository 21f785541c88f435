// Cuts a SessionCapture into CapturePart messages for the Analyze stream.
//
// Every part stays under a byte budget whatever the capture's size: items are sent one per part,
// graph nodes in batches, source text in pieces, and any single item still over the budget as
// Fragments of its serialized bytes. CaptureAssembler (capture_assembler.h) puts them back
// together.
#ifndef CAPTURE_STREAM_CAPTURE_SPLITTER_H_
#define CAPTURE_STREAM_CAPTURE_SPLITTER_H_

#include <cstddef>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/service.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// The largest encoded CapturePart the splitter produces by default: far under the 1 MiB message
// cap, so the AnalyzeChunk envelope never pushes a message over it.
inline constexpr size_t kDefaultPartBudget = 512 * 1024;
inline constexpr size_t kMaxPartBudget = 1024 * 1024 - 4096;

// Calls `emit` with each part of `capture`, tagged `side`, in an order the assembler accepts.
// Stops at, and returns, the first error `emit` returns.
absl::Status SplitCapture(const v1::SessionCapture& capture, v1::Side side, size_t part_budget,
                          absl::FunctionRef<absl::Status(v1::CapturePart&&)> emit);

// The parts that carry one source file's text, tagged `side`: pieces under the budget, cut on
// UTF-8 character boundaries.
absl::Status SplitSource(const v1::SourceFile& source, v1::Side side, size_t part_budget,
                         absl::FunctionRef<absl::Status(v1::CapturePart&&)> emit);

}  // namespace cl

#endif  // CAPTURE_STREAM_CAPTURE_SPLITTER_H_

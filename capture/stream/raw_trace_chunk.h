// The wire bytes of the message that carries a piece of a raw TORCH_TRACE log over the Analyze
// stream: AnalyzeChunk{part: CapturePart{side, torch_trace: piece}}, written straight from the
// piece into the caller's buffer.
//
// `cl-client upload` sends a log as it reads it, tens of megabytes of pieces. Building each one as
// a CapturePart (a copy of the piece) and serializing the chunk (a second copy, into fresh pages)
// was half of the client's CPU, on the two cores it shares with the server's import. The bytes are
// exactly those protobuf's serialization gives for the same message (fields in number order, no
// unknown fields), so a retried upload hashes the same and the server reads them as it reads any
// part.
#ifndef CAPTURE_STREAM_RAW_TRACE_CHUNK_H_
#define CAPTURE_STREAM_RAW_TRACE_CHUNK_H_

#include <cstddef>

#include "absl/strings/string_view.h"
#include "compile_lens/v1/service.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// How many bytes WriteRawTraceChunk writes for a piece of `piece_size` bytes.
size_t RawTraceChunkSize(v1::Side side, size_t piece_size);

// Writes the chunk for `piece` from `side` to `out`, which holds RawTraceChunkSize() bytes; returns
// the size written.
size_t WriteRawTraceChunk(v1::Side side, absl::string_view piece, char* out);

// The chunk's bytes before its piece, for a piece of `piece_size` bytes sent from where it lies
// (the chunk is these bytes, then the piece): at most kMaxRawTraceChunkHeader of them, written to
// `out`; returns how many.
inline constexpr size_t kMaxRawTraceChunkHeader = 40;
size_t WriteRawTraceChunkHeader(v1::Side side, size_t piece_size, char* out);

}  // namespace cl

#endif  // CAPTURE_STREAM_RAW_TRACE_CHUNK_H_

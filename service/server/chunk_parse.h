// Reading one AnalyzeChunk out of the bytes of an Analyze message, for the reactor (the options,
// the end marker) and the analysis task (the kept part-carrying messages), with the one error both
// give for a message that does not parse.
#ifndef SERVICE_SERVER_CHUNK_PARSE_H_
#define SERVICE_SERVER_CHUNK_PARSE_H_

#include <cstdint>
#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "compile_lens/v1/service.pb.h"
#include "grpcpp/support/byte_buffer.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// What gRPC's own deserializer does (protobuf's default limits: recursion depth 100), here so that
// the error can say which message it was and why it may have failed.
bool ParseChunk(grpc::ByteBuffer* message, v1::AnalyzeChunk* chunk);

// A raw log's bytes read in place: for a message that is nothing but raw TORCH_TRACE parts (a
// `part`, or a batch of `parts`, each its side then its torch_trace bytes, as cl-client sends a
// log), calls `apply` with each part's side and its bytes as the pieces the received slices hold
// them in (no copy into a parsed message), in order, and returns the first error. Any other
// message, or one cut short, returns nullopt having called nothing: ParseChunk reads it (and says
// what is wrong with it).
std::optional<absl::Status> ApplyRawTraceParts(
    grpc::ByteBuffer* message,
    absl::FunctionRef<absl::Status(v1::Side side, absl::Span<const absl::string_view> pieces)>
        apply);

// INVALID_ARGUMENT for message `number` of the stream, which is not an AnalyzeChunk: names the
// field where it goes wrong ("parts.parts[2].graph.nodes[7].name (byte 1234): not UTF-8"), walking
// it again (only on this error path).
absl::Status NotAChunk(uint64_t number, const grpc::ByteBuffer& message);

}  // namespace cl

#endif  // SERVICE_SERVER_CHUNK_PARSE_H_

// Reading one AnalyzeChunk out of the bytes of an Analyze message, for the reactor (the options,
// the end marker) and the analysis task (the kept part-carrying messages), with the one error both
// give for a message that does not parse.
#ifndef SERVICE_SERVER_CHUNK_PARSE_H_
#define SERVICE_SERVER_CHUNK_PARSE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "compile_lens/v1/service.pb.h"
#include "grpcpp/support/byte_buffer.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// What gRPC's own deserializer does (protobuf's default limits: recursion depth 100), here so that
// the error can say which message it was and why it may have failed.
bool ParseChunk(grpc::ByteBuffer* message, v1::AnalyzeChunk* chunk);

// INVALID_ARGUMENT for message `number` of the stream, which is not an AnalyzeChunk: names the
// field where it goes wrong ("parts.parts[2].graph.nodes[7].name (byte 1234): not UTF-8"), walking
// it again (only on this error path).
absl::Status NotAChunk(uint64_t number, const grpc::ByteBuffer& message);

}  // namespace cl

#endif  // SERVICE_SERVER_CHUNK_PARSE_H_

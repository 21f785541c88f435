// Which member of AnalyzeChunk's `kind` oneof a serialized message sets, read off its top-level
// tags without parsing what they carry.
//
// cl-server reads each message of an Analyze stream as it arrives but parses the parts it carries
// later, in the analysis task (service/server/analysis_task.h): it needs to know at once whether
// a message is the end marker, a second set of options, or nothing at all. The answer is the one
// protobuf's parse gives: the last occurrence of a member with its wire type (length-delimited)
// wins, and a member with another wire type is an unknown field. Framing is checked as the parse
// checks it (tags, varints, lengths, groups); what the members carry is not looked at.
#ifndef CAPTURE_STREAM_CHUNK_KIND_H_
#define CAPTURE_STREAM_CHUNK_KIND_H_

#include <optional>

#include "compile_lens/v1/service.pb.h"
#include "google/protobuf/io/zero_copy_stream.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// The kind, or nullopt where the message's framing is broken (cut short, a malformed varint or
// tag, an unmatched group): bytes that protobuf's parse refuses too. Reads `in` to its end.
std::optional<v1::AnalyzeChunk::KindCase> ChunkKindOnWire(
    google::protobuf::io::ZeroCopyInputStream* in);

// Whether a serialized AnalyzeChunk carries raw TORCH_TRACE bytes: a `part`, or one in a batch of
// `parts`, with a torch_trace field. A part whose oneof a later member overrides counts too: the
// server then applies the call's messages as they arrive from this one on, which changes when it
// parses them, not what it makes of them. False for broken framing, which the parse reports. Reads
// `in` to its end.
bool CarriesTorchTrace(google::protobuf::io::ZeroCopyInputStream* in);

}  // namespace cl

#endif  // CAPTURE_STREAM_CHUNK_KIND_H_

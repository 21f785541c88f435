// Proto3 `string` fields must hold valid UTF-8, but a report's strings come from uploaded
// captures, and an importer may carry bad bytes through. protobuf then logs an error per field
// and its JSON printer writes the bytes raw, producing JSON that nothing (protobuf included) can
// read back. RepairUtf8 fixes a message in place before it is printed or sent. The same strings
// may be any length an upload allows: ClipLongStrings bounds what a report echoes back.
#ifndef COMMON_PROTO_UTF8_H_
#define COMMON_PROTO_UTF8_H_

#include <cstddef>
#include <optional>
#include <string>

#include "google/protobuf/message.h"

namespace cl {

// Replaces every ill-formed byte in every string field of `message` (singular, repeated and map
// keys/values, at any depth) with U+FFFD. Returns the number of strings it changed. `bytes`
// fields are left alone: they may hold anything.
int RepairUtf8(google::protobuf::Message& message);

// Clips every string field of `message` longer than `max_bytes` (at any depth; map values, not
// map keys, which must stay distinct) to its first `max_bytes` (cut at a character boundary, as
// Utf8Prefix cuts) and a mark that states the whole length: "…[clipped: 16777216 bytes in all]".
// Returns the number of strings it clipped.
int ClipLongStrings(google::protobuf::Message& message, size_t max_bytes);

// `value` clipped as ClipLongStrings clips a string; nullopt when it is no longer than
// `max_bytes`. For typed walks (RewriteReportStrings) that build no descriptors.
std::optional<std::string> ClippedString(const std::string& value, size_t max_bytes);

}  // namespace cl

#endif  // COMMON_PROTO_UTF8_H_

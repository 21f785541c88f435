// Proto3 JSON, and wire bytes, that are the same bytes for the same message.
//
// protobuf's JSON printer writes map entries in its hash order, which differs between processes;
// reports and captures are compared byte for byte (in-process vs server, golden files), so every
// JSON the project writes goes through here: the message is serialized deterministically (map
// entries sorted by key) and the wire bytes are printed as JSON.
#ifndef COMMON_PROTO_JSON_H_
#define COMMON_PROTO_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/message_lite.h"
#include "google/protobuf/util/json_util.h"

namespace cl {

// `message`'s wire bytes with map entries sorted by key (protobuf's default order is its hash
// order, random per map): equal messages give equal bytes. Protobuf serializes nothing past 2 GiB:
// a message that large gives "".
std::string DeterministicBytes(const google::protobuf::MessageLite& message);

absl::StatusOr<std::string> ToDeterministicJson(const google::protobuf::Message& message,
                                                const google::protobuf::util::JsonPrintOptions& options);

}  // namespace cl

#endif  // COMMON_PROTO_JSON_H_

// Proto3 JSON, and wire bytes, that are the same bytes for the same message.
//
// protobuf's JSON printer writes map entries in its hash order, which differs between processes;
// reports and captures are compared byte for byte (in-process vs server, golden files), so every
// JSON the project writes goes through here: the message is serialized deterministically (map
// entries sorted by key) and the wire bytes are printed as JSON, or, where it can
// (proto_json_printer.h), the message is printed directly with the same bytes as the result.
#ifndef COMMON_PROTO_JSON_H_
#define COMMON_PROTO_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/io/zero_copy_stream.h"
#include "google/protobuf/message.h"
#include "google/protobuf/message_lite.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/type_resolver.h"

namespace cl {

// The prefix of the type URLs the JSON conversions name types by ("type.googleapis.com/<name>").
inline constexpr char kTypeUrlPrefix[] = "type.googleapis.com";

// `message`'s wire bytes with map entries sorted by key (protobuf's default order is its hash
// order, random per map): equal messages give equal bytes. Protobuf serializes nothing past 2 GiB:
// a message that large gives "".
std::string DeterministicBytes(const google::protobuf::MessageLite& message);

// `message` as proto3 JSON, printed from DeterministicBytes through `types`: the generated pool as
// protobuf describes it when null (then printed directly by PrintProtoJson where it can), or a
// resolver that describes the same types otherwise (the report's, proto/report_words.h, which
// names enum values by their words).
absl::StatusOr<std::string> ToDeterministicJson(
    const google::protobuf::Message& message,
    const google::protobuf::util::JsonPrintOptions& options,
    google::protobuf::util::TypeResolver* types = nullptr);

// The same JSON, written to `out` as it is printed (a capture's is hundreds of megabytes).
absl::Status WriteDeterministicJson(const google::protobuf::Message& message,
                                    const google::protobuf::util::JsonPrintOptions& options,
                                    google::protobuf::io::ZeroCopyOutputStream* out,
                                    google::protobuf::util::TypeResolver* types = nullptr);

}  // namespace cl

#endif  // COMMON_PROTO_JSON_H_

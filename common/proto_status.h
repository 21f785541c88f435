// protobuf 3.21 returns its own util::Status (not absl::Status) from the JSON utilities; this is
// the one place it is converted. The codes share absl's numbering.
#ifndef COMMON_PROTO_STATUS_H_
#define COMMON_PROTO_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/stubs/status.h"

namespace cl {

// `what` says what was being parsed or printed ("head.cls.json"); it prefixes the message.
inline absl::Status FromProtobufStatus(const google::protobuf::util::Status& status,
                                       absl::string_view what) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.code()),
                      absl::StrCat(what, ": ", std::string(status.message())));
}

}  // namespace cl

#endif  // COMMON_PROTO_STATUS_H_

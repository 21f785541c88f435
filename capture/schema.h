// Which capture schema versions compile-lens reads.
#ifndef CAPTURE_SCHEMA_H_
#define CAPTURE_SCHEMA_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cl {

// The version this build writes.
inline constexpr absl::string_view kSchemaVersion = "0.5.0";
// What it reads: any 0.5.x (patch releases only add fields).
inline constexpr absl::string_view kSchemaAccepted = "0.5.x";

// OK for a version this build reads; otherwise INVALID_ARGUMENT saying which versions are read.
absl::Status CheckSchema(absl::string_view version);

}  // namespace cl

#endif  // CAPTURE_SCHEMA_H_

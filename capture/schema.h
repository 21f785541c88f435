// Which capture schema versions compile-lens writes and reads.
#ifndef CAPTURE_SCHEMA_H_
#define CAPTURE_SCHEMA_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

// The version this build writes: capture.proto's (schema_version) option, the one definition the
// Python package reads too. Inline, so that the importer (cl_torch_trace) needs no cl_capture.
inline const std::string& SchemaVersion() {
  return ::compile_lens::v1::SessionCapture::descriptor()->file()->options().GetExtension(
      ::compile_lens::v1::schema_version);
}

// OK for a version this build reads: the same major.minor as SchemaVersion(), any patch (patch
// releases only add fields). Otherwise INVALID_ARGUMENT saying which versions are read.
absl::Status CheckSchema(absl::string_view version);

}  // namespace cl

#endif  // CAPTURE_SCHEMA_H_

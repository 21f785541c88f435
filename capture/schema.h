// Which capture schema versions compile-lens writes and reads.
#ifndef CAPTURE_SCHEMA_H_
#define CAPTURE_SCHEMA_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/report_code.h"

namespace cl {

// The version this build writes: capture.proto's (schema_version) option, the one definition the
// Python package reads too, as report_code.h holds it (reading the option would build the file's
// descriptors). Inline, so that the importer (cl_torch_trace) needs no cl_capture.
inline const std::string& SchemaVersion() {
  static const std::string* const kVersion = new std::string(kCaptureSchemaVersion);
  return *kVersion;
}

// OK for a version this build reads: the same major.minor as SchemaVersion(), any patch (patch
// releases only add fields). Otherwise INVALID_ARGUMENT saying which versions are read.
absl::Status CheckSchema(absl::string_view version);

}  // namespace cl

#endif  // CAPTURE_SCHEMA_H_

// The machine-readable report (docs/design.md §6): proto3 JSON of AnalysisReport, the form that
// dashboards, CI gates and scripts read.
#ifndef SERVICE_RENDER_JSON_H_
#define SERVICE_RENDER_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/report.pb.h"
#include "google/protobuf/message.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// Proto field names, every field printed (a contract path exists even when its value is zero or
// empty), indented. Fails only if protobuf cannot print the message.
absl::StatusOr<std::string> RenderJson(const v1::AnalysisReport& report);

// One part of the report (a section, a finding) printed as RenderJson prints it within the
// report, enum words included; its strings must be valid UTF-8 (RenderJson repairs them first).
absl::StatusOr<std::string> RenderReportJson(const google::protobuf::Message& message);

// Reads RenderJson's output back. Unknown fields are ignored, so a report from a newer server
// still loads; malformed JSON is INVALID_ARGUMENT.
absl::StatusOr<v1::AnalysisReport> ParseReportJson(absl::string_view json);

}  // namespace cl

#endif  // SERVICE_RENDER_JSON_H_

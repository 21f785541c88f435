// RenderJson / ParseReportJson: the machine-readable report, proto3 JSON with the proto field
// names (the contract paths of docs/design.md §6) and every field printed, so a reader can rely on
// a path existing even when its value is zero or empty. Both go through ReportTypes(), so that an
// enum value with a word (report.proto) reads and writes as its word.
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/proto_json.h"
#include "common/proto_status.h"
#include "common/proto_utf8.h"
#include "common/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "proto/report_words.h"
#include "service/render/json.h"

namespace cl {

absl::StatusOr<std::string> RenderJson(const v1::AnalysisReport& report) {
  // A copy, so that bad bytes from a capture become U+FFFD instead of invalid JSON; copying is
  // cheap next to printing.
  v1::AnalysisReport valid = report;
  RepairUtf8(valid);
  return RenderReportJson(valid);
}

absl::StatusOr<std::string> RenderReportJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  options.add_whitespace = true;
  return ToDeterministicJson(message, options, ReportTypes());
}

absl::StatusOr<v1::AnalysisReport> ParseReportJson(absl::string_view json) {
  google::protobuf::util::JsonParseOptions options;
  // A report written by a newer server may carry fields this build does not know.
  options.ignore_unknown_fields = true;
  std::string wire;
  CL_RETURN_IF_ERROR(FromProtobufStatus(
      google::protobuf::util::JsonToBinaryString(
          ReportTypes(),
          absl::StrCat(kTypeUrlPrefix, "/", v1::AnalysisReport::descriptor()->full_name()),
          google::protobuf::StringPiece(json.data(), json.size()), &wire, options),
      "report JSON"));
  v1::AnalysisReport report;
  if (!report.ParseFromString(wire)) return absl::InvalidArgumentError("report JSON: not a report");
  return report;
}

}  // namespace cl

#include "capture/capture_io.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capture/schema.h"
#include "capture/validate.h"
#include "common/file_io.h"
#include "common/proto_json.h"
#include "common/proto_status.h"
#include "common/status_macros.h"
#include "google/protobuf/util/json_util.h"

namespace cl {

absl::StatusOr<v1::SessionCapture> ParseCaptureJson(absl::string_view json) {
  v1::SessionCapture capture;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // a misspelt field is an error, not silently nothing
  CL_RETURN_IF_ERROR(FromProtobufStatus(
      google::protobuf::util::JsonStringToMessage(std::string(json), &capture, options), "not a capture"));
  return capture;
}

absl::StatusOr<v1::SessionCapture> ParseCaptureBinary(absl::string_view bytes) {
  v1::SessionCapture capture;
  if (!capture.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("not a capture: the bytes are not a SessionCapture protobuf");
  }
  return capture;
}

absl::StatusOr<v1::SessionCapture> LoadCapture(absl::string_view bytes, CaptureFormat format,
                                               absl::string_view name) {
  absl::StatusOr<v1::SessionCapture> capture =
      format == CaptureFormat::kJson ? ParseCaptureJson(bytes) : ParseCaptureBinary(bytes);
  absl::Status status = capture.status();
  if (status.ok()) status = CheckSchema(capture->schema());
  if (status.ok()) status = ValidateCapture(*capture);
  if (!status.ok()) return absl::Status(status.code(), absl::StrCat(name, ": ", status.message()));
  return capture;
}

absl::StatusOr<v1::SessionCapture> ReadCaptureFile(const std::string& path) {
  CL_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  const CaptureFormat format =
      absl::EndsWith(path, ".pb") ? CaptureFormat::kBinary : CaptureFormat::kJson;
  return LoadCapture(bytes, format, path);
}

absl::StatusOr<std::string> CaptureToJson(const v1::SessionCapture& capture) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.add_whitespace = true;
  return ToDeterministicJson(capture, options);
}

absl::Status WriteCaptureFile(const std::string& path, const v1::SessionCapture& capture) {
  if (absl::EndsWith(path, ".pb")) {
    std::string bytes;
    if (!capture.SerializeToString(&bytes)) {
      return absl::InternalError(absl::StrCat(path, ": capture does not serialize"));
    }
    return WriteFile(path, bytes);
  }
  CL_ASSIGN_OR_RETURN(std::string json, CaptureToJson(capture));
  return WriteFile(path, json);
}

}  // namespace cl

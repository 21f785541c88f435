// Any bytes as a .cls.pb: an error or a validated capture, never a crash. A capture that loads
// re-encodes to bytes that load into the same capture, and its .cls.json form loads too and writes
// back the same JSON. (Not the same capture: proto3 JSON drops unknown fields, writes a
// google.protobuf.Value's NaN/±Infinity as strings and drops a Value with no kind.)
#include <cstddef>
#include <cstdint>
#include <string>

#include "capture/capture_io.h"
#include "google/protobuf/stubs/logging.h"
#include "tests/fuzz/fuzz_check.h"

// protobuf logs every invalid-UTF-8 string it refuses; the refusal is the expected outcome.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto capture = cl::LoadCapture({reinterpret_cast<const char*>(data), size},
                                 cl::CaptureFormat::kBinary, "fuzz");
  if (!capture.ok()) return 0;

  std::string bytes;
  CL_FUZZ_CHECK(capture->SerializeToString(&bytes));
  auto reloaded = cl::LoadCapture(bytes, cl::CaptureFormat::kBinary, "fuzz");
  CL_FUZZ_CHECK(reloaded.ok());
  CL_FUZZ_CHECK(cl::fuzz::SameMessage(*capture, *reloaded));

  auto json = cl::CaptureToJson(*capture);
  CL_FUZZ_CHECK(json.ok());
  auto from_json = cl::LoadCapture(*json, cl::CaptureFormat::kJson, "fuzz");
  CL_FUZZ_CHECK(from_json.ok());
  auto json_again = cl::CaptureToJson(*from_json);
  CL_FUZZ_CHECK(json_again.ok() && *json_again == *json);
  return 0;
}

// Any bytes as a .cls.json: an error or a validated capture, never a crash. A capture that loads
// writes back as JSON that loads again into the same capture, and writing that one gives the same
// bytes (JSON → capture → JSON is stable after one trip).
#include <cstddef>
#include <cstdint>

#include "capture/capture_io.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto capture = cl::LoadCapture({reinterpret_cast<const char*>(data), size},
                                 cl::CaptureFormat::kJson, "fuzz");
  if (!capture.ok()) {
    CL_FUZZ_CHECK(!capture.status().message().empty());
    return 0;
  }
  auto json = cl::CaptureToJson(*capture);
  CL_FUZZ_CHECK(json.ok());
  auto again = cl::LoadCapture(*json, cl::CaptureFormat::kJson, "fuzz");
  CL_FUZZ_CHECK(again.ok());
  CL_FUZZ_CHECK(cl::fuzz::SameMessage(*capture, *again));
  auto json_again = cl::CaptureToJson(*again);
  CL_FUZZ_CHECK(json_again.ok() && *json_again == *json);
  return 0;
}

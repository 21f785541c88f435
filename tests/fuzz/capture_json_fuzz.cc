// Any bytes as a .cls.json: an error or a validated capture, never a crash.
#include <cstddef>
#include <cstdint>

#include "capture/capture_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto capture = cl::LoadCapture({reinterpret_cast<const char*>(data), size}, cl::CaptureFormat::kJson, "fuzz");
  if (capture.ok()) (void)cl::CaptureToJson(*capture);
  return 0;
}

// Any bytes as a .cls.pb: an error or a validated capture, never a crash.
#include <cstddef>
#include <cstdint>

#include "capture/capture_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)cl::LoadCapture({reinterpret_cast<const char*>(data), size}, cl::CaptureFormat::kBinary, "fuzz");
  return 0;
}

// Any bytes as a TORCH_TRACE log, fed in uneven chunks: counted diagnostics, never a crash, and the
// capture that comes out always validates.
#include <cstddef>
#include <cstdint>

#include "capture/torch_trace/importer.h"
#include "capture/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cl::TraceImporter importer;
  const char* bytes = reinterpret_cast<const char*>(data);
  size_t at = 0, chunk = 1;
  while (at < size) {
    const size_t n = chunk < size - at ? chunk : size - at;
    importer.Feed({bytes + at, n});
    at += n;
    chunk = chunk * 3 % 1021 + 1;
  }
  if (!cl::ValidateCapture(importer.Finish()).ok()) __builtin_trap();
  return 0;
}

// Any sequence of stream parts (the input split on a marker byte, each piece parsed as a
// CapturePart) through the assembler: errors, never a crash, and a bounded memory use.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "capture/stream/capture_assembler.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  cl::CaptureAssembler assembler(1 << 20);
  while (!in.empty()) {
    const size_t cut = in.find('\xfe');
    compile_lens::v1::CapturePart part;
    if (part.ParseFromArray(in.data(), static_cast<int>(std::min(cut, in.size())))) {
      if (!assembler.Add(std::move(part)).ok()) return 0;
    }
    if (cut == std::string_view::npos) break;
    in.remove_prefix(cut + 1);
  }
  compile_lens::v1::EndOfCapture end;
  end.set_parts(assembler.parts());
  (void)assembler.Finish(end);
  return 0;
}

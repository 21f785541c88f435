// Any bytes as a printed FX graph: counted problems, never a crash, and every node argument that
// names a node names one defined before it.
#include <cstddef>
#include <cstdint>

#include "capture/torch_trace/fx_graph.h"
#include "capture/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  compile_lens::v1::SessionCapture capture;
  capture.set_schema("0.5.0");
  compile_lens::v1::Graph* graph = capture.add_graphs();
  graph->set_id("g");
  cl::ParseFxGraphText({reinterpret_cast<const char*>(data), size}, graph);
  if (!cl::ValidateCapture(capture).ok()) __builtin_trap();
  return 0;
}

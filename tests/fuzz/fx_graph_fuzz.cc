// Any bytes as a printed FX graph: counted problems, never a crash. The graph that comes out
// validates (every node argument that names a node names one defined before it), the result counts
// the nodes it appended, problems are capped and never outnumber the skipped lines, and parsing is
// deterministic.
#include <cstddef>
#include <cstdint>

#include "capture/torch_trace/fx_graph.h"
#include "capture/validate.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace v1 = ::compile_lens::v1;

v1::SessionCapture Parse(absl::string_view text, cl::FxParseResult* result) {
  v1::SessionCapture capture;
  capture.set_schema("0.5.0");
  v1::Graph* graph = capture.add_graphs();
  graph->set_id("g");
  *result = cl::ParseFxGraphText(text, graph);
  return capture;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  cl::FxParseResult result;
  const v1::SessionCapture capture = Parse(text, &result);
  CL_FUZZ_CHECK_OK(cl::ValidateCapture(capture));
  CL_FUZZ_CHECK(result.nodes == static_cast<size_t>(capture.graphs(0).nodes_size()));
  CL_FUZZ_CHECK(result.problems.size() <= cl::kMaxFxProblems);
  CL_FUZZ_CHECK(result.problems.size() <= result.skipped_lines);
  cl::FxParseResult again;
  CL_FUZZ_CHECK(cl::fuzz::DeterministicBytes(Parse(text, &again)) ==
                cl::fuzz::DeterministicBytes(capture));
  CL_FUZZ_CHECK(again.skipped_lines == result.skipped_lines && again.problems == result.problems);
  return 0;
}

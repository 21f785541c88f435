// Any bytes as a TORCH_TRACE log through the importer (tokenizer + parser): counted diagnostics,
// never a crash. The capture that comes out always validates, and it does not depend on how the
// bytes were cut into chunks: uneven chunks give the same capture as one Feed. Its bytes parse back
// (a .cls.pb written from it loads): proto3 refuses a string field that is not valid UTF-8. The
// import an analysis makes (GraphNodes::kLoweredOnly) validates too, lists no record, and each
// graph it keeps nodes of has all the nodes the full import gives it; with a lowered sink, those
// graphs are handed over whole instead and the capture is otherwise the same.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "capture/torch_trace/fx_graph.h"
#include "capture/torch_trace/importer.h"
#include "capture/validate.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  cl::TraceImporter chunked;
  size_t at = 0, chunk = 1;
  while (at < size) {
    const size_t n = chunk < size - at ? chunk : size - at;
    chunked.Feed({bytes + at, n});
    at += n;
    chunk = chunk * 3 % 1021 + 1;
  }
  const compile_lens::v1::SessionCapture capture = chunked.Finish();
  CL_FUZZ_CHECK_OK(cl::ValidateCapture(capture));

  const std::string bytes_out = cl::fuzz::DeterministicBytes(capture);
  compile_lens::v1::SessionCapture back;
  CL_FUZZ_CHECK(back.ParseFromString(bytes_out));

  cl::TraceImporter whole;
  whole.Feed({bytes, size});
  CL_FUZZ_CHECK(cl::fuzz::DeterministicBytes(whole.Finish()) == bytes_out);

  cl::TraceParseOptions options;
  options.graph_nodes = cl::GraphNodes::kLoweredOnly;
  cl::TraceImporter lowered_importer(options);
  lowered_importer.Feed({bytes, size});
  const compile_lens::v1::SessionCapture lowered = lowered_importer.Finish();
  CL_FUZZ_CHECK_OK(cl::ValidateCapture(lowered));
  CL_FUZZ_CHECK(lowered.records_size() == 0);
  // A graph whose nodes it kept has the nodes the full import gives it, less the fields no pass
  // reads (FxDetail::kAnalysis; graphs it did not parse may be listed where the full import
  // dropped them, for a fault only a parse sees).
  std::map<std::string, const compile_lens::v1::Graph*> full;
  for (const compile_lens::v1::Graph& graph : capture.graphs()) full.emplace(graph.id(), &graph);
  for (const compile_lens::v1::Graph& graph : lowered.graphs()) {
    if (graph.nodes_size() == 0) continue;
    auto it = full.find(graph.id());
    CL_FUZZ_CHECK(it != full.end());
    compile_lens::v1::Graph expected = *it->second;
    cl::ClearBeyondAnalysisDetail(&expected);
    CL_FUZZ_CHECK(cl::fuzz::DeterministicBytes(graph) == cl::fuzz::DeterministicBytes(expected));
  }

  // With a lowered sink (what `analyze` of one log imports with), each graph the choice keeps is
  // handed over, nodes whole and valid, and the capture is the one above without their nodes.
  std::map<std::string, compile_lens::v1::Graph> sunk;
  options.lowered_sink = [&](const compile_lens::v1::Graph& graph,
                             const compile_lens::v1::Compile& compile) {
    CL_FUZZ_CHECK(graph.compile_id() == compile.id());
    CL_FUZZ_CHECK_OK(cl::ValidateGraphNodes(graph));
    sunk[graph.id()] = graph;
  };
  cl::TraceImporter sinking_importer(options);
  sinking_importer.Feed({bytes, size});
  compile_lens::v1::SessionCapture sinking = sinking_importer.Finish();
  CL_FUZZ_CHECK(sinking.graphs_size() == lowered.graphs_size());
  for (int i = 0; i < sinking.graphs_size(); ++i) {
    compile_lens::v1::Graph* graph = sinking.mutable_graphs(i);
    CL_FUZZ_CHECK(graph->nodes_size() == 0);
    const compile_lens::v1::Graph& kept = lowered.graphs(i);
    if (kept.nodes_size() == 0) continue;
    auto it = sunk.find(kept.id());
    CL_FUZZ_CHECK(it != sunk.end());
    CL_FUZZ_CHECK(cl::fuzz::DeterministicBytes(it->second) == cl::fuzz::DeterministicBytes(kept));
    *graph = it->second;
  }
  CL_FUZZ_CHECK(cl::fuzz::DeterministicBytes(sinking) == cl::fuzz::DeterministicBytes(lowered));
  return 0;
}

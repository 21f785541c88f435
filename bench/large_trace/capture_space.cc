// What the capture of one log keeps in memory, by part: imports LOG as `cl-client analyze` does
// (GraphNodes::kLoweredOnly, sources not read) and prints the SpaceUsedLong of each part, totals
// and per compile. The figures behind bench/README.md's "Scale"; a measurement, not a test.
//
// Usage: capture_space LOG
#include <cstdio>
#include <string>

#include "capture/torch_trace/importer.h"
#include "compile_lens/v1/capture.pb.h"

namespace {

namespace v1 = ::compile_lens::v1;

template <typename Repeated>
size_t SpaceOf(const Repeated& items) {
  size_t bytes = 0;
  for (const auto& item : items) bytes += item.SpaceUsedLong();
  return bytes;
}

void Row(const char* part, size_t bytes, int compiles) {
  std::printf("%-34s %10.2f MB %9.1f KB/compile\n", part, bytes / 1e6,
              compiles > 0 ? bytes / 1e3 / compiles : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: capture_space LOG\n");
    return 2;
  }
  cl::ImportOptions options;
  options.read_sources = false;
  options.graph_nodes = cl::GraphNodes::kLoweredOnly;
  absl::StatusOr<v1::SessionCapture> capture = cl::ImportTraceFile(argv[1], options);
  if (!capture.ok()) {
    std::fprintf(stderr, "capture_space: %s\n", capture.status().ToString().c_str());
    return 1;
  }
  const v1::SessionCapture& c = *capture;
  const int compiles = c.compiles_size();
  size_t graph_nodes = 0, graphs_with_nodes = 0, nodes = 0;
  for (const v1::Graph& g : c.graphs()) {
    if (g.nodes_size() == 0) continue;
    ++graphs_with_nodes;
    nodes += g.nodes_size();
    for (const v1::Node& n : g.nodes()) graph_nodes += n.SpaceUsedLong();
  }
  size_t cache_components = 0;
  for (const v1::Compile& compile : c.compiles()) {
    for (const v1::CacheEvent& e : compile.cache_events()) cache_components += e.SpaceUsedLong();
  }
  std::printf("%s: %d frames, %d compiles, %d graphs (%zu with their %zu nodes kept)\n", argv[1],
              c.frames_size(), compiles, c.graphs_size(), graphs_with_nodes, nodes);
  Row("whole capture", c.SpaceUsedLong(), compiles);
  Row("graphs' nodes", graph_nodes, compiles);
  Row("graphs, less their nodes", SpaceOf(c.graphs()) - graph_nodes, compiles);
  Row("compiles", SpaceOf(c.compiles()), compiles);
  Row("  of which cache events", cache_components, compiles);
  Row("kernels", SpaceOf(c.kernels()), compiles);
  Row("frames", SpaceOf(c.frames()), compiles);
  Row("extras (capped)", SpaceOf(c.extras()), compiles);
  Row("records", SpaceOf(c.records()), compiles);
  Row("diagnostics", SpaceOf(c.diagnostics()), compiles);
  return 0;
}

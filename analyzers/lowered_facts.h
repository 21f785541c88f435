// What the passes read of the nodes of a session's lowered post-grad graphs, kept per graph so
// that the nodes need not be.
//
// The fusion, roofline and compile-time passes read the nodes of the post-grad graphs Inductor
// lowered for each frame's first compile (LoweredGraphsPerFrame), one graph at a time, and then
// merge what they found over the graphs. An analysis of one log computes each graph's part as the
// import chooses the graph (ImportOptions::lowered_sink) and drops its nodes: what the session
// keeps per frame is then its matches and kernel estimates, not its nodes. The passes merge these
// exactly as they merge what they compute from nodes, so the report is the same either way
// (lowered_graph_nodes_test holds every fixture log to that).
#ifndef ANALYZERS_LOWERED_FACTS_H_
#define ANALYZERS_LOWERED_FACTS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "analyzers/compile_time/compile_time.h"
#include "analyzers/fusion/fusion.h"
#include "analyzers/pass.h"
#include "analyzers/roofline/op_cost.h"
#include "capture/torch_trace/trace_parser.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

struct LoweredGraphFacts {
  int nodes = 0;
  FusionGraphFacts fusion;
  // The roofline's estimate of each kernel (EstimateKernels).
  std::vector<KernelCost> kernels;
  // Compile time: the graph's one block of code repeated, if it is (FindRepeatedBlock).
  std::optional<RepeatedBlock> block;
};

// Thread-compatible: filled by the import, then read by passes running at once.
class LoweredFacts {
 public:
  // Computes and keeps the facts of `graph`, whose sizes are evaluated at `compile`'s size hints.
  // (The importer's graphs are valid, as ValidateCapture checks them: torch_trace_fuzz holds the
  // graphs it hands over to ValidateGraphNodes.) A graph added again replaces what it had.
  void Add(const v1::Graph& graph, const v1::Compile& compile);

  // The facts of the graph with id `graph_id`, or null when none were added.
  const LoweredGraphFacts* Find(absl::string_view graph_id) const {
    auto it = by_graph_.find(graph_id);
    return it == by_graph_.end() ? nullptr : &it->second;
  }

  // The nodes of every graph added (the analysis's size, for how many threads it is worth).
  int64_t nodes() const {
    int64_t n = 0;
    for (const auto& [id, facts] : by_graph_) n += facts.nodes;
    return n;
  }

  // Add, for ImportOptions::lowered_sink; `this` must outlive the import.
  LoweredSink Sink() {
    return [this](const v1::Graph& graph, const v1::Compile& compile) { Add(graph, compile); };
  }

 private:
  absl::flat_hash_map<std::string, LoweredGraphFacts> by_graph_;
};

// The facts kept for one of the head capture's graphs, or null: a pass then reads its nodes.
inline const LoweredGraphFacts* LoweredFactsOf(const PassInput& in, const v1::Graph& graph) {
  return in.head_lowered != nullptr ? in.head_lowered->Find(graph.id()) : nullptr;
}

}  // namespace cl

#endif  // ANALYZERS_LOWERED_FACTS_H_

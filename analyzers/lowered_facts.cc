#include "analyzers/lowered_facts.h"

#include <utility>

#include "analyzers/common/post_grad_graph.h"
#include "analyzers/common/size_hints.h"

namespace cl {

void LoweredFacts::Add(const v1::Graph& graph, const v1::Compile& compile) {
  const PostGradGraph view(graph, SizeHints(compile));
  LoweredGraphFacts facts;
  facts.nodes = graph.nodes_size();
  facts.fusion = ComputeFusionFacts(view);
  facts.kernels = EstimateKernels(view);
  facts.block = FindRepeatedBlock(graph);
  by_graph_[graph.id()] = std::move(facts);
}

}  // namespace cl

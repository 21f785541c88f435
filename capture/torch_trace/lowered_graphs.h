// Which post-grad graphs a session's fusion and roofline passes read, chosen one graph at a time
// as graphs are added, so that the importer can drop the nodes of every other graph as it goes
// (GraphNodes::kLoweredOnly) and LoweredGraphsPerFrame (analyzers/common/post_grad_graph.h) reads
// the same ones from a finished capture.
//
// The rule: per frame, the first compile (in the capture's order of compiles) that logged a
// post-grad graph other than a `before_` copy; of that compile's graphs, those Inductor lowered:
// every `inductor_post_grad_graph` (a training compile lowers two, the forward and then the
// backward, logged under one compile id), else every `after_post_grad_graph`, else every
// `after_recompile_post_grad`; a compile whose graph ids name none of those (ids not the
// TORCH_TRACE importer's `<compile id>/<event>[#n]`) gives its last graph. Recompiles of a frame
// compile the same code again (for other shapes), so reading them all would count every block once
// per recompile; a `before_` copy is the graph before the passes ran, not the one Inductor lowered.
//
// What the choice keeps is the one thing about the nodes that grows with a long log: per frame,
// the nodes of one compile's lowered graphs, whatever number of times the frame recompiles.
#ifndef CAPTURE_TORCH_TRACE_LOWERED_GRAPHS_H_
#define CAPTURE_TORCH_TRACE_LOWERED_GRAPHS_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace cl {

// A post-grad graph's place in its session: which frame, which compile (its index among the
// capture's compiles), its index among the capture's graphs, and the torch event that logged it
// ("inductor_post_grad_graph"; empty when the graph's id does not name one).
struct PostGradGraphRef {
  uint32_t frame_id = 0;
  int compile_index = 0;
  int graph_index = 0;
  absl::string_view event;
};

// A `before_` copy (before_post_grad_graph, before_recompile_post_grad): logged before a stage's
// passes ran.
bool IsBeforeEvent(absl::string_view event);

class LoweredGraphChoice {
 public:
  // Considers one more post-grad graph (graphs are added in the capture's order). Appends to
  // `unread` the graphs that are not, or are no longer, among those read: `graph` itself, or those
  // chosen before it that it displaces (a better event of the same compile, an earlier compile
  // of the same frame).
  void Add(const PostGradGraphRef& graph, std::vector<int>* unread);

  // Whether Add would read `graph` now: false for a graph it would add to `unread` at once (a
  // before_ copy, a recompile's, an event the compile has a better one than), whose nodes need
  // not be parsed at all.
  bool WouldRead(const PostGradGraphRef& graph) const;

  // The graphs read, by compile index and then graph index (the capture's order).
  std::vector<int> Chosen() const;

 private:
  struct Frame {
    int compile_index = 0;
    int event_rank = 0;       // LoweredEventRank of the graphs kept
    std::vector<int> graphs;  // graph indices, in the order added
  };
  absl::flat_hash_map<uint32_t, Frame> frames_;
};

}  // namespace cl

#endif  // CAPTURE_TORCH_TRACE_LOWERED_GRAPHS_H_

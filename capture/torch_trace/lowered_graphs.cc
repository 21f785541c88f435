#include "capture/torch_trace/lowered_graphs.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"

namespace cl {
namespace {

// The events Inductor logs the graph it lowered as, preferred first (newer torch logs the
// inductor_ one and an after_ copy of it); any other event ranks last, and of those only a
// compile's last graph is read.
constexpr absl::string_view kLowered[] = {"inductor_post_grad_graph", "after_post_grad_graph",
                                          "after_recompile_post_grad"};
constexpr int kOtherEvent = sizeof(kLowered) / sizeof(kLowered[0]);

int LoweredEventRank(absl::string_view event) {
  for (int rank = 0; rank < kOtherEvent; ++rank) {
    if (event == kLowered[rank]) return rank;
  }
  return kOtherEvent;
}

}  // namespace

bool IsBeforeEvent(absl::string_view event) { return absl::StartsWith(event, "before_"); }

void LoweredGraphChoice::Add(const PostGradGraphRef& graph, std::vector<int>* unread) {
  if (!WouldRead(graph)) {
    unread->push_back(graph.graph_index);
    return;
  }
  const int rank = LoweredEventRank(graph.event);
  auto [it, first] = frames_.try_emplace(graph.frame_id);
  Frame& frame = it->second;
  // The frame's first graph, an earlier compile of it, a better event of its compile, or, of
  // events torch does not lower under, the later graph: what was read before is not any more.
  if (first || graph.compile_index < frame.compile_index || rank < frame.event_rank ||
      rank == kOtherEvent) {
    unread->insert(unread->end(), frame.graphs.begin(), frame.graphs.end());
    frame.graphs.clear();
    frame.compile_index = graph.compile_index;
    frame.event_rank = rank;
  }
  frame.graphs.push_back(graph.graph_index);
}

bool LoweredGraphChoice::WouldRead(const PostGradGraphRef& graph) const {
  if (IsBeforeEvent(graph.event)) return false;
  auto it = frames_.find(graph.frame_id);
  if (it == frames_.end()) return true;
  const Frame& frame = it->second;
  return graph.compile_index < frame.compile_index ||
         (graph.compile_index == frame.compile_index &&
          LoweredEventRank(graph.event) <= frame.event_rank);
}

std::vector<int> LoweredGraphChoice::Chosen() const {
  std::vector<std::pair<int, int>> chosen;  // (compile index, graph index)
  for (const auto& [id, frame] : frames_) {
    for (int graph : frame.graphs) chosen.emplace_back(frame.compile_index, graph);
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<int> out;
  out.reserve(chosen.size());
  for (const auto& [compile, graph] : chosen) out.push_back(graph);
  return out;
}

}  // namespace cl

// GraphIndex: one compiled FX graph (a v1::Graph) with its edges resolved, for graph analyses.
//
// A v1::Graph names a node's operands by node name, inside args, nested lists and kwargs. Matching
// and comparing graphs needs the edges both ways in constant time, so the index resolves the names
// once: a node's operands are node indices in argument order (args first, lists flattened, then
// kwargs by key), its users the distinct nodes that take it as an operand. It also fingerprints,
// once per node, the facts that the anchors and the similarity measure compare (NodeFacts).
//
// Source files are fingerprinted relative to the capture's project root, so that a base and a
// head traced in different checkouts agree on where a node came from. The index points into the
// graph, which must outlive it. Building it is linear in the size of the graph.
#ifndef ANALYZERS_IR_DIFF_INDEX_H_
#define ANALYZERS_IR_DIFF_INDEX_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

enum class NodeKind : uint8_t { kPlaceholder, kOutput, kOther };

// Fingerprints (analyzers/ir_diff/fingerprint.h) of what a node is and where it came from.
struct NodeFacts {
  NodeKind kind = NodeKind::kOther;
  uint64_t target = 0;      // op and target: "call_function aten.sub.Tensor"
  uint64_t site = 0;        // source file (relative to the project root) and function; 0: no source
  uint32_t line = 0;        // source line; 0: none
  uint64_t module = 0;      // the module path (module_stack)
  uint64_t literals = 0;    // the literal arguments with their positions (operands left out)
  uint64_t meta = 0;        // dtype, shape, stride, device
  bool unresolved = false;  // an operand names no node of the graph
};

// How many of the graph's inputs AOTAutograd named by position ("arg3_1", "primals_2").
int PositionalInputCount(const v1::Graph& graph);

class GraphIndex {
 public:
  // `inputs_by_content`: an input named by position (arg3_1, primals_2) is known by what it holds
  // (dtype, shape) rather than by its name. Right when the two graphs compared take a different
  // number of such inputs: dropping one (a Linear's bias) renames every later one.
  GraphIndex(const v1::Graph& graph, absl::string_view project_root,
             bool inputs_by_content = false);

  GraphIndex(const GraphIndex&) = delete;
  GraphIndex& operator=(const GraphIndex&) = delete;

  int size() const { return static_cast<int>(facts_.size()); }
  const v1::Graph& graph() const { return *graph_; }
  const v1::Node& node(int i) const { return graph_->nodes(i); }
  const NodeFacts& facts(int i) const { return facts_[i]; }

  // The node called `name`, or -1. With duplicate names (a malformed graph) the first one.
  int Find(absl::string_view name) const;

  // Operand node indices in argument order; a node used twice appears twice.
  absl::Span<const int32_t> inputs(int i) const {
    return absl::MakeConstSpan(inputs_.data() + input_start_[i],
                               input_start_[i + 1] - input_start_[i]);
  }
  // The distinct nodes that take node i as an operand, in graph order.
  absl::Span<const int32_t> users(int i) const {
    return absl::MakeConstSpan(users_.data() + user_start_[i], user_start_[i + 1] - user_start_[i]);
  }

  // Operand names that named no node of the graph (left out of the edges).
  int unresolved_operands() const { return unresolved_operands_; }

 private:
  const v1::Graph* graph_;
  std::vector<NodeFacts> facts_;
  absl::flat_hash_map<absl::string_view, int32_t> by_name_;
  // Compressed rows: node i's operands are inputs_[input_start_[i], input_start_[i + 1]).
  std::vector<int32_t> input_start_;
  std::vector<int32_t> inputs_;
  std::vector<int32_t> user_start_;
  std::vector<int32_t> users_;
  int unresolved_operands_ = 0;
};

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_INDEX_H_

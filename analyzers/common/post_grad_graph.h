// A read-only view of one post-grad FX graph for the fusion and roofline passes: nodes by name,
// their users, and the tensor facts (element count, element size) the byte models need.
//
// Which graphs a pass reads: per frame, the lowered post-grad graphs of its first compile that
// lowered one (LoweredGraphChoice in capture/torch_trace/lowered_graphs.h, the rule the importer
// keeps nodes by): the forward and the backward of a training compile, never a `before_` copy,
// never a recompile's (the same code again, for other shapes).
#ifndef ANALYZERS_COMMON_POST_GRAD_GRAPH_H_
#define ANALYZERS_COMMON_POST_GRAD_GRAPH_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "analyzers/common/size_hints.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// Bytes per element of a torch dtype spelling ("f32" 4, "bf16" 2, "f8e4m3fn" 1); 0 when unknown.
int DtypeBytes(absl::string_view dtype);

class PostGradGraph {
 public:
  // `hints` evaluates the graph's symbolic sizes (SizeHints::ForCompile of its compile).
  explicit PostGradGraph(const v1::Graph& graph, SizeHints hints = {});

  const v1::Graph& graph() const { return graph_; }
  const v1::Node* Find(absl::string_view name) const;
  // The node argument `i` names (null: a literal, a list, or out of range).
  const v1::Node* Input(const v1::Node& node, int i) const;
  // Every node that names `node` among its arguments (lists included), in graph order.
  const std::vector<const v1::Node*>& Users(const v1::Node& node) const;
  // The users of `node` seen through views: a view-like user (IsViewLike) that `look_through`
  // accepts is not itself in the answer, its users are, as `node`'s, recursively; every other user
  // is, each once, in the order the walk meets them. Fusion looks through every view (the first
  // overload); the roofline's pointwise runs only through the views inside a run, so that a view
  // outside it is a reader outside it. A view may name several nodes (a list argument), so in an
  // untrusted capture views can reach one node along exponentially many paths: the walk visits
  // each node once.
  std::vector<const v1::Node*> UsersThroughViews(const v1::Node& node) const;
  std::vector<const v1::Node*> UsersThroughViews(
      const v1::Node& node, absl::FunctionRef<bool(const v1::Node& view)> look_through) const;
  // Skips view-like nodes (view, reshape, permute, expand, clone, ...) upwards: the node whose
  // data `node` shows.
  const v1::Node* SkipViewsUp(const v1::Node* node) const;

  // The element count, and dimension `i` (negative counts from the end), of `node`'s output, a
  // symbolic size ("s0", "16*s0") at its hint; nullopt when a size has no hint (an unbacked
  // symbol, a log without create_symbol records), is negative, or is absent.
  std::optional<uint64_t> Numel(const v1::Node& node) const;
  std::optional<uint64_t> Dim(const v1::Node& node, int i) const;
  // "s0 = 4": the symbols the output shapes of `nodes` read, at their hints; empty when every
  // size is a number. A figure computed from those shapes says it is evaluated there.
  std::string SizeHintsOf(absl::Span<const v1::Node* const> nodes) const;
  // The same for `nodes` and the nodes each takes as arguments: what an op's figure reads.
  std::string SizeHintsWithOperands(absl::Span<const v1::Node* const> nodes) const;

 private:
  const v1::Graph& graph_;
  const SizeHints hints_;
  absl::flat_hash_map<absl::string_view, const v1::Node*> by_name_;
  absl::flat_hash_map<const v1::Node*, std::vector<const v1::Node*>> users_;
};

// True when `node` calls one of `targets` ("aten.mm.default"; an entry without an overload, like
// "aten.mm", matches every overload).
bool IsCall(const v1::Node& node, std::initializer_list<absl::string_view> targets);

// mm, addmm, bmm, baddbmm: the GEMMs whose epilogues the fusion patterns target.
bool IsGemm(const v1::Node& node);

// View-like ops: no data movement of their own in Inductor's kernels.
bool IsViewLike(const v1::Node& node);

// The torch event a graph's id names: "inductor_post_grad_graph" for
// "0/0/inductor_post_grad_graph#2"; empty when the id is not the importer's
// "<compile id>/<event>[#n]".
absl::string_view GraphEvent(const v1::Graph& graph);
// A graph torch logged before a stage's passes ran (before_post_grad_graph, ...): not the one
// Inductor lowered.
bool IsBeforeCopy(const v1::Graph& graph);

// The graphs the passes read, in capture order (see the file comment).
std::vector<const v1::Graph*> LoweredGraphsPerFrame(const v1::SessionCapture& capture);

// Why LoweredGraphsPerFrame found nothing, for a skipped section: no post-grad graph at all, or
// only the copies torch logged before its passes ran (a log of before_post_grad_graph alone).
std::string NoLoweredGraphReason(const v1::SessionCapture& capture);

}  // namespace cl

#endif  // ANALYZERS_COMMON_POST_GRAD_GRAPH_H_

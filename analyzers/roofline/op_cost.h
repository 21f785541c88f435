// Analytic flops and bytes of the kernels a post-grad graph becomes, for the roofline when the
// capture's kernels carry no measured features (docs/torch-semantics.md §7.3).
//
//   mm [M,K]x[K,N]        2·M·N·K            (M·K + K·N + M·N)·s
//   addmm (C, A, B)       2·M·N·K            + numel(C)·s
//   bmm [B,M,K]x[B,K,N]   2·B·M·N·K          B·(M·K + K·N + M·N)·s
//   baddbmm               as bmm             + numel(input)·s
//   convolution           2·numel(y)·(Cin/g)·kh·kw = 2·numel(y)·numel(w)/Cout
//                                            (numel(x) + numel(w) + numel(y) [+ bias])·s
//     transposed (arg 6)  2·numel(x)·(Cout/g)·kh·kw = 2·numel(x)·numel(w)/Cin   (w is
//                         [Cin, Cout/g, kh, kw])               bytes as above
//   convolution_backward  the forward's flops for grad_input and for grad_weight, each when
//                         output_mask asks for it   (dy + per gradient x + w [+ Cout])·s
//   SDPA Q[b,h,Sq,d] K[..,Sk,d] V[..,Sk,dv]
//                         2·b·h·Sq·Sk·(d + dv)   (Q + K + V + O)·s + b·h·Sq·4 (logsumexp)
//   SDPA backward         2·b·h·Sq·Sk·(3d + 2dv) (2·(Q + K + V) + 2·O)·s + b·h·Sq·4
//   other library calls (_scaled_mm, flex_attention, _flash_attention_*, cudnn_convolution, …):
//   no formula here, so their cost is unknown; they are never pointwise work.
//   higher-order ops (cond, while_loop, invoke_subgraph, …) and custom ops (mylib.op.default):
//   Inductor runs them as they are, never inside a fused run; their cost is unknown here.
//   pointwise / reductions: Inductor fuses the nodes between two library calls into Triton
//   kernels; they are estimated as one kernel per such run, 1 FLOP per output element, bytes =
//   every tensor read from outside the run + every result used outside it, each once.
// Flop counts follow torch.utils.flop_counter (one FMA = 2 FLOPs; no causal discount), except
// that grad_weight of a grouped convolution is counted once, not `groups` times.
#ifndef ANALYZERS_ROOFLINE_OP_COST_H_
#define ANALYZERS_ROOFLINE_OP_COST_H_

#include <optional>
#include <string>
#include <vector>

#include "analyzers/common/post_grad_graph.h"

namespace cl {

struct KernelCost {
  std::string name;     // the node ("mm_1"), or "fused: pow_1 … mul_1" for a pointwise run
  std::string op;       // "aten.mm.default"; "pointwise" for a run
  std::string dtype;    // the output's torch dtype
  bool matmul = false;  // runs on tensor cores (mm, bmm, conv, sdpa)
  // False for a library call whose cost is unknown (a size with no hint, or no formula here):
  // flops and bytes are 0, not an estimate.
  bool cost_known = true;
  double flops = 0;
  double bytes = 0;
  // "s0 = 4": the size hints the symbolic sizes behind flops and bytes were evaluated at.
  std::string size_hints;
};

// A library op (a GEMM, a convolution or attention, forward or backward; see the table): its own
// kernel on tensor cores, outside Inductor's fused pointwise runs, whether or not it has a cost.
bool IsLibraryCall(const v1::Node& node);

// The dtype a library op computes in: its output's; SDPA's query's, and the first input's when
// the output records none.
std::string LibraryCallDtype(const PostGradGraph& graph, const v1::Node& node);

// The cost of a library op; nullopt for other ops, for a size with no value (not even a hint) and
// for library ops with no formula here.
std::optional<KernelCost> LibraryOpCost(const PostGradGraph& graph, const v1::Node& node);

// Every kernel of `graph`: each library op, and each run of pointwise / reduction nodes between
// them, in graph order. A library op whose cost is unknown, a higher-order op and a custom op
// still end the run and are listed, with cost_known false.
std::vector<KernelCost> EstimateKernels(const PostGradGraph& graph);

}  // namespace cl

#endif  // ANALYZERS_ROOFLINE_OP_COST_H_

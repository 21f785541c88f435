#include "analyzers/roofline/op_cost.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cl {
namespace {

double NumelOf(const PostGradGraph& g, const v1::Node* node) {
  if (node == nullptr) return 0;
  return static_cast<double>(g.Numel(*node).value_or(0));
}

double SizeOf(const v1::Node* node) {
  return node == nullptr ? 0 : static_cast<double>(DtypeBytes(node->meta().dtype()));
}

bool IsSdpa(const v1::Node& node) {
  return IsCall(
      node,
      {"aten._scaled_dot_product_flash_attention", "aten._scaled_dot_product_efficient_attention",
       "aten._scaled_dot_product_cudnn_attention",
       "aten._scaled_dot_product_flash_attention_for_cpu", "aten.scaled_dot_product_attention"});
}

// (grad_out, query, key, value, ...) in each of them.
bool IsSdpaBackward(const v1::Node& node) {
  return IsCall(node, {"aten._scaled_dot_product_flash_attention_backward",
                       "aten._scaled_dot_product_efficient_attention_backward",
                       "aten._scaled_dot_product_cudnn_attention_backward",
                       "aten._scaled_dot_product_flash_attention_for_cpu_backward"});
}

bool IsConvolution(const v1::Node& node) {
  return IsCall(node, {"aten.convolution", "aten._convolution"});
}

// Library kernels with no formula here (another layout, scales, a score_mod): their cost is
// unknown, but they are never pointwise work.
bool IsUncostedLibraryCall(const v1::Node& node) {
  return IsCall(node, {"aten._scaled_mm", "aten._int_mm", "aten.cudnn_convolution",
                       "aten.cudnn_convolution_transpose", "aten.mkldnn_convolution",
                       "aten._flash_attention_forward", "aten._flash_attention_backward",
                       "aten._efficient_attention_forward", "aten._efficient_attention_backward",
                       "aten._scaled_dot_product_fused_attention_overrideable",
                       "aten._scaled_dot_product_fused_attention_overrideable_backward",
                       "higher_order.flex_attention", "higher_order.flex_attention_backward"});
}

// An aten op Inductor does not lower but calls as it is, a kernel of its own (torch 2.6's
// unconditional `make_fallback`s in torch/_inductor/lowering.py): FFTs, linear algebra, sorting and
// selection, histograms, distances, embedding bags, 3-D and fractional pooling, the backward of
// adaptive pooling, upsampling, padding and grid sampling, random fills, complex views. `op` is the
// name between "aten." and the overload. Not the ops it falls back on only for some arguments (2-D
// pooling with large windows, `_adaptive_avg_pool2d` with large kernels).
bool IsInductorFallback(absl::string_view op) {
  for (absl::string_view family :
       {"_fft_", "_linalg_", "linalg_", "_embedding_bag", "_cdist_", "_pdist_", "_histogramdd_",
        "_cudnn_rnn", "fractional_max_pool", "max_pool3d_with_indices", "adaptive_max_pool",
        "_adaptive_avg_pool3d", "_fused_moving_avg_obs_fq_helper", "replication_pad",
        "segment_reduce", "_segment_reduce", "masked_scatter", "to_sparse", "_to_sparse"}) {
    if (absl::StartsWith(op, family)) return true;
  }
  // Every aten node of every graph asks: a hash lookup, not a scan of the list.
  static const auto* const kOps =
      new absl::flat_hash_set<absl::string_view>{"_adaptive_avg_pool2d_backward",
                                                 "_addmm_activation",
                                                 "_efficientzerotensor",
                                                 "_sparse_coo_tensor_with_dims_and_tensors",
                                                 "_thnn_fused_lstm_cell",
                                                 "_trilinear",
                                                 "_unique2",
                                                 "addbmm",
                                                 "angle",
                                                 "cholesky_inverse",
                                                 "cholesky_solve",
                                                 "exponential",
                                                 "gcd",
                                                 "geqrf",
                                                 "grid_sampler_2d_backward",
                                                 "histc",
                                                 "histogram",
                                                 "index_reduce",
                                                 "kthvalue",
                                                 "lu_unpack",
                                                 "median",
                                                 "mode",
                                                 "nanmedian",
                                                 "nonzero",
                                                 "ormqr",
                                                 "randint",
                                                 "randperm",
                                                 "resize_",
                                                 "resize_as_",
                                                 "soft_margin_loss_backward",
                                                 "sort",
                                                 "topk",
                                                 "triangular_solve",
                                                 "uniform",
                                                 "unique_consecutive",
                                                 "unique_dim",
                                                 "upsample_bicubic2d_backward",
                                                 "upsample_linear1d_backward",
                                                 "upsample_trilinear3d_backward"};
  return kOps->contains(op);
}

// Torch's spelling of a complex dtype: "c32", "c64", "c128".
bool IsComplex(absl::string_view dtype) {
  return dtype.size() > 1 && dtype[0] == 'c' && absl::ascii_isdigit(dtype[1]);
}

// Inductor generates no code for complex tensors (torch 2.6, `fallback_node_due_to_unsupported_
// type`): an op that reads or writes one runs as aten's kernel. Views are left to the run, kernels
// of no work either way (`view_as_complex` Inductor lowers as a view; `view_as_real` it calls).
bool TouchesComplex(const PostGradGraph& g, const v1::Node& node) {
  if (IsViewLike(node)) return false;
  if (IsComplex(node.meta().dtype())) return true;
  for (int i = 0; i < node.args_size(); ++i) {
    const v1::Node* input = g.Input(node, i);
    if (input != nullptr && IsComplex(input->meta().dtype())) return true;
  }
  return false;
}

// A call Inductor runs as it is, outside its fused kernels, with no formula here: a higher-order op
// (`cond`, `while_loop`, `invoke_subgraph`, `auto_functionalized`: what it calls runs as kernels of
// its own), an op of a library of the user's (`mylib.op.default`, torch.library.custom_op), or an
// aten op Inductor falls back on (`aten._fft_r2c.default`, `aten._linalg_eigh.default`).
bool IsOpaqueCall(const PostGradGraph& g, const v1::Node& node) {
  if (node.op() != "call_function") return false;
  const absl::string_view target = node.target();
  if (absl::StartsWith(target, "higher_order.")) return true;
  // "namespace.op.overload"; "operator.mul", "torch._C._foo.bar" are not ops. Every node of every
  // graph comes here: no allocation.
  if (std::count(target.begin(), target.end(), '.') != 2) return false;
  const absl::string_view ns = target.substr(0, target.find('.'));
  if (ns == "aten") {
    const absl::string_view rest = target.substr(ns.size() + 1);
    const absl::string_view op = rest.substr(0, rest.find('.'));
    return IsInductorFallback(op) || TouchesComplex(g, node);
  }
  // Inductor lowers these itself; quantized_decomposed is PT2E quantization's (de)quantize.
  for (absl::string_view inductor_lowers :
       {"aten", "prims", "inductor", "torch", "_operator", "quantized_decomposed"}) {
    if (ns == inductor_lowers) return false;
  }
  return true;
}

// GEMM flops from the activation [.., M, K] and the output [.., M, N]: 2·numel(out)·K.
std::optional<KernelCost> Gemm(const PostGradGraph& g, const v1::Node& node, int a_index,
                               int b_index, int bias_index) {
  const v1::Node* a = g.Input(node, a_index);
  const v1::Node* b = g.Input(node, b_index);
  const uint64_t k = a == nullptr ? 0 : g.Dim(*a, -1).value_or(0);
  const double out = NumelOf(g, &node);
  const double s = SizeOf(&node);
  if (k == 0 || out == 0 || s == 0 || NumelOf(g, a) == 0 || NumelOf(g, b) == 0) return std::nullopt;
  KernelCost cost;
  cost.flops = 2 * out * static_cast<double>(k);
  cost.bytes = (NumelOf(g, a) + NumelOf(g, b) + out) * s;
  if (bias_index >= 0) cost.bytes += NumelOf(g, g.Input(node, bias_index)) * s;
  return cost;
}

// Argument `i`, or the keyword argument `name`, is the literal True.
bool FlagArg(const v1::Node& node, int i, absl::string_view name) {
  const v1::Arg* arg = nullptr;
  if (node.args_size() > i) {
    arg = &node.args(i);
  } else if (auto it = node.kwargs().find(std::string(name)); it != node.kwargs().end()) {
    arg = &it->second;
  }
  return arg != nullptr && arg->kind_case() == v1::Arg::kLiteral && arg->literal() == "True";
}

// The forward convolution's flops, from its input x, weight w and output y: each point of the
// output (of the input, when transposed) meets the whole filter of one group, 2·numel(y)·numel(w)
// /w[0] with w[0] = Cout; transposed, the weight is [Cin, Cout/g, kh, kw] and it is
// 2·numel(x)·numel(w)/w[0], as torch.utils.flop_counter counts it. 0 when a size is unknown.
double ConvolutionFlops(const PostGradGraph& g, const v1::Node* x, const v1::Node* w, double y,
                        bool transposed) {
  const uint64_t w0 = w == nullptr ? 0 : g.Dim(*w, 0).value_or(0);
  if (w0 == 0) return 0;
  return 2 * (transposed ? NumelOf(g, x) : y) * NumelOf(g, w) / static_cast<double>(w0);
}

// aten.convolution(input, weight, bias, stride, padding, dilation, transposed, ...).
std::optional<KernelCost> Convolution(const PostGradGraph& g, const v1::Node& node) {
  const v1::Node* x = g.Input(node, 0);
  const v1::Node* w = g.Input(node, 1);
  const double y = NumelOf(g, &node);
  const double s = SizeOf(&node);
  KernelCost cost;
  cost.flops = ConvolutionFlops(g, x, w, y, FlagArg(node, 6, "transposed"));
  if (cost.flops == 0 || y == 0 || s == 0 || NumelOf(g, x) == 0) return std::nullopt;
  cost.bytes = (NumelOf(g, x) + NumelOf(g, w) + y + NumelOf(g, g.Input(node, 2))) * s;
  return cost;
}

// aten.convolution_backward(grad_out, input, weight, bias_sizes, stride, padding, dilation,
// transposed, output_padding, groups, output_mask). grad_input and grad_weight, each when the
// mask asks for it, cost the forward's flops (flop_counter's conv_backward_flop; for a grouped
// convolution it counts grad_weight `groups` times over, this does not); grad_bias is a
// reduction it counts as 0. Bytes: dy read once; grad_input reads w and writes dx, grad_weight
// reads x and writes dw, grad_bias writes Cout.
std::optional<KernelCost> ConvolutionBackward(const PostGradGraph& g, const v1::Node& node) {
  const v1::Node* dy = g.Input(node, 0);
  const v1::Node* x = g.Input(node, 1);
  const v1::Node* w = g.Input(node, 2);
  if (node.args_size() <= 10 || node.args(10).kind_case() != v1::Arg::kList) return std::nullopt;
  bool mask[3] = {false, false, false};
  const auto& items = node.args(10).list().items();
  for (int i = 0; i < std::min(items.size(), 3); ++i) {
    mask[i] = items[i].kind_case() == v1::Arg::kLiteral && items[i].literal() == "True";
  }
  const double forward = ConvolutionFlops(g, x, w, NumelOf(g, dy), FlagArg(node, 7, "transposed"));
  const double s = SizeOf(dy);
  const uint64_t cout = dy == nullptr ? 0 : g.Dim(*dy, 1).value_or(0);
  if (forward == 0 || s == 0 || NumelOf(g, x) == 0 || cout == 0) return std::nullopt;
  if (!mask[0] && !mask[1] && !mask[2]) return std::nullopt;
  KernelCost cost;
  cost.flops = forward * (static_cast<int>(mask[0]) + static_cast<int>(mask[1]));
  const double per_gradient = NumelOf(g, x) + NumelOf(g, w);
  cost.bytes = (NumelOf(g, dy) + (mask[0] ? per_gradient : 0) + (mask[1] ? per_gradient : 0) +
                (mask[2] ? static_cast<double>(cout) : 0)) *
               s;
  return cost;
}

// Attention over Q [b,h,Sq,d], K [..,Sk,d], V [..,Sk,dv]: its sizes, Q's element size, and
// the bytes of Q, K and V.
struct Attention {
  double rows = 0;  // b·h·Sq
  double sk = 0, d = 0, dv = 0, s = 0;
  double qkv_bytes = 0;
};

std::optional<Attention> AttentionOf(const PostGradGraph& g, const v1::Node* q, const v1::Node* k,
                                     const v1::Node* v) {
  if (q == nullptr || k == nullptr || v == nullptr || q->meta().shape_size() != 4) {
    return std::nullopt;
  }
  const auto dim = [&g](const v1::Node* n, int i) {
    return static_cast<double>(g.Dim(*n, i).value_or(0));
  };
  Attention a;
  a.rows = dim(q, 0) * dim(q, 1) * dim(q, 2);
  a.d = dim(q, 3);
  a.sk = dim(k, -2);
  a.dv = dim(v, -1);
  a.s = SizeOf(q);
  if (a.rows * a.d * a.sk * a.dv == 0 || a.s == 0) return std::nullopt;
  a.qkv_bytes = (NumelOf(g, q) + NumelOf(g, k) + NumelOf(g, v)) * a.s;
  return a;
}

// SDPA(query, key, value, ...).
std::optional<KernelCost> Sdpa(const PostGradGraph& g, const v1::Node& node) {
  const std::optional<Attention> a =
      AttentionOf(g, g.Input(node, 0), g.Input(node, 1), g.Input(node, 2));
  if (!a) return std::nullopt;
  KernelCost cost;
  cost.flops = 2 * a->rows * a->sk * (a->d + a->dv);
  const double out = a->rows * a->dv;
  cost.bytes = a->qkv_bytes + out * a->s + a->rows * 4;
  return cost;
}

// SDPA backward(grad_out, query, key, value, ...): flop_counter's sdpa_backward_flop_count, the
// scores again and then dV, dP, dQ and dK, five bmms: 2·b·h·Sq·Sk·(3·d + 2·dv). Reads dO, Q, K,
// V, O and the logsumexp; writes dQ, dK and dV.
std::optional<KernelCost> SdpaBackward(const PostGradGraph& g, const v1::Node& node) {
  const std::optional<Attention> a =
      AttentionOf(g, g.Input(node, 1), g.Input(node, 2), g.Input(node, 3));
  if (!a) return std::nullopt;
  KernelCost cost;
  cost.flops = 2 * a->rows * a->sk * (3 * a->d + 2 * a->dv);
  const double out = a->rows * a->dv;
  cost.bytes = 2 * a->qkv_bytes + 2 * out * a->s + a->rows * 4;
  return cost;
}

}  // namespace

bool IsLibraryCall(const v1::Node& node) {
  return IsGemm(node) || IsConvolution(node) || IsCall(node, {"aten.convolution_backward"}) ||
         IsSdpa(node) || IsSdpaBackward(node) || IsUncostedLibraryCall(node);
}

std::string LibraryCallDtype(const PostGradGraph& g, const v1::Node& node) {
  if (!IsSdpa(node) && !node.meta().dtype().empty()) return node.meta().dtype();
  const v1::Node* first = g.Input(node, 0);
  return first == nullptr ? "" : first->meta().dtype();
}

namespace {

// What every library call's kernel is, costed or not: the node's name and op, its dtype, a
// tensor-core (matmul) kernel.
void NameLibraryKernel(const PostGradGraph& g, const v1::Node& node, KernelCost* cost) {
  cost->name = node.name();
  cost->op = node.target();
  cost->dtype = LibraryCallDtype(g, node);
  cost->matmul = true;
}

}  // namespace

std::optional<KernelCost> LibraryOpCost(const PostGradGraph& g, const v1::Node& node) {
  std::optional<KernelCost> cost;
  if (IsCall(node, {"aten.mm", "aten.bmm"})) cost = Gemm(g, node, 0, 1, -1);
  if (IsCall(node, {"aten.addmm", "aten.baddbmm"})) cost = Gemm(g, node, 1, 2, 0);
  if (IsConvolution(node)) cost = Convolution(g, node);
  if (IsCall(node, {"aten.convolution_backward"})) cost = ConvolutionBackward(g, node);
  if (IsSdpa(node)) cost = Sdpa(g, node);
  if (IsSdpaBackward(node)) cost = SdpaBackward(g, node);
  if (!cost) return std::nullopt;
  NameLibraryKernel(g, node, &*cost);
  cost->size_hints = g.SizeHintsWithOperands({&node});
  return cost;
}

namespace {

// One run of pointwise / reduction nodes between library calls, as one fused kernel.
class PointwiseRun {
 public:
  void Add(const v1::Node& node) {
    nodes_.push_back(&node);
    members_.insert(&node);
  }

  // The run's kernel, or nullopt when it did no work (views only).
  std::optional<KernelCost> Cost(const PostGradGraph& g) const {
    KernelCost cost;
    absl::flat_hash_set<const v1::Node*> read;
    std::vector<const v1::Node*> work;
    for (const v1::Node* node : nodes_) {
      if (IsViewLike(*node)) continue;  // views move nothing; their readers count the data
      // Size arithmetic (`mul_16: "Sym(16*s0)" = arg1_1 * 16`) runs on the host, in no kernel.
      if (node->meta().dtype() == "Sym") continue;
      work.push_back(node);
      for (int i = 0; i < node->args_size(); ++i) {
        const v1::Node* input = g.Input(*node, i);
        while (input != nullptr && members_.contains(input) && IsViewLike(*input)) {
          input = g.Input(*input, 0);
        }
        if (input != nullptr && !members_.contains(input) && read.insert(input).second) {
          cost.bytes += NumelOf(g, input) * SizeOf(input);
        }
      }
      if (UsedOutside(g, *node)) cost.bytes += NumelOf(g, node) * SizeOf(node);
    }
    if (work.empty()) return std::nullopt;
    for (const v1::Node* node : work) cost.flops += NumelOf(g, node);
    // A symbolic size (s0, under mark_dynamic) is evaluated at its hint; one with none (an
    // unbacked u0) would count as 0 elements: such a run has no cost rather than a figure
    // computed as if the symbol were 0.
    const auto unknown = [&g](const v1::Node* node) { return !g.Numel(*node).has_value(); };
    if (std::any_of(work.begin(), work.end(), unknown) ||
        std::any_of(read.begin(), read.end(), unknown)) {
      cost.cost_known = false;
      cost.flops = cost.bytes = 0;
    } else {
      std::vector<const v1::Node*> shapes = work;
      shapes.insert(shapes.end(), read.begin(), read.end());
      cost.size_hints = g.SizeHintsOf(shapes);
    }
    cost.name = work.size() == 1
                    ? work.front()->name()
                    : absl::StrCat("fused: ", work.front()->name(), " … ", work.back()->name());
    cost.op = "pointwise";
    // A fused kernel computes in the dtype of what it writes: an f32 kernel that reads an i64
    // index is not an i64 kernel. Its outputs (read outside the run) decide; else its last node.
    cost.dtype = work.back()->meta().dtype();
    for (const v1::Node* node : work) {
      if (UsedOutside(g, *node) && !node->meta().dtype().empty()) {
        cost.dtype = node->meta().dtype();
        break;
      }
    }
    return cost;
  }

  bool empty() const { return nodes_.empty(); }

  // Whether a node outside the run (or the graph's output) reads `node`, directly or through
  // views inside the run: a view outside the run is a reader outside it.
  bool UsedOutside(const PostGradGraph& g, const v1::Node& node) const {
    const auto inside = [this](const v1::Node& view) { return members_.contains(&view); };
    for (const v1::Node* user : g.UsersThroughViews(node, inside)) {
      if (!members_.contains(user)) return true;
    }
    return false;
  }
  void Clear() {
    nodes_.clear();
    members_.clear();
  }

 private:
  std::vector<const v1::Node*> nodes_;
  absl::flat_hash_set<const v1::Node*> members_;
};

}  // namespace

std::vector<KernelCost> EstimateKernels(const PostGradGraph& g) {
  std::vector<KernelCost> out;
  PointwiseRun run;
  auto flush = [&] {
    if (std::optional<KernelCost> cost = run.Cost(g)) out.push_back(*std::move(cost));
    run.Clear();
  };
  for (const v1::Node& node : g.graph().nodes()) {
    if (node.op() != "call_function") continue;
    if (IsLibraryCall(node)) {
      flush();
      std::optional<KernelCost> cost = LibraryOpCost(g, node);
      if (!cost) {
        // A size with no hint, or an op with no formula here: still its own kernel (a library call,
        // never part of a Triton run), with no cost rather than a guessed one.
        cost.emplace();
        NameLibraryKernel(g, node, &*cost);
        cost->cost_known = false;
      }
      out.push_back(*std::move(cost));
      continue;
    }
    if (IsOpaqueCall(g, node)) {
      flush();
      KernelCost& call = out.emplace_back();
      call.name = node.name();
      call.op = node.target();
      call.dtype = node.meta().dtype();
      call.cost_known = false;
      continue;
    }
    if (node.target() == "getitem" || node.target() == "operator.getitem") continue;
    run.Add(node);
  }
  flush();
  return out;
}

}  // namespace cl

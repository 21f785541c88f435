#include "analyzers/op_cost.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace cl {
namespace {

double NumelOf(const v1::Node* node) {
  if (node == nullptr) return 0;
  return static_cast<double>(Numel(node->meta()).value_or(0));
}

double SizeOf(const v1::Node* node) {
  return node == nullptr ? 0 : static_cast<double>(DtypeBytes(node->meta().dtype()));
}

bool IsSdpa(const v1::Node& node) {
  return IsCall(node, {"aten._scaled_dot_product_flash_attention",
                       "aten._scaled_dot_product_efficient_attention",
                       "aten._scaled_dot_product_cudnn_attention",
                       "aten._scaled_dot_product_flash_attention_for_cpu",
                       "aten.scaled_dot_product_attention"});
}

// GEMM flops from the activation [.., M, K] and the output [.., M, N]: 2·numel(out)·K.
std::optional<KernelCost> Gemm(const PostGradGraph& g, const v1::Node& node, int a_index,
                               int b_index, int bias_index) {
  const v1::Node* a = g.Input(node, a_index);
  const v1::Node* b = g.Input(node, b_index);
  const uint64_t k = a == nullptr ? 0 : Dim(a->meta(), -1).value_or(0);
  const double out = NumelOf(&node);
  const double s = SizeOf(&node);
  if (k == 0 || out == 0 || s == 0 || NumelOf(a) == 0 || NumelOf(b) == 0) return std::nullopt;
  KernelCost cost;
  cost.flops = 2 * out * static_cast<double>(k);
  cost.bytes = (NumelOf(a) + NumelOf(b) + out) * s;
  if (bias_index >= 0) cost.bytes += NumelOf(g.Input(node, bias_index)) * s;
  return cost;
}

// aten.convolution(input, weight, bias, stride, padding, dilation, transposed, ...): argument 6.
bool Transposed(const v1::Node& node) {
  const v1::Arg* arg = nullptr;
  if (node.args_size() > 6) {
    arg = &node.args(6);
  } else if (auto it = node.kwargs().find("transposed"); it != node.kwargs().end()) {
    arg = &it->second;
  }
  return arg != nullptr && arg->kind_case() == v1::Arg::kLiteral && arg->literal() == "True";
}

// Each point of the output (of the input, when transposed) meets the whole filter of one group:
// 2·numel(y)·numel(w)/w[0], w[0] being Cout; transposed, the weight is [Cin, Cout/g, kh, kw] and
// it is 2·numel(x)·numel(w)/w[0], as torch.utils.flop_counter counts it.
std::optional<KernelCost> Convolution(const PostGradGraph& g, const v1::Node& node) {
  const v1::Node* x = g.Input(node, 0);
  const v1::Node* w = g.Input(node, 1);
  const uint64_t w0 = w == nullptr ? 0 : Dim(w->meta(), 0).value_or(0);
  const double y = NumelOf(&node);
  const double s = SizeOf(&node);
  if (w0 == 0 || y == 0 || s == 0 || NumelOf(x) == 0) return std::nullopt;
  const double points = Transposed(node) ? NumelOf(x) : y;
  KernelCost cost;
  cost.flops = 2 * points * NumelOf(w) / static_cast<double>(w0);
  cost.bytes = (NumelOf(x) + NumelOf(w) + y + NumelOf(g.Input(node, 2))) * s;
  return cost;
}

std::optional<KernelCost> Sdpa(const PostGradGraph& g, const v1::Node& node) {
  const v1::Node* q = g.Input(node, 0);
  const v1::Node* k = g.Input(node, 1);
  const v1::Node* v = g.Input(node, 2);
  if (q == nullptr || k == nullptr || v == nullptr || q->meta().shape_size() != 4) {
    return std::nullopt;
  }
  const auto dim = [](const v1::Node* n, int i) {
    return static_cast<double>(Dim(n->meta(), i).value_or(0));
  };
  const double b = dim(q, 0), h = dim(q, 1), sq = dim(q, 2), d = dim(q, 3), sk = dim(k, -2),
               dv = dim(v, -1);
  const double s = SizeOf(q);
  if (b * h * sq * d * sk * dv == 0 || s == 0) return std::nullopt;
  const double rows = b * h * sq;
  KernelCost cost;
  cost.flops = 2 * rows * sk * (d + dv);
  const double out = rows * dv;
  cost.bytes = (NumelOf(q) + NumelOf(k) + NumelOf(v) + out) * s + rows * 4;
  return cost;
}

}  // namespace

bool IsLibraryCall(const v1::Node& node) {
  return IsGemm(node) || IsCall(node, {"aten.convolution"}) || IsSdpa(node);
}

std::string LibraryCallDtype(const PostGradGraph& g, const v1::Node& node) {
  if (!IsSdpa(node)) return node.meta().dtype();
  const v1::Node* q = g.Input(node, 0);  // SDPA returns a tuple
  return q == nullptr ? "" : q->meta().dtype();
}

std::optional<KernelCost> LibraryOpCost(const PostGradGraph& g, const v1::Node& node) {
  std::optional<KernelCost> cost;
  if (IsCall(node, {"aten.mm", "aten.bmm"})) cost = Gemm(g, node, 0, 1, -1);
  if (IsCall(node, {"aten.addmm", "aten.baddbmm"})) cost = Gemm(g, node, 1, 2, 0);
  if (IsCall(node, {"aten.convolution"})) cost = Convolution(g, node);
  if (IsSdpa(node)) cost = Sdpa(g, node);
  if (!cost) return std::nullopt;
  cost->name = node.name();
  cost->op = node.target();
  cost->dtype = LibraryCallDtype(g, node);
  cost->matmul = true;
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
      work.push_back(node);
      for (int i = 0; i < node->args_size(); ++i) {
        const v1::Node* input = g.Input(*node, i);
        while (input != nullptr && members_.contains(input) && IsViewLike(*input)) {
          input = g.Input(*input, 0);
        }
        if (input != nullptr && !members_.contains(input) && read.insert(input).second) {
          cost.bytes += NumelOf(input) * SizeOf(input);
        }
      }
      if (UsedOutside(g, *node)) cost.bytes += NumelOf(node) * SizeOf(node);
    }
    if (work.empty()) return std::nullopt;
    for (const v1::Node* node : work) cost.flops += NumelOf(node);
    cost.name = work.size() == 1 ? work.front()->name()
                                 : absl::StrCat("fused: ", work.front()->name(), " … ",
                                                work.back()->name());
    cost.op = "pointwise";
    cost.dtype = work.front()->meta().dtype();
    return cost;
  }

  bool empty() const { return nodes_.empty(); }

  // Whether a node outside the run (or the graph's output) reads `node`, directly or through
  // views inside the run. A view may name several nodes (a list argument), so in an untrusted
  // capture views can reach one node along exponentially many paths: each is visited once.
  bool UsedOutside(const PostGradGraph& g, const v1::Node& node) const {
    std::vector<const v1::Node*> stack = {&node};
    absl::flat_hash_set<const v1::Node*> seen = {&node};
    while (!stack.empty()) {
      const v1::Node* current = stack.back();
      stack.pop_back();
      for (const v1::Node* user : g.Users(*current)) {
        if (!members_.contains(user)) return true;
        if (IsViewLike(*user) && seen.insert(user).second) stack.push_back(user);
      }
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
        // Symbolic shapes: still its own kernel (a library call, never part of a Triton run),
        // with no cost rather than a guessed one.
        cost.emplace();
        cost->name = node.name();
        cost->op = node.target();
        cost->dtype = LibraryCallDtype(g, node);
        cost->matmul = true;
        cost->cost_known = false;
      }
      out.push_back(*std::move(cost));
      continue;
    }
    if (node.target() == "getitem" || node.target() == "operator.getitem") continue;
    run.Add(node);
  }
  flush();
  return out;
}

}  // namespace cl

#include "analyzers/fusion/patterns.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "analyzers/fusion/match_util.h"

namespace cl {
namespace {

uint64_t ElementSize(const v1::Node& node) {
  return static_cast<uint64_t>(DtypeBytes(node.meta().dtype()));
}

// The GEMM's [m,k]x[k,n] sizes: n its output width, m the rest (batch included), k the
// activation's last dim. False when a size is symbolic or the operands are unknown.
bool GemmDims(const PostGradGraph& g, const v1::Node& gemm, uint64_t* m, uint64_t* n, uint64_t* k) {
  const v1::Node* a = GemmActivation(g, gemm);
  if (a == nullptr) return false;
  *n = LastDimOr0(g, gemm);
  *k = LastDimOr0(g, *a);
  const uint64_t numel = NumelOr0(g, gemm);
  if (*n == 0 || *k == 0 || numel == 0 || ElementSize(gemm) == 0) return false;
  *m = numel / *n;
  return true;
}

// GEMM → +resid → RMSNorm → GEMM. The residual is an add of a same-shaped tensor, or the full
// [m,n] bias of an addmm (Inductor's mm + add → addmm rewrite on CPU; on GPU it splits it back,
// so it is modelled as GEMM + add either way).
bool MatchResidNorm(const PostGradGraph& g, const v1::Node& gemm1, FusionMatch* out) {
  if (!IsCall(gemm1, {"aten.mm", "aten.addmm"})) return false;
  uint64_t m, n, k0;
  if (!GemmDims(g, gemm1, &m, &n, &k0)) return false;
  const v1::Node* h = nullptr;
  if (const v1::Node* bias = GemmBias(g, gemm1); bias != nullptr && NumelOr0(g, *bias) == m * n) {
    h = &gemm1;
  } else {
    // The GEMM's [m,n] output is usually viewed back to (batch, seq, dim) before the add (an
    // attention output projection), and the residual may be either operand.
    for (const v1::Node* user : g.UsersThroughViews(gemm1)) {
      if (IsCall(*user, {"aten.add.Tensor"}) && NumelOr0(g, *user) == m * n) {
        const v1::Node* a = g.Input(*user, 0);
        const v1::Node* b = g.Input(*user, 1);
        const v1::Node* other = g.SkipViewsUp(a) == &gemm1 ? b : a;
        if (other != nullptr && NumelOr0(g, *other) == m * n) h = user;
      }
    }
  }
  if (h == nullptr) return false;
  const v1::Node* normed = RmsNormOf(g, *h);
  if (normed == nullptr) return false;
  const v1::Node* gemm2 = ConsumingGemm(g, *normed);
  if (gemm2 == nullptr) return false;
  const uint64_t k1 = LastDimOr0(g, *gemm2);
  if (k1 == 0) return false;
  out->pattern = FusionPattern::kGemmResidRmsNormGemm;
  out->label = "GEMM → +resid → RMSNorm → GEMM";
  out->anchors = {&gemm1, gemm2};
  out->input_anchor = gemm2;
  out->m = m;
  out->n = n;
  out->k0 = k0;
  out->k1 = k1;
  out->bytes = GemmResidRmsNormGemmBytes(m, n, k0, k1, ElementSize(gemm1));
  return true;
}

// The GEMM a gate or up operand comes from, through views, slices and splits.
const v1::Node* SourceGemm(const PostGradGraph& g, const v1::Node* node) {
  for (int step = 0; node != nullptr && step < 8; ++step) {
    if (IsGemm(*node)) return node;
    if (!IsViewLike(*node) &&
        !IsCall(*node, {"aten.slice", "aten.split", "aten.split_with_sizes", "aten.chunk",
                        "aten.narrow"}) &&
        node->target() != "getitem" && node->target() != "operator.getitem") {
      return nullptr;
    }
    node = g.Input(*node, 0);
  }
  return nullptr;
}

// silu(x), as aten.silu or decomposed x * sigmoid(x); returns x.
const v1::Node* SiluInput(const PostGradGraph& g, const v1::Node& node) {
  if (IsCall(node, {"aten.silu"})) return g.Input(node, 0);
  if (!IsCall(node, {"aten.mul.Tensor"})) return nullptr;
  const v1::Node* a = g.Input(node, 0);
  const v1::Node* b = g.Input(node, 1);
  if (a == nullptr || b == nullptr) return nullptr;
  if (IsCall(*b, {"aten.sigmoid"}) && g.Input(*b, 0) == a) return a;
  if (IsCall(*a, {"aten.sigmoid"}) && g.Input(*a, 0) == b) return b;
  return nullptr;
}

// silu(gate) * up, gate and up from one 2F-wide GEMM or from two GEMMs on the same input.
bool MatchSwiGlu(const PostGradGraph& g, const v1::Node& mul, FusionMatch* out) {
  if (!IsCall(mul, {"aten.mul.Tensor"})) return false;
  for (int side = 0; side < 2; ++side) {
    const v1::Node* silu = g.SkipViewsUp(g.Input(mul, side));
    const v1::Node* up = g.Input(mul, 1 - side);
    if (silu == nullptr || up == nullptr) continue;
    const v1::Node* gate = SiluInput(g, *silu);
    if (gate == nullptr) continue;
    const v1::Node* gate_gemm = SourceGemm(g, gate);
    const v1::Node* up_gemm = SourceGemm(g, up);
    if (gate_gemm == nullptr || up_gemm == nullptr) continue;
    const bool separate = gate_gemm != up_gemm;
    if (separate && g.SkipViewsUp(GemmActivation(g, *gate_gemm)) !=
                        g.SkipViewsUp(GemmActivation(g, *up_gemm))) {
      continue;
    }
    uint64_t m, n, k;
    if (!GemmDims(g, *gate_gemm, &m, &n, &k)) continue;
    const uint64_t f = LastDimOr0(g, mul);
    if (f == 0) continue;
    const v1::Node* down = ConsumingGemm(g, mul);
    const uint64_t k1 = down == nullptr ? 0 : LastDimOr0(g, *down);
    out->pattern = FusionPattern::kSwiGlu;
    out->label = "SwiGLU into the gate/up GEMM";
    out->anchors = {gate_gemm};
    if (separate) out->anchors.push_back(up_gemm);
    if (down != nullptr) {
      out->anchors.push_back(down);
      out->input_anchor = down;
    }
    out->m = m;
    out->n = f;
    out->k0 = k;
    out->k1 = k1;
    out->bytes = SwiGluBytes(m, f, k, k1, separate, ElementSize(mul));
    return true;
  }
  return false;
}

// LayerNorm → GEMM, or RMSNorm → GEMM where no GEMM + residual comes before the norm (a
// pre-norm block's first norm, the QKV projection's input): the same prologue fusion.
bool MatchLayerNormGemm(const PostGradGraph& g, const v1::Node& x, FusionMatch* out) {
  if (x.op() == "output") return false;
  const v1::Node* normed = LayerNormOf(g, x);
  const bool rms = normed == nullptr;
  if (rms) normed = RmsNormOf(g, x);
  if (normed == nullptr) return false;
  const v1::Node* gemm = ConsumingGemm(g, *normed);
  if (gemm == nullptr) return false;
  const uint64_t d = LastDimOr0(g, *normed);
  const uint64_t k1 = LastDimOr0(g, *gemm);
  if (d == 0 || k1 == 0 || NumelOr0(g, *normed) == 0) return false;
  const uint64_t m = NumelOr0(g, *normed) / d;
  out->pattern = FusionPattern::kLayerNormGemm;
  out->label = rms ? "RMSNorm → GEMM" : "LayerNorm → GEMM";
  out->anchors = {normed, gemm};
  out->input_anchor = gemm;
  out->m = m;
  out->n = d;
  out->k0 = 0;
  out->k1 = k1;
  out->bytes = LayerNormGemmBytes(m, d, k1, ElementSize(*gemm));
  return true;
}

// GEMM (+ bias) → activation (relu, gelu, silu, tanh, sigmoid; GELU also decomposed into
// x * 0.5 * (1 + erf(x * 0.7071...))).
bool MatchBiasActivation(const PostGradGraph& g, const v1::Node& gemm, FusionMatch* out) {
  if (!IsCall(gemm, {"aten.mm", "aten.addmm"})) return false;
  uint64_t m, n, k;
  if (!GemmDims(g, gemm, &m, &n, &k)) return false;
  const v1::Node* pre = &gemm;
  bool bias = false;
  if (const v1::Node* b = GemmBias(g, gemm)) {
    if (NumelOr0(g, *b) != n) return false;  // a full [m,n] addend is a residual, not a bias
    bias = true;
  } else if (g.Users(gemm).size() == 1 && IsCall(*g.Users(gemm)[0], {"aten.add.Tensor"})) {
    const v1::Node* add = g.Users(gemm)[0];
    const v1::Node* a = g.Input(*add, 0);
    const v1::Node* other = a == &gemm ? g.Input(*add, 1) : a;
    if (other != nullptr && NumelOr0(g, *other) == n) {
      pre = add;
      bias = true;
    }
  }
  bool activation = false;
  for (const v1::Node* user : g.Users(*pre)) {
    if (IsCall(*user, {"aten.relu", "aten.gelu", "aten.silu", "aten.tanh", "aten.sigmoid"})) {
      activation = true;
    }
    if (IsCall(*user, {"aten.mul.Tensor"}) && user->args_size() > 1 &&
        user->args(1).kind_case() == v1::Arg::kLiteral) {
      for (const v1::Node* next : g.Users(*user)) {
        if (IsCall(*next, {"aten.erf", "aten.tanh"})) activation = true;
      }
    }
  }
  if (!activation) return false;
  out->pattern = FusionPattern::kGemmBiasActivation;
  out->label = bias ? "GEMM + bias + activation" : "GEMM + activation";
  out->anchors = {&gemm};
  out->m = m;
  out->n = n;
  out->k0 = k;
  out->k1 = 0;
  out->bytes = GemmBiasActivationBytes(m, n, k, bias, ElementSize(gemm));
  return true;
}

}  // namespace

// Defined in fusion_patterns_attention.cc: RoPE, LM head + cross-entropy, hand-written attention.
bool MatchRope(const PostGradGraph& g, const v1::Node& gemm, FusionMatch* out);
bool MatchLmHeadCrossEntropy(const PostGradGraph& g, const v1::Node& gemm, FusionMatch* out);
bool MatchManualAttention(const PostGradGraph& g, const v1::Node& bmm, FusionMatch* out);

const v1::SourceLoc* SourceOf(const PostGradGraph& graph, const v1::Node& node) {
  if (node.source().line() > 0 && !node.source().no_stacktrace()) return &node.source();
  // Last operand first: for a GEMM rewrite that is the weight, whose transpose still carries
  // the user's Linear line; the activation may come from the previous block.
  for (int i = node.args_size() - 1; i >= 0; --i) {
    const v1::Node* input = graph.Input(node, i);
    if (input != nullptr && input->op() == "call_function" && input->source().line() > 0) {
      return &input->source();
    }
  }
  return nullptr;
}

std::vector<FusionMatch> FindFusionMatches(const PostGradGraph& graph) {
  using Matcher = bool (*)(const PostGradGraph&, const v1::Node&, FusionMatch*);
  // Longest chains first: a GEMM side claimed by one match is not offered to the next.
  constexpr Matcher kMatchers[] = {&MatchResidNorm,          &MatchManualAttention, &MatchSwiGlu,
                                   &MatchLmHeadCrossEntropy, &MatchLayerNormGemm,   &MatchRope,
                                   &MatchBiasActivation};
  std::vector<FusionMatch> matches;
  // Every (anchor, its input side?) an accepted match claims (FusionMatch::input_anchor). Stacked
  // blocks chain GEMM → norm → GEMM → norm → GEMM: the middle GEMM is one chain's input side and
  // the next one's output side, and both chains are real.
  absl::flat_hash_set<std::pair<const v1::Node*, bool>> claimed;
  for (const Matcher matcher : kMatchers) {
    for (const v1::Node& node : graph.graph().nodes()) {
      FusionMatch match;
      if (!matcher(graph, node, &match)) continue;
      const auto claim = [&](const v1::Node* a) {
        return std::make_pair(a, a == match.input_anchor);
      };
      if (std::any_of(match.anchors.begin(), match.anchors.end(),
                      [&](const v1::Node* a) { return claimed.contains(claim(a)); })) {
        continue;
      }
      for (const v1::Node* a : match.anchors) claimed.insert(claim(a));
      matches.push_back(std::move(match));
    }
  }
  absl::flat_hash_map<const v1::Node*, int> order;
  for (int i = 0; i < graph.graph().nodes_size(); ++i) order[&graph.graph().nodes(i)] = i;
  std::stable_sort(matches.begin(), matches.end(), [&](const FusionMatch& a, const FusionMatch& b) {
    return order[a.anchors.front()] < order[b.anchors.front()];
  });
  return matches;
}

}  // namespace cl

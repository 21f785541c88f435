// The fusion patterns around attention: RoPE (+ QK-norm) into the QKV GEMM, LM head +
// cross-entropy, and hand-written attention Inductor's fuse_attention pass did not rewrite to
// SDPA. Declared and driven by fusion_patterns.cc.
#include <algorithm>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "analyzers/fusion/match_util.h"
#include "analyzers/fusion/patterns.h"

namespace cl {
namespace {

uint64_t ElementSize(const v1::Node& node) {
  return static_cast<uint64_t>(DtypeBytes(node.meta().dtype()));
}

// The nodes downstream of `gemm` within `depth` hops, not entering another GEMM or attention
// kernel (a later layer's chain is not this GEMM's).
std::vector<const v1::Node*> Downstream(const PostGradGraph& g, const v1::Node& gemm, int depth) {
  std::vector<const v1::Node*> out;
  absl::flat_hash_set<const v1::Node*> seen = {&gemm};
  std::deque<std::pair<const v1::Node*, int>> queue = {{&gemm, 0}};
  while (!queue.empty()) {
    auto [node, d] = queue.front();
    queue.pop_front();
    if (d == depth) continue;
    for (const v1::Node* user : g.Users(*node)) {
      if (!seen.insert(user).second || user->op() == "output") continue;
      out.push_back(user);
      if (IsGemm(*user) || IsCall(*user, {"aten._scaled_dot_product_flash_attention",
                                          "aten._scaled_dot_product_efficient_attention",
                                          "aten._scaled_dot_product_flash_attention_for_cpu",
                                          "aten.scaled_dot_product_attention"})) {
        continue;
      }
      queue.push_back({user, d + 1});
    }
  }
  return out;
}

bool ListHasNeg(const PostGradGraph& g, const v1::Node& cat) {
  if (cat.args_size() == 0 || cat.args(0).kind_case() != v1::Arg::kList) return false;
  for (const v1::Arg& item : cat.args(0).list().items()) {
    if (item.kind_case() != v1::Arg::kNode) continue;
    const v1::Node* input = g.Find(item.node());
    if (input != nullptr && IsCall(*input, {"aten.neg"})) return true;
  }
  return false;
}

// The add of x·cos + rotate_half(x)·sin that consumes a rotate_half `cat`, or null.
const v1::Node* RopeOutput(const PostGradGraph& g, const v1::Node& cat) {
  for (const v1::Node* mul : g.Users(cat)) {
    if (!IsCall(*mul, {"aten.mul.Tensor"})) continue;
    for (const v1::Node* add : g.Users(*mul)) {
      if (IsCall(*add, {"aten.add.Tensor"})) return add;
    }
  }
  return nullptr;
}

}  // namespace

bool MatchRope(const PostGradGraph& g, const v1::Node& gemm, FusionMatch* out) {
  if (!IsCall(gemm, {"aten.mm", "aten.addmm"})) return false;
  const v1::Node* a = GemmActivation(g, gemm);
  const uint64_t n = LastDimOr0(g, gemm);
  const uint64_t k = a == nullptr ? 0 : LastDimOr0(g, *a);
  if (n == 0 || k == 0 || NumelOr0(g, gemm) == 0) return false;
  uint64_t rotated = 0;
  bool qk_norm = false;
  std::vector<const v1::Node*> ropes;
  for (const v1::Node* node : Downstream(g, gemm, 10)) {
    if (IsCall(*node, {"aten.rsqrt", "aten.rms_norm", "aten._fused_rms_norm"})) qk_norm = true;
    if (!IsCall(*node, {"aten.cat"}) || !ListHasNeg(g, *node)) continue;
    if (const v1::Node* rope = RopeOutput(g, *node)) {
      rotated += NumelOr0(g, *rope);
      ropes.push_back(rope);
    }
  }
  if (ropes.empty() || rotated == 0) return false;
  const uint64_t m = NumelOr0(g, gemm) / n;
  out->pattern = FusionPattern::kRopeIntoQkvGemm;
  out->label = qk_norm ? "RoPE + QK-norm into the QKV GEMM" : "RoPE into the QKV GEMM";
  out->anchors = {&gemm};
  out->anchors.insert(out->anchors.end(), ropes.begin(), ropes.end());
  out->m = m;
  out->n = n;
  out->k0 = k;
  out->k1 = 0;
  out->bytes = RopeGemmBytes(m, n, k, rotated, qk_norm, ElementSize(gemm));
  return true;
}

bool MatchLmHeadCrossEntropy(const PostGradGraph& g, const v1::Node& gemm, FusionMatch* out) {
  if (!IsCall(gemm, {"aten.mm", "aten.addmm"})) return false;
  const v1::Node* a = GemmActivation(g, gemm);
  const uint64_t v = LastDimOr0(g, gemm);
  const uint64_t k = a == nullptr ? 0 : LastDimOr0(g, *a);
  if (v == 0 || k == 0 || NumelOr0(g, gemm) == 0) return false;
  const v1::Node* log_softmax = nullptr;
  const v1::Node* loss = nullptr;
  for (const v1::Node* node : Downstream(g, gemm, 10)) {
    if (log_softmax == nullptr &&
        IsCall(*node, {"aten._log_softmax", "aten.log_softmax", "aten.amax", "aten.logsumexp"})) {
      log_softmax = node;
    }
    if (loss == nullptr && IsCall(*node, {"aten.nll_loss_forward", "aten.nll_loss",
                                          "aten.nll_loss2d_forward", "aten.gather"})) {
      loss = node;
    }
  }
  if (log_softmax == nullptr || loss == nullptr) return false;
  const uint64_t m = NumelOr0(g, gemm) / v;
  const uint64_t s = ElementSize(gemm);
  out->pattern = FusionPattern::kLmHeadCrossEntropy;
  out->label = "LM head + cross-entropy";
  out->anchors = {&gemm, loss};
  out->m = m;
  out->n = v;
  out->k0 = k;
  out->k1 = 0;
  out->bytes = LmHeadCrossEntropyBytes(m, v, k, s, std::max(s, ElementSize(*log_softmax)));
  return true;
}

namespace {

// The input of a softmax over scores: aten._softmax(x) or the decomposed exp(x - amax) / sum.
const v1::Node* SoftmaxInput(const PostGradGraph& g, const v1::Node& node) {
  if (IsCall(node, {"aten._softmax", "aten.softmax"})) return g.Input(node, 0);
  if (!IsCall(node, {"aten.div.Tensor"})) return nullptr;
  const v1::Node* exp = g.Input(node, 0);
  if (exp == nullptr || !IsCall(*exp, {"aten.exp"})) return nullptr;
  const v1::Node* sub = g.Input(*exp, 0);
  if (sub != nullptr && IsCall(*sub, {"aten.sub.Tensor"})) return g.Input(*sub, 0);
  return sub;
}

// How many scale, mask and where ops may sit between the scores bmm and the softmax.
constexpr int kScoreHops = 8;

// The bmm that produced the scores, through the scale (mul/div), the mask (add, where) and views:
// depth first, the first operand first, at most `hops` such ops deep. Captures are untrusted and
// a DAG of adds reaches one node along exponentially many paths: the depth bound, one budget for
// the whole path, caps a search at 2^(kScoreHops + 1) calls however deep the DAG.
const v1::Node* ScoresBmm(const PostGradGraph& g, const v1::Node* node, int hops) {
  node = g.SkipViewsUp(node);
  if (node == nullptr) return nullptr;
  if (IsCall(*node, {"aten.bmm"})) return node;
  if (hops == 0) return nullptr;
  if (IsCall(*node, {"aten.mul.Tensor", "aten.div.Tensor", "aten.add.Tensor"})) {
    // The mask or scale is the operand not derived from a bmm; try the first, then the second.
    const v1::Node* from_a = ScoresBmm(g, g.Input(*node, 0), hops - 1);
    return from_a != nullptr ? from_a : ScoresBmm(g, g.Input(*node, 1), hops - 1);
  }
  if (IsCall(*node, {"aten.where.self"})) return ScoresBmm(g, g.Input(*node, 1), hops - 1);
  return nullptr;
}

}  // namespace

bool MatchManualAttention(const PostGradGraph& g, const v1::Node& bmm2, FusionMatch* out) {
  if (!IsCall(bmm2, {"aten.bmm"})) return false;
  const v1::Node* probs = g.SkipViewsUp(g.Input(bmm2, 0));
  if (probs == nullptr) return false;
  const v1::Node* scores = SoftmaxInput(g, *probs);
  if (scores == nullptr) return false;
  const v1::Node* bmm1 = ScoresBmm(g, scores, kScoreHops);
  if (bmm1 == nullptr || bmm1 == &bmm2) return false;
  const v1::Node* q = g.Input(*bmm1, 0);
  const std::optional<uint64_t> bh = g.Dim(*bmm1, 0);
  const std::optional<uint64_t> sq = g.Dim(*bmm1, 1);
  const std::optional<uint64_t> sk = g.Dim(*bmm1, 2);
  const uint64_t d = q == nullptr ? 0 : LastDimOr0(g, *q);
  const uint64_t dv = LastDimOr0(g, bmm2);
  if (!bh || !sq || !sk || d == 0 || dv == 0 || ElementSize(bmm2) == 0) return false;
  out->pattern = FusionPattern::kManualAttention;
  out->label = "hand-written attention → SDPA";
  out->anchors = {bmm1, &bmm2};
  out->input_anchor = &bmm2;
  out->m = *sq;
  out->n = *sk;
  out->k0 = d;
  out->k1 = dv;
  out->bytes = AttentionBytes(*bh, *sq, *sk, d, dv, ElementSize(bmm2));
  return true;
}

}  // namespace cl

#include "analyzers/fusion/match_util.h"

#include <cmath>

#include "absl/strings/numbers.h"

namespace cl {
namespace {

// The single user of `node` that calls one of `targets`, or null.
const v1::Node* UserCalling(const PostGradGraph& g, const v1::Node& node,
                            std::initializer_list<absl::string_view> targets) {
  for (const v1::Node* user : g.Users(node)) {
    if (IsCall(*user, targets)) return user;
  }
  return nullptr;
}

// getitem(node, 0), the first output of a tuple-returning op.
const v1::Node* FirstItem(const PostGradGraph& g, const v1::Node& node) {
  for (const v1::Node* user : g.Users(node)) {
    if (user->target() == "getitem" || user->target() == "operator.getitem") {
      if (LiteralIs(*user, 1, 0)) return user;
    }
  }
  return nullptr;
}

// Follows a chain of `mul`/`add` users whose other operand is a parameter (γ, β): the affine
// tail of a norm.
const v1::Node* AffineTail(const PostGradGraph& g, const v1::Node* out) {
  for (int step = 0; step < 2; ++step) {
    const auto& users = g.Users(*out);
    if (users.size() != 1 || !IsCall(*users[0], {"aten.mul.Tensor", "aten.add.Tensor"})) break;
    const v1::Node* a = g.Input(*users[0], 0);
    const v1::Node* b = g.Input(*users[0], 1);
    const v1::Node* other = a == out ? b : a;
    if (other == nullptr || (other->op() != "placeholder" && other->op() != "get_attr")) break;
    out = users[0];
  }
  return out;
}

}  // namespace

const v1::Node* GemmActivation(const PostGradGraph& g, const v1::Node& gemm) {
  const bool with_bias = IsCall(gemm, {"aten.addmm", "aten.baddbmm"});
  return g.Input(gemm, with_bias ? 1 : 0);
}

const v1::Node* GemmBias(const PostGradGraph& g, const v1::Node& gemm) {
  return IsCall(gemm, {"aten.addmm", "aten.baddbmm"}) ? g.Input(gemm, 0) : nullptr;
}

const v1::Node* ConsumingGemm(const PostGradGraph& g, const v1::Node& node) {
  for (const v1::Node* user : g.UsersThroughViews(node)) {
    if (!IsGemm(*user)) continue;
    const v1::Node* a = g.SkipViewsUp(GemmActivation(g, *user));
    if (a == &node) return user;
  }
  return nullptr;
}

bool LiteralIs(const v1::Node& node, int i, double value) {
  if (i >= node.args_size() || node.args(i).kind_case() != v1::Arg::kLiteral) return false;
  double parsed = 0;
  return absl::SimpleAtod(node.args(i).literal(), &parsed) && parsed == value;
}

uint64_t NumelOr0(const PostGradGraph& g, const v1::Node& node) {
  return g.Numel(node).value_or(0);
}
uint64_t LastDimOr0(const PostGradGraph& g, const v1::Node& node) {
  return g.Dim(node, -1).value_or(0);
}

const v1::Node* RmsNormOf(const PostGradGraph& g, const v1::Node& h_in) {
  const v1::Node* h = &h_in;
  if (const v1::Node* up = UserCalling(g, h_in, {"prims.convert_element_type.default"})) {
    if (UserCalling(g, *up, {"aten.pow.Tensor_Scalar"}) != nullptr) h = up;
  }
  // A centred norm subtracts a learned per-feature centre first: h - c (either operand order).
  if (const v1::Node* sub = UserCalling(g, *h, {"aten.sub.Tensor"})) {
    const v1::Node* a = g.Input(*sub, 0);
    const v1::Node* other = a == h ? g.Input(*sub, 1) : a;
    if (other != nullptr && other != h && NumelOr0(g, *other) == LastDimOr0(g, *h) &&
        NumelOr0(g, *sub) == NumelOr0(g, *h)) {
      h = sub;
    }
  }
  if (const v1::Node* n = UserCalling(g, *h, {"aten.rms_norm"})) return AffineTail(g, n);
  if (const v1::Node* n = UserCalling(g, *h, {"aten._fused_rms_norm"})) {
    const v1::Node* out = FirstItem(g, *n);
    return out == nullptr ? nullptr : AffineTail(g, out);
  }
  // Decomposed: the square, its mean over the last dim, + eps, rsqrt, then h * rsqrt.
  const v1::Node* square = nullptr;
  for (const v1::Node* user : g.Users(*h)) {
    if ((IsCall(*user, {"aten.pow.Tensor_Scalar"}) && LiteralIs(*user, 1, 2)) ||
        (IsCall(*user, {"aten.mul.Tensor"}) && g.Input(*user, 0) == h && g.Input(*user, 1) == h)) {
      square = user;
    }
  }
  if (square == nullptr) return nullptr;
  const v1::Node* mean = UserCalling(g, *square, {"aten.mean"});
  if (mean == nullptr) return nullptr;
  const v1::Node* eps = UserCalling(g, *mean, {"aten.add.Tensor", "aten.add.Scalar"});
  const v1::Node* rsqrt = UserCalling(g, eps != nullptr ? *eps : *mean, {"aten.rsqrt"});
  if (rsqrt == nullptr) return nullptr;
  for (const v1::Node* user : g.Users(*rsqrt)) {
    if (!IsCall(*user, {"aten.mul.Tensor"})) continue;
    if (g.Input(*user, 0) != h && g.Input(*user, 1) != h) continue;
    const v1::Node* out = user;
    // A downcast back to the activation dtype sits between the scale and γ in mixed precision.
    if (const v1::Node* down = UserCalling(g, *out, {"prims.convert_element_type.default"})) {
      out = down;
    }
    return AffineTail(g, out);
  }
  return nullptr;
}

const v1::Node* LayerNormOf(const PostGradGraph& g, const v1::Node& x) {
  if (const v1::Node* n = UserCalling(g, x, {"aten.layer_norm"})) return n;
  if (const v1::Node* n = UserCalling(g, x, {"aten.native_layer_norm"})) {
    const v1::Node* out = FirstItem(g, *n);
    return out == nullptr ? nullptr : AffineTail(g, out);
  }
  // Decomposed: var_mean → (x - mean) * rsqrt(var + eps) → * γ → + β.
  if (UserCalling(g, x, {"aten.var_mean"}) == nullptr) return nullptr;
  const v1::Node* centered = UserCalling(g, x, {"aten.sub.Tensor"});
  if (centered == nullptr) return nullptr;
  for (const v1::Node* user : g.Users(*centered)) {
    if (!IsCall(*user, {"aten.mul.Tensor"})) continue;
    const v1::Node* a = g.Input(*user, 0);
    const v1::Node* b = g.Input(*user, 1);
    const v1::Node* other = a == centered ? b : a;
    if (other != nullptr && IsCall(*other, {"aten.rsqrt"})) return AffineTail(g, user);
  }
  return nullptr;
}

}  // namespace cl

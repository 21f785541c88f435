// Small graph queries the fusion matchers share (fusion_patterns.cc, fusion_norms.cc).
#ifndef ANALYZERS_FUSION_MATCH_UTIL_H_
#define ANALYZERS_FUSION_MATCH_UTIL_H_

#include <cstdint>

#include "analyzers/common/post_grad_graph.h"

namespace cl {

// The GEMM's activation operand (mm/bmm: arg 0; addmm/baddbmm: arg 1) and its bias (addmm/baddbmm
// arg 0; null for mm/bmm).
const v1::Node* GemmActivation(const PostGradGraph& g, const v1::Node& gemm);
const v1::Node* GemmBias(const PostGradGraph& g, const v1::Node& gemm);

// A GEMM that takes `node` (or a view of it) as its activation operand; null when none.
const v1::Node* ConsumingGemm(const PostGradGraph& g, const v1::Node& node);

// Argument `i` is a literal that reads as `value` ("2", "2.0").
bool LiteralIs(const v1::Node& node, int i, double value);

// Element count and last dim of the node's output, symbolic sizes at their hints (0 when
// unknown).
uint64_t NumelOr0(const PostGradGraph& g, const v1::Node& node);
uint64_t LastDimOr0(const PostGradGraph& g, const v1::Node& node);

// The normalized output of an RMSNorm applied to `h` (null when `h` feeds no RMSNorm). Knows the
// decomposed form (pow(2) or h*h → mean(-1) → add(eps) → rsqrt → mul(h, ·) → optional mul(γ)),
// aten.rms_norm and aten._fused_rms_norm (through its getitem 0); an upcast of `h` to fp32 before
// the norm is looked through, and so is a centring h - c (c one value per feature) before it.
const v1::Node* RmsNormOf(const PostGradGraph& g, const v1::Node& h);

// The output of a LayerNorm whose input is `x`: aten.native_layer_norm (getitem 0),
// aten.layer_norm, or var_mean → sub → rsqrt → mul (→ mul γ → add β). Null when none.
const v1::Node* LayerNormOf(const PostGradGraph& g, const v1::Node& x);

}  // namespace cl

#endif  // ANALYZERS_FUSION_MATCH_UTIL_H_

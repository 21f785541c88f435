// The fusion patterns, matched on one post-grad graph (docs/design.md §5.6,
// docs/torch-semantics.md §6.4).
//
// Each matcher keys on op sequences that survive decomposition variants: RMSNorm as
// pow → mean → add → rsqrt → mul (→ mul γ), as aten.rms_norm or aten._fused_rms_norm; a GEMM as
// mm, addmm or bmm, including the addmm Inductor builds from mm + add (those nodes carry no stack
// trace, so locations fall back to their inputs'). Matches are claimed in a fixed order (the
// longest chains first) and each side of a GEMM, the tensor it reads and the one it writes, belongs
// to at most one match, so no bytes are saved twice under two names.
//
// FusionShape per pattern: m = rows, n = width of the intermediate the fusion stops
// materializing, k0 = reduction dim of the first GEMM, k1 = output width of the last GEMM (0 when
// the pattern has none). Attention: m = Sq, n = Sk, k0 = d, k1 = d_v.
#ifndef ANALYZERS_FUSION_PATTERNS_H_
#define ANALYZERS_FUSION_PATTERNS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzers/common/post_grad_graph.h"
#include "analyzers/fusion/bytes.h"

namespace cl {

enum class FusionPattern {
  kGemmResidRmsNormGemm,
  kSwiGlu,
  kRopeIntoQkvGemm,
  kLayerNormGemm,
  kLmHeadCrossEntropy,
  kManualAttention,
  kGemmBiasActivation,
};

struct FusionMatch {
  FusionPattern pattern;
  std::string label;  // "GEMM → +resid → RMSNorm → GEMM", the report's pattern text
  // The nodes whose source lines say where the chain is in user code (the GEMMs, mostly).
  std::vector<const v1::Node*> anchors;
  // The anchor (if any) whose input the fusion saves: the tensor a GEMM reads stops making a round
  // trip through HBM (a norm's output, SwiGLU's silu·mul, attention's probabilities), however the
  // fused kernel computes it (the RMSNorm chain folds 1/rms into that GEMM's epilogue). For every
  // other anchor the fusion saves the round trip of what it writes. Two matches exclude each other
  // when they claim one node on the same side; the two sides are different bytes (a block's RMSNorm
  // into the gate/up GEMM's input, and SwiGLU out of its output).
  const v1::Node* input_anchor = nullptr;
  uint64_t m = 0, n = 0, k0 = 0, k1 = 0;
  HbmBytes bytes;
};

// Every match in `graph`, in graph order of their first anchor.
std::vector<FusionMatch> FindFusionMatches(const PostGradGraph& graph);

// `node`'s source line, or for a node without a stack trace (an Inductor rewrite) that of its
// last call_function operand that has one (a GEMM's weight); null when none does.
const v1::SourceLoc* SourceOf(const PostGradGraph& graph, const v1::Node& node);

}  // namespace cl

#endif  // ANALYZERS_FUSION_PATTERNS_H_

#include "analyzers/fusion/advice.h"

namespace cl {

std::string FusionChange(FusionPattern pattern) {
  switch (pattern) {
    case FusionPattern::kGemmResidRmsNormGemm:
      return "fold per-row 1/rms into the second GEMM epilogue — so the normalized activation "
             "never round-trips HBM between the norm and the second GEMM.";
    case FusionPattern::kSwiGlu:
      return "compute silu(gate)·up in the gate/up GEMM epilogue — so only the F-wide product, "
             "not the 2F-wide gate/up output, is written to HBM.";
    case FusionPattern::kRopeIntoQkvGemm:
      return "apply the rotary embedding (and the QK-norm) in the QKV GEMM epilogue — so Q and K "
             "are written once, already rotated, instead of round-tripping HBM.";
    case FusionPattern::kLayerNormGemm:
      return "fold the norm into the GEMM: scale W by γ offline, apply the per-row statistics "
             "(mean and 1/σ, or 1/rms) in the epilogue — so the normalized activation is never "
             "materialized.";
    case FusionPattern::kLmHeadCrossEntropy:
      return "fuse the LM head with the cross-entropy (a chunked linear-cross-entropy) — so the "
             "M×V logits are never materialized in HBM.";
    case FusionPattern::kManualAttention:
      return "replace the hand-written softmax(Q·Kᵀ)·V with "
             "`torch.nn.functional.scaled_dot_product_attention` — so the score and probability "
             "matrices never reach HBM (Inductor's fuse_attention pass did not match this one).";
    case FusionPattern::kGemmBiasActivation:
      return "apply the bias and activation in the GEMM epilogue — so the GEMM output never "
             "round-trips HBM before the activation.";
  }
  return "";
}

std::string FusionHow(FusionPattern pattern) {
  switch (pattern) {
    case FusionPattern::kManualAttention:
      return "suggest-only — call `F.scaled_dot_product_attention` (flash / memory-efficient "
             "backends) in the model code. This tool reads the graph; it never rewrites it or "
             "runs a kernel.";
    case FusionPattern::kLmHeadCrossEntropy:
      return "suggest-only — use a fused linear-cross-entropy kernel (Liger "
             "`FusedLinearCrossEntropy`, Cut Cross-Entropy, CODA `linear_cross_entropy`). This "
             "tool reads the graph; it never rewrites it or runs a kernel.";
    case FusionPattern::kGemmBiasActivation:
      return "suggest-only — compile with `mode=\"max-autotune\"` so a Triton GEMM template takes "
             "the pointwise epilogue, or use a cuBLASLt epilogue (`aten._addmm_activation`). This "
             "tool reads the graph; it never rewrites it or runs a kernel.";
    default:
      return "suggest-only — implement with a fused epilogue kernel (a Triton or CUTLASS "
             "epilogue), or check whether `torch.compile`'s max-autotune already performs it. "
             "This tool reads the graph; it never rewrites it or runs a kernel.";
  }
}

}  // namespace cl

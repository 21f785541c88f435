// The byte models of the fusion patterns (docs/design.md §5.6, docs/torch-semantics.md §6.3-6.4):
// HBM bytes the kernels Inductor emits for a GPU move, unfused and fused, from the shapes and the
// element size `s` on the post-grad nodes. Compulsory traffic only (each tensor read or written
// once per kernel that touches it); per-row scalars (1/rms, logsumexp) and the d-element norm
// weights are a few hundred bytes and are left out, so the numbers stay readable.
#ifndef ANALYZERS_FUSION_BYTES_H_
#define ANALYZERS_FUSION_BYTES_H_

#include <cstdint>
#include <string>

namespace cl {

struct HbmBytes {
  uint64_t before = 0;  // the kernels Inductor emits
  uint64_t after = 0;   // with the fusion applied
  // The sums spelled out per kernel, for the report: "unfused: GEMM1 84 KiB + add 48 KiB + ...
  // = 264 KiB; fused: ... = 184 KiB (4 B per element)".
  std::string model;
};

// GEMM1 [m,k0]x[k0,n] → +resid → RMSNorm → GEMM2 [m,n]x[n,k1]. Unfused: GEMM1 (x, W1, writes h0),
// the residual add (reads h0 and resid, writes h: 3·m·n), the norm (a looped reduction reads h
// twice, sum of squares then scale, and writes n: 3·m·n), GEMM2 (n, W2, output). Fused: GEMM1's
// epilogue adds resid and writes h once, GEMM2 reads h and scales rows by 1/rms (γ folded into
// W2), so the h0 and n round trips and the norm's reads disappear.
HbmBytes GemmResidRmsNormGemmBytes(uint64_t m, uint64_t n, uint64_t k0, uint64_t k1, uint64_t s);

// GEMM [m,k]x[k,n] (+ bias of n) → activation. Unfused: the GEMM writes its output and a Triton
// kernel reads it (and the bias) and writes the activation; fused: one epilogue. ΔB = 2·m·n·s.
HbmBytes GemmBiasActivationBytes(uint64_t m, uint64_t n, uint64_t k, bool bias, uint64_t s);

// x [m,k] → gate/up GEMM (2f wide; `separate`: two GEMMs reading x each) → silu(g)·u → down GEMM
// [m,f]x[f,k1] (k1 = 0: no down GEMM found). Unfused: write 2f, read 2f, write f, read f; fused:
// the gate/up epilogue writes f only. ΔB = 4·m·f·s (+ m·k·s for separate GEMMs).
HbmBytes SwiGluBytes(uint64_t m, uint64_t f, uint64_t k, uint64_t k1, bool separate, uint64_t s);

// LayerNorm over d → GEMM [m,d]x[d,k1]. Unfused: the norm reads x and writes y, the GEMM reads
// y; fused (mean/scale folded into the GEMM, per-row μ and 1/σ applied in its epilogue): the
// GEMM reads x. ΔB = 2·m·d·s.
HbmBytes LayerNormGemmBytes(uint64_t m, uint64_t d, uint64_t k1, uint64_t s);

// QKV GEMM [m,k]x[k,n] → RoPE on `rotated` elements (q and k). The rotation kernel reads and
// writes them (twice with a QK-norm kernel in between); fused into the GEMM epilogue it doesn't.
HbmBytes RopeGemmBytes(uint64_t m, uint64_t n, uint64_t k, uint64_t rotated, bool qk_norm,
                       uint64_t s);

// LM head [m,k]x[k,v] → cross-entropy. Unfused: the m×v logits (element size `s_logit`) are
// written and read back by the loss; fused (chunked linear-cross-entropy): only the loss (m fp32).
HbmBytes LmHeadCrossEntropyBytes(uint64_t m, uint64_t v, uint64_t k, uint64_t s, uint64_t s_logit);

// Hand-written attention over `bh` batch·heads: bmm(Q[sq,d], Kᵀ) → scale/mask → softmax →
// bmm(P, V[sk,dv]). Unfused: scores written, read and written by the softmax, read by the second
// bmm (4·bh·sq·sk·s); fused (SDPA / flash): Q, K, V, O and a per-row logsumexp (4 B).
HbmBytes AttentionBytes(uint64_t bh, uint64_t sq, uint64_t sk, uint64_t d, uint64_t dv, uint64_t s);

}  // namespace cl

#endif  // ANALYZERS_FUSION_BYTES_H_

// The fusion byte models against hand-computed values, for fp32, bf16 and fp8 element sizes.
#include "analyzers/fusion/bytes.h"

#include "gtest/gtest.h"

namespace cl {
namespace {

TEST(FusionBytesTest, GemmResidRmsNormGemmHeroInEachPrecision) {
  // M=16, d=256, K0=64, K1=64. Unfused = GEMM1 (16·64 + 256·64 + 16·256) + add 3·16·256
  // + norm 3·16·256 + GEMM2 (16·256 + 256·64 + 16·64) = 67584 elements; fused = 47104.
  struct Case {
    uint64_t s, before, after;
  };
  for (const Case c : {Case{4, 270336, 188416},   // fp32: 264 KiB → 184 KiB
                       Case{2, 135168, 94208},    // bf16: 132 KiB → 92 KiB
                       Case{1, 67584, 47104}}) {  // fp8
    const HbmBytes b = GemmResidRmsNormGemmBytes(16, 256, 64, 64, c.s);
    EXPECT_EQ(b.before, c.before) << c.s;
    EXPECT_EQ(b.after, c.after) << c.s;
  }
  // What fusing drops is 5·M·d·s: the h0 and n round trips and the norm's reads.
  const HbmBytes big = GemmResidRmsNormGemmBytes(8192, 4096, 4096, 2 * 14336, 2);
  EXPECT_EQ(big.before - big.after, 5ull * 8192 * 4096 * 2);
}

TEST(FusionBytesTest, GemmBiasActivation) {
  // GEMM 32·64 + 64·128 + 32·128 = 14336; + write/read 32·128 and the 128 bias.
  EXPECT_EQ(GemmBiasActivationBytes(32, 128, 64, true, 2).before, 2 * (14336 + 4096 + 128 + 4096));
  EXPECT_EQ(GemmBiasActivationBytes(32, 128, 64, true, 2).after, 2 * (14336 + 128));
  EXPECT_EQ(GemmBiasActivationBytes(32, 128, 64, false, 1).after, 14336u);
}

TEST(FusionBytesTest, SwiGlu) {
  // ΔB = 4·M·F·s for one 2F-wide GEMM.
  const HbmBytes b = SwiGluBytes(32, 128, 64, 64, false, 4);
  EXPECT_EQ(b.before, 212992u);
  EXPECT_EQ(b.after, 147456u);
  EXPECT_EQ(b.before - b.after, 4u * 32 * 128 * 4);
  // bf16, separate gate and up GEMMs: + M·K·s for reading x twice.
  const HbmBytes sep = SwiGluBytes(32, 128, 64, 64, true, 2);
  EXPECT_EQ(sep.before - sep.after, 4u * 32 * 128 * 2 + 32 * 64 * 2);
}

TEST(FusionBytesTest, LayerNormGemmFp8) {
  const HbmBytes b = LayerNormGemmBytes(32, 64, 128, 1);
  EXPECT_EQ(b.before, 18432u);
  EXPECT_EQ(b.after, 14336u);
}

TEST(FusionBytesTest, RopeLmHeadAttention) {
  EXPECT_EQ(RopeGemmBytes(32, 192, 64, 4096, false, 2).before, 57344u);
  EXPECT_EQ(RopeGemmBytes(32, 192, 64, 4096, false, 2).after, 40960u);
  EXPECT_EQ(RopeGemmBytes(32, 192, 64, 4096, true, 2).before, 73728u);  // two passes
  EXPECT_EQ(LmHeadCrossEntropyBytes(32, 512, 64, 4, 4).before, 270336u);
  EXPECT_EQ(LmHeadCrossEntropyBytes(32, 512, 64, 4, 4).after, 139392u);
  // bf16 weights, fp32 logits: the logits count at 4 bytes.
  EXPECT_EQ(LmHeadCrossEntropyBytes(32, 512, 64, 2, 4).before, 2u * (2048 + 32768) + 131072);
  EXPECT_EQ(AttentionBytes(8, 16, 16, 16, 16, 4).before, 65536u);
  EXPECT_EQ(AttentionBytes(8, 16, 16, 16, 16, 4).after, 33280u);
}

}  // namespace
}  // namespace cl

// The fusion pass on real post-grad graphs: one small torch 2.6 compile per pattern, made by
// tests/analyzers/fusion/make_traces.sh from tests/analyzers/fusion/scenes/fusion_scenes.py and
// imported into tests/golden/fusion/<scene>.cls.json. Each scene must show its pattern, and only
// it.
#include <cstdint>
#include <map>
#include <string>

#include "analyzers/fusion/fusion.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/import_fixture.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

v1::SessionCapture LoadScene(const std::string& scene) {
  const std::string path =
      std::string(CL_SOURCE_DIR) + "/tests/golden/fusion/" + scene + ".cls.json";
  v1::SessionCapture capture;
  absl::StatusOr<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << path;
  if (!text.ok()) return capture;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &capture, options).ok()) << path;
  return capture;
}

v1::FusionSection FusionOf(const std::string& scene) {
  return testing::RunPassOk(FusionPass(), LoadScene(scene)).fusion();
}

struct Expected {
  const char* scene;
  const char* pattern;
  uint64_t m, n, k0, k1;
  uint64_t before, after;  // hand-computed from the scene's sizes (fusion_bytes.h)
};

// M = 32 rows, D = 64, F = 128, V = 512, fp32 (s = 4) unless said.
constexpr Expected kScenes[] = {
    // (M·D + D·D + 8·M·D + D·D + M·D)·4 → (M·D + D·D + 3·M·D + D·D + M·D)·4
    {"resid_rms_norm", "GEMM → +resid → RMSNorm → GEMM", 32, 64, 64, 64, 114688, 73728},
    {"swiglu_fused", "SwiGLU into the gate/up GEMM", 32, 128, 64, 64, 212992, 147456},
    // Separate gate and up GEMMs read x twice: + M·D·4.
    {"swiglu_separate", "SwiGLU into the gate/up GEMM", 32, 128, 64, 64, 221184, 147456},
    // GEMM (M·D + D·F + M·F) + bias F, + 2·M·F for the output round trip.
    {"bias_gelu", "GEMM + bias + activation", 32, 128, 64, 0, 90624, 57856},
    {"layernorm_gemm", "LayerNorm → GEMM", 32, 64, 0, 128, 73728, 57344},
    // QKV GEMM [32,64]x[64,192]; q and k rotated: 2·32·64 elements read and written.
    {"rope", "RoPE into the QKV GEMM", 32, 192, 64, 0, 114688, 81920},
    {"rope_qknorm", "RoPE + QK-norm into the QKV GEMM", 32, 192, 64, 0, 147456, 81920},
    // Logits 32×512 fp32 written and read back; fused: the loss, M·4.
    {"lm_head_ce", "LM head + cross-entropy", 32, 512, 64, 0, 270336, 139392},
    // 8 batch·heads, S = 16, d = 16: scores 4·8·16·16·4 bytes.
    {"manual_attention", "hand-written attention → SDPA", 16, 16, 16, 16, 65536, 33280},
};

TEST(FusionScenesTest, EachSceneShowsItsPatternAndNoOther) {
  for (const Expected& e : kScenes) {
    SCOPED_TRACE(e.scene);
    const v1::FusionSection s = FusionOf(e.scene);
    ASSERT_EQ(s.status(), v1::OK);
    ASSERT_EQ(s.opportunities_size(), 1);
    const v1::FusionOpportunity& o = s.opportunities(0);
    EXPECT_EQ(o.pattern(), e.pattern);
    EXPECT_EQ(o.count(), 1u);
    EXPECT_EQ(o.location().file(),
              "tests/fusion/fusion_scenes.py");  // under /mnt/project, as traced
    EXPECT_EQ(o.shape().m(), e.m);
    EXPECT_EQ(o.shape().n(), e.n);
    EXPECT_EQ(o.shape().k0(), e.k0);
    EXPECT_EQ(o.shape().k1(), e.k1);
    EXPECT_EQ(o.hbm_bytes_before(), e.before);
    EXPECT_EQ(o.hbm_bytes_after(), e.after);
    EXPECT_DOUBLE_EQ(o.speedup_bound(), static_cast<double>(e.before) / e.after);
    EXPECT_FALSE(o.change().empty());
    EXPECT_THAT(o.how(), ::testing::StartsWith("suggest-only — "));
  }
}

// A block's attention output into its MLP: the RMSNorm chain ends in the gate/up GEMM's input and
// SwiGLU starts at its output, so both are shown (the chain once hid SwiGLU by claiming the GEMM).
TEST(FusionScenesTest, TheNormBeforeAGemmAndSwiGluAfterItAreBothShown) {
  const v1::FusionSection s = FusionOf("resid_norm_swiglu");
  ASSERT_EQ(s.status(), v1::OK);
  ASSERT_EQ(s.opportunities_size(), 2);
  std::map<std::string, const v1::FusionOpportunity*> by_pattern;
  for (const v1::FusionOpportunity& o : s.opportunities()) by_pattern[o.pattern()] = &o;
  const v1::FusionOpportunity* chain = by_pattern["GEMM → +resid → RMSNorm → GEMM"];
  const v1::FusionOpportunity* swiglu = by_pattern["SwiGLU into the gate/up GEMM"];
  ASSERT_NE(chain, nullptr);
  ASSERT_NE(swiglu, nullptr);
  // The chain's second GEMM is the gate/up GEMM, 2·F wide: k1 = 256.
  // (M·D + D·D + 8·M·D + D·2F + M·2F)·4 → (M·D + D·D + 3·M·D + D·2F + M·2F)·4
  EXPECT_EQ(chain->shape().k1(), 256u);
  EXPECT_EQ(chain->hbm_bytes_before(), 188416u);
  EXPECT_EQ(chain->hbm_bytes_after(), 147456u);
  // SwiGLU as in swiglu_fused.
  EXPECT_EQ(swiglu->shape().n(), 128u);
  EXPECT_EQ(swiglu->hbm_bytes_before(), 212992u);
  EXPECT_EQ(swiglu->hbm_bytes_after(), 147456u);
}

TEST(FusionScenesTest, GraphWithoutAPatternHasNone) {
  const v1::FusionSection s = FusionOf("plain");
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.opportunities_size(), 0);
}

// fixtures/torch_trace/torch-2.6/prenorm_swiglu-static (scenes/swiglu.py): two Llama-style
// pre-norm blocks (nn.RMSNorm, attention whose output projection is viewed back to (batch, seq,
// dim) before the residual add, a SwiGLU MLP). Every layer has its three chains: the attention
// output GEMM → +resid → RMSNorm → gate/up GEMM, the SwiGLU, and the norm in front of the QKV
// GEMMs (for layer 0 a bare RMSNorm → GEMM; for layer 1 the previous down GEMM → +resid → it).
TEST(FusionScenesTest, APreNormSwiGluBlockHasItsThreeChainsPerLayer) {
  const v1::SessionCapture capture =
      testing::ImportFixtureLog("torch_trace/torch-2.6/prenorm_swiglu-static/trace.log");
  const v1::FusionSection s = testing::RunPassOk(FusionPass(), capture).fusion();
  std::map<std::string, uint32_t> count;
  for (const v1::FusionOpportunity& o : s.opportunities()) {
    count[o.pattern()] += o.count();
    // nn.RMSNorm's nodes sit at torch/nn/functional.py; the chain is where the user's GEMM is.
    EXPECT_EQ(o.location().file(), "/mnt/project/swiglu.py") << o.pattern();
  }
  EXPECT_EQ(count["SwiGLU into the gate/up GEMM"], 2u);
  EXPECT_EQ(count["GEMM → +resid → RMSNorm → GEMM"], 3u);
  EXPECT_EQ(count["RMSNorm → GEMM"], 1u);
}

// fixtures/torch_trace/torch-2.6/prenorm_swiglu-dynamic: the same block under mark_dynamic(x, 0),
// its post-grad sizes s0 and 16*s0, compiled for a batch of 4 (create_symbol's hint). At the hint
// the graph is the static one: the same chains with the same figures, each saying it is evaluated
// at s0 = 4.
TEST(FusionScenesTest, SymbolicSizesMatchAtTheirHints) {
  const v1::FusionSection dynamic =
      testing::RunPassOk(
          FusionPass(),
          testing::ImportFixtureLog("torch_trace/torch-2.6/prenorm_swiglu-dynamic/trace.log"))
          .fusion();
  const v1::FusionSection fixed =
      testing::RunPassOk(FusionPass(), testing::ImportFixtureLog(
                                           "torch_trace/torch-2.6/prenorm_swiglu-static/trace.log"))
          .fusion();
  ASSERT_EQ(dynamic.status(), v1::OK);
  ASSERT_EQ(dynamic.opportunities_size(), fixed.opportunities_size());
  ASSERT_GE(dynamic.opportunities_size(), 3);
  for (int i = 0; i < dynamic.opportunities_size(); ++i) {
    const v1::FusionOpportunity& d = dynamic.opportunities(i);
    const v1::FusionOpportunity& f = fixed.opportunities(i);
    SCOPED_TRACE(f.pattern());
    EXPECT_EQ(d.pattern(), f.pattern());
    EXPECT_EQ(d.count(), f.count());
    EXPECT_EQ(d.shape().SerializeAsString(), f.shape().SerializeAsString());
    EXPECT_EQ(d.hbm_bytes_before(), f.hbm_bytes_before());
    EXPECT_EQ(d.hbm_bytes_after(), f.hbm_bytes_after());
    EXPECT_EQ(d.byte_model(), f.byte_model());
    EXPECT_EQ(d.size_hints(), "s0 = 4");
    EXPECT_EQ(f.size_hints(), "");
  }
  EXPECT_THAT(dynamic.note(), ::testing::HasSubstr("evaluated at the size hints"));
  EXPECT_THAT(fixed.note(), ::testing::Not(::testing::HasSubstr("size hints")));
}

// Without the hints (a log with no create_symbol record, or an unbacked u0) the sizes have no
// value: the section makes no claim (skipped, saying why) rather than report a clean graph.
// fixtures/torch_trace/torch-2.6/sequential: an nn.Sequential MLP, whose lowered graph names only
// torch's compile wrapper (torch/_dynamo/external_utils.py:45) as its source line. The opportunity
// is placed at the user's line that called the compiled module, from the compile's stack.
TEST(FusionScenesTest, ATorchModulesOpportunityIsPlacedWhereTheUserCalledIt) {
  const v1::FusionSection s =
      testing::RunPassOk(FusionPass(),
                         testing::ImportFixtureLog("torch_trace/torch-2.6/sequential/trace.log"))
          .fusion();
  ASSERT_EQ(s.opportunities_size(), 1);
  EXPECT_EQ(s.opportunities(0).location().file(), "/mnt/project/sequential.py");
  EXPECT_EQ(s.opportunities(0).location().line(), 20u);
}

TEST(FusionScenesTest, SizesWithoutAHintAreNotAFusionFreeGraph) {
  v1::SessionCapture capture =
      testing::ImportFixtureLog("torch_trace/torch-2.6/prenorm_swiglu-dynamic/trace.log");
  for (v1::Compile& compile : *capture.mutable_compiles()) compile.clear_symbols();
  const v1::FusionSection s = testing::RunPassOk(FusionPass(), capture).fusion();
  EXPECT_EQ(s.status(), v1::SKIPPED);
  EXPECT_THAT(s.reason(), ::testing::HasSubstr("no size hint"));
}

}  // namespace
}  // namespace cl

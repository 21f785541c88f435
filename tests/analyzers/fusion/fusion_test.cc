// The fusion pass on the real hero capture (examples/hero/head.cls.json, torch 2.6 on CPU) and on
// graphs without the pattern.
#include "analyzers/fusion/fusion.h"

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/captures.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

using ::testing::HasSubstr;

TEST(FusionPassTest, HeroGemmResidRmsNormGemm) {
  const v1::SessionCapture head = testing::LoadHero("head.cls.json");
  const v1::AnalysisReport report = testing::RunPassOk(FusionPass(), head);
  const v1::FusionSection& s = report.fusion();
  ASSERT_EQ(s.status(), v1::OK);
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(s, &json).ok());
  std::printf("hero fusion section: %s\n", json.c_str());
  ASSERT_EQ(s.opportunities_size(), 1);
  const v1::FusionOpportunity& o = s.opportunities(0);
  EXPECT_EQ(o.pattern(), "GEMM → +resid → RMSNorm → GEMM");
  EXPECT_EQ(o.count(), 3u);  // the three blocks of one compile, not four recompiles
  EXPECT_EQ(o.location().file(), "examples/hero_scene.py");
  EXPECT_EQ(o.location().line_start(), 69u);
  EXPECT_EQ(o.location().line_end(), 72u);
  EXPECT_EQ(o.shape().m(), 16u);
  EXPECT_EQ(o.shape().n(), 256u);
  EXPECT_EQ(o.shape().k0(), 64u);
  EXPECT_EQ(o.shape().k1(), 64u);
  EXPECT_EQ(o.hbm_bytes_before(), 264u * 1024);  // GEMM1 84 KiB + add 48 + norm 48 + GEMM2 84
  EXPECT_EQ(o.hbm_bytes_after(), 184u * 1024);
  EXPECT_NEAR(o.speedup_bound(), 264.0 / 184.0, 1e-12);
  EXPECT_EQ(o.change(),
            "fold per-row 1/rms into the second GEMM epilogue — so the normalized activation "
            "never round-trips HBM between the norm and the second GEMM.");
  EXPECT_EQ(o.how(),
            "suggest-only — implement with a fused epilogue kernel (a Triton or CUTLASS "
            "epilogue), or check whether `torch.compile`'s max-autotune already performs it. "
            "This tool reads the graph; it never rewrites it or runs a kernel.");
  EXPECT_THAT(s.note(), HasSubstr("unfuse_bias_add_to_pointwise"));
  EXPECT_EQ(o.byte_model(),
            "unfused: GEMM1 84 KiB + add 48 KiB + norm 48 KiB + GEMM2 84 KiB = 264 KiB; fused: "
            "GEMM1 + resid epilogue 100 KiB + GEMM2 + 1/rms epilogue 84 KiB = 184 KiB (4 B per "
            "element)");
}

// The hero's chain built by hand with each RMSNorm spelling and mm + add instead of addmm: the
// same shapes give the same bytes.
class NormVariantTest : public ::testing::TestWithParam<const char*> {
 protected:
  v1::Node* Add(const std::string& name, const std::string& target,
                std::initializer_list<const char*> shape, std::initializer_list<const char*> args,
                uint32_t line = 0) {
    v1::Node* node = graph_->add_nodes();
    node->set_name(name);
    node->set_op(target.empty() ? "placeholder" : "call_function");
    node->set_target(target.empty() ? name : target);
    node->mutable_meta()->set_dtype("f32");
    for (const char* d : shape) node->mutable_meta()->add_shape(d);
    for (const char* a : args) {
      if (absl::string_view(a).front() == '#') {
        node->add_args()->set_literal(a + 1);
      } else {
        node->add_args()->set_node(a);
      }
    }
    if (line > 0) {
      node->mutable_source()->set_file("/mnt/project/model.py");
      node->mutable_source()->set_line(line);
    }
    return node;
  }
  void SetUp() override {
    capture_.mutable_session()->set_project_root("/mnt/project");
    capture_.add_compiles()->set_id("0/0");
    graph_ = capture_.add_graphs();
    graph_->set_id("0/0/inductor_post_grad_graph");
    graph_->set_compile_id("0/0");
    graph_->set_stage(v1::Graph::POST_GRAD);
  }
  v1::SessionCapture capture_;
  v1::Graph* graph_ = nullptr;
};

TEST_P(NormVariantTest, FindsTheChain) {
  const std::string variant = GetParam();
  Add("x", "", {"16", "64"}, {});
  Add("w1t", "", {"64", "256"}, {});
  Add("resid", "", {"16", "256"}, {});
  Add("gamma", "", {"256"}, {});
  Add("w2t", "", {"256", "64"}, {});
  Add("mm", "aten.mm.default", {"16", "256"}, {"x", "w1t"}, 10);
  Add("h", "aten.add.Tensor", {"16", "256"}, {"mm", "resid"}, 10);
  if (variant == "decomposed") {
    Add("pow", "aten.pow.Tensor_Scalar", {"16", "256"}, {"h", "#2"});
    Add("mean", "aten.mean.dim", {"16", "1"}, {"pow"});
    Add("eps", "aten.add.Tensor", {"16", "1"}, {"mean", "#1e-06"});
    Add("rsqrt", "aten.rsqrt.default", {"16", "1"}, {"eps"});
    Add("scaled", "aten.mul.Tensor", {"16", "256"}, {"h", "rsqrt"});
    Add("n", "aten.mul.Tensor", {"16", "256"}, {"scaled", "gamma"});
  } else if (variant == "rms_norm") {
    Add("n", "aten.rms_norm.default", {"16", "256"}, {"h"});
  } else {
    Add("fused", "aten._fused_rms_norm.default", {}, {"h"});
    Add("n", "getitem", {"16", "256"}, {"fused", "#0"});
  }
  Add("out", "aten.mm.default", {"16", "64"}, {"n", "w2t"}, 12);
  const v1::FusionSection s = testing::RunPassOk(FusionPass(), capture_).fusion();
  ASSERT_EQ(s.opportunities_size(), 1);
  EXPECT_EQ(s.opportunities(0).pattern(), "GEMM → +resid → RMSNorm → GEMM");
  EXPECT_EQ(s.opportunities(0).hbm_bytes_before(), 264u * 1024);
  EXPECT_EQ(s.opportunities(0).hbm_bytes_after(), 184u * 1024);
  EXPECT_EQ(s.opportunities(0).location().file(), "model.py");
  EXPECT_EQ(s.opportunities(0).location().line_start(), 10u);
  EXPECT_EQ(s.opportunities(0).location().line_end(), 12u);
  // mm + add is no addmm rewrite: the note does not claim one.
  EXPECT_THAT(s.note(), ::testing::Not(HasSubstr("unfuse_bias_add_to_pointwise")));
}

INSTANTIATE_TEST_SUITE_P(Spellings, NormVariantTest,
                         ::testing::Values("decomposed", "rms_norm", "fused_rms_norm"));

TEST_F(NormVariantTest, NormWithoutSecondGemmIsNoChain) {
  Add("x", "", {"16", "64"}, {});
  Add("w1t", "", {"64", "256"}, {});
  Add("resid", "", {"16", "256"}, {});
  Add("mm", "aten.mm.default", {"16", "256"}, {"x", "w1t"}, 10);
  Add("h", "aten.add.Tensor", {"16", "256"}, {"mm", "resid"}, 10);
  Add("n", "aten.rms_norm.default", {"16", "256"}, {"h"});
  Add("sum", "aten.sum.default", {}, {"n"});
  EXPECT_EQ(testing::RunPassOk(FusionPass(), capture_).fusion().opportunities_size(), 0);
}

// Captures are untrusted: graphs built so that a matcher meets the same nodes along many paths.
// Each must be searched once per node, not once per path (2^60 paths here).
using UntrustedGraphTest = NormVariantTest;

TEST_F(UntrustedGraphTest, AttentionMaskFromADeepDagOfAddsIsSearchedToABoundedDepth) {
  Add("q", "", {"8", "16", "16"}, {});
  Add("kt", "", {"8", "16", "16"}, {});
  Add("v", "", {"8", "16", "16"}, {});
  Add("mask_0", "", {"8", "16", "16"}, {});
  Add("scores", "aten.bmm.default", {"8", "16", "16"}, {"q", "kt"});
  // mask_i = mask_{i-1} + mask_{i-1}: no bmm below it, reached along 2^i paths.
  std::string mask = "mask_0";
  for (int i = 1; i <= 60; ++i) {
    const std::string next = "mask_" + std::to_string(i);
    Add(next, "aten.add.Tensor", {"8", "16", "16"}, {mask.c_str(), mask.c_str()});
    mask = next;
  }
  // The mask is the first operand, so the search goes through it before it finds the scores.
  Add("masked", "aten.add.Tensor", {"8", "16", "16"}, {mask.c_str(), "scores"});
  Add("probs", "aten._softmax.default", {"8", "16", "16"}, {"masked", "#-1", "#False"});
  Add("out", "aten.bmm.default", {"8", "16", "16"}, {"probs", "v"});
  const v1::FusionSection s = testing::RunPassOk(FusionPass(), capture_).fusion();
  ASSERT_EQ(s.opportunities_size(), 1);
  EXPECT_EQ(s.opportunities(0).pattern(), "hand-written attention → SDPA");
  EXPECT_EQ(s.opportunities(0).shape().m(), 16u);
  EXPECT_EQ(s.opportunities(0).shape().k1(), 16u);
}

TEST_F(UntrustedGraphTest, DeepDagOfAddsIntoTheSoftmaxIsNoAttention) {
  // The audit's shape: a_i = a_{i-1} + a_{i-1}, 60 deep, → softmax → bmm; no scores bmm at all.
  Add("v", "", {"8", "16", "16"}, {});
  Add("a_0", "", {"8", "16", "16"}, {});
  std::string a = "a_0";
  for (int i = 1; i <= 60; ++i) {
    const std::string next = "a_" + std::to_string(i);
    Add(next, "aten.add.Tensor", {"8", "16", "16"}, {a.c_str(), a.c_str()});
    a = next;
  }
  Add("probs", "aten._softmax.default", {"8", "16", "16"}, {a.c_str(), "#-1", "#False"});
  Add("out", "aten.bmm.default", {"8", "16", "16"}, {"probs", "v"});
  const v1::FusionSection s = testing::RunPassOk(FusionPass(), capture_).fusion();
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.opportunities_size(), 0);
}

TEST_F(UntrustedGraphTest, SwiGluDownGemmBehindALatticeOfViewsIsFound) {
  Add("x", "", {"32", "64"}, {});
  Add("wg", "", {"64", "128"}, {});
  Add("wu", "", {"64", "128"}, {});
  Add("wd", "", {"128", "64"}, {});
  Add("gate", "aten.mm.default", {"32", "128"}, {"x", "wg"});
  Add("up", "aten.mm.default", {"32", "128"}, {"x", "wu"});
  Add("sig", "aten.sigmoid.default", {"32", "128"}, {"gate"});
  Add("silu", "aten.mul.Tensor", {"32", "128"}, {"gate", "sig"});
  Add("h", "aten.mul.Tensor", {"32", "128"}, {"silu", "up"});
  // Views that name two nodes each (a list argument can): v_i and u_i both read v_{i-1} and
  // u_{i-1}, so v_60 is 2^60 view paths below h.
  std::string v = "h", u = "h";
  for (int i = 1; i <= 60; ++i) {
    const std::string nv = "v_" + std::to_string(i), nu = "u_" + std::to_string(i);
    Add(nv, "aten.view.default", {"32", "128"}, {v.c_str(), u.c_str()});
    Add(nu, "aten.view.default", {"32", "128"}, {u.c_str(), v.c_str()});
    v = nv;
    u = nu;
  }
  Add("down", "aten.mm.default", {"32", "64"}, {v.c_str(), "wd"});
  const v1::FusionSection s = testing::RunPassOk(FusionPass(), capture_).fusion();
  ASSERT_EQ(s.opportunities_size(), 1);
  EXPECT_EQ(s.opportunities(0).pattern(), "SwiGLU into the gate/up GEMM");
  EXPECT_EQ(s.opportunities(0).shape().k1(), 64u);            // the down GEMM was found
  EXPECT_EQ(s.opportunities(0).hbm_bytes_before(), 221184u);  // as fusion_scenes' swiglu_separate
}

TEST(FusionPassTest, ChainWithoutNormIsNoOpportunity) {
  v1::SessionCapture capture;
  capture.add_compiles()->set_id("0/0");
  v1::Graph* graph = testing::AddChainGraph(capture, "0/0/inductor_post_grad_graph", 6);
  graph->set_compile_id("0/0");
  graph->set_stage(v1::Graph::POST_GRAD);
  // The chain's batch is symbolic (s0): the pass makes no claim about such a graph.
  EXPECT_EQ(testing::RunPassOk(FusionPass(), capture).fusion().status(), v1::SKIPPED);
  for (v1::Node& node : *graph->mutable_nodes()) {
    for (std::string& dim : *node.mutable_meta()->mutable_shape()) {
      if (dim == "s0") dim = "16";
    }
  }
  const v1::AnalysisReport report = testing::RunPassOk(FusionPass(), capture);
  EXPECT_EQ(report.fusion().status(), v1::OK);
  EXPECT_EQ(report.fusion().opportunities_size(), 0);
}

TEST(FusionPassTest, NoPostGradGraphIsSkipped) {
  v1::SessionCapture capture;
  capture.add_compiles()->set_id("0/0");
  const v1::AnalysisReport report = testing::RunPassOk(FusionPass(), capture);
  EXPECT_EQ(report.fusion().status(), v1::SKIPPED);
  EXPECT_THAT(report.fusion().reason(), HasSubstr("no post-grad graph in the capture"));
  // The FX graph cache served the graph (a warm cache): said so, with how to log them.
  {
    v1::SessionCapture warm = capture;
    v1::CacheEvent* hit = warm.mutable_compiles(0)->add_cache_events();
    hit->set_cache("fx_graph");
    hit->set_status("hit");
    EXPECT_THAT(
        testing::RunPassOk(FusionPass(), warm).fusion().reason(),
        HasSubstr("the FX graph cache served 1 graph, and Inductor logs a post-grad graph "
                  "only for one it compiles (run with TORCHINDUCTOR_FORCE_DISABLE_CACHES=1"));
  }
  // Another backend compiled the graph (backend="aot_eager"): torch 2.6's metrics give it backend
  // time and Inductor none.
  {
    v1::SessionCapture aot_eager = capture;
    v1::Compile* c = aot_eager.mutable_compiles(0);
    c->set_status(v1::Compile::OK);
    auto& fields = *c->mutable_metrics()->mutable_fields();
    fields["backend_compile_time_s"].set_number_value(1.819627);
    fields["inductor_compile_time_s"].set_null_value(google::protobuf::NULL_VALUE);
    EXPECT_THAT(testing::RunPassOk(FusionPass(), aot_eager).fusion().reason(),
                HasSubstr("a backend other than Inductor compiled the graphs"));
    // torch.export traced every compile (torch 2.6 enters Dynamo from torch/export/_trace.py):
    // nothing lowered the graphs, which is no other backend's doing.
    v1::SessionCapture exported = aot_eager;
    for (v1::Compile& e : *exported.mutable_compiles()) {
      e.add_stack()->set_file("/usr/lib/python3/dist-packages/torch/export/_trace.py");
    }
    EXPECT_THAT(testing::RunPassOk(FusionPass(), exported).fusion().reason(),
                HasSubstr("torch.export traced the session's graphs, and nothing lowered them"));
    // One compile that spent time in Inductor says Inductor ran (its graph went unlogged).
    v1::Compile* inductor = aot_eager.add_compiles();
    *inductor = *c;
    inductor->set_id("1/0");
    (*inductor->mutable_metrics()->mutable_fields())["inductor_compile_time_s"].set_number_value(
        0.5);
    EXPECT_THAT(testing::RunPassOk(FusionPass(), aot_eager).fusion().reason(),
                Not(HasSubstr("other than Inductor")));
  }
  // Only the copy torch logged before its passes (tlparse's vllm_post_grad_diff.log): said so.
  v1::Graph* before = testing::AddChainGraph(capture, "0/0/before_post_grad_graph", 6);
  before->set_compile_id("0/0");
  before->set_stage(v1::Graph::POST_GRAD);
  EXPECT_THAT(testing::RunPassOk(FusionPass(), capture).fusion().reason(),
              HasSubstr("the log holds only the copies torch logged before its post-grad passes"));
}

TEST(FusionPassTest, Cancelled) {
  EXPECT_TRUE(absl::IsCancelled(
      testing::RunPassCancelled(FusionPass(), testing::LoadHero("head.cls.json"))));
}

}  // namespace
}  // namespace cl

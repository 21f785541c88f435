// The divergence pass on captures written by hand: the first divergent layer in execution order
// (a failed tolerance, NaN or Inf), a clean check, and the severity the bisect's culprit implies.
#include "analyzers/runtime/divergence.h"

#include <cmath>
#include <string>

#include "analyzers/registry.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::testing::ElementsAre;

v1::SessionCapture Capture(const std::string& divergence) {
  v1::SessionCapture capture;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(divergence, &capture)) << divergence;
  return capture;
}

v1::DivergenceSection RunDivergence(const v1::SessionCapture& capture) {
  return ::cl::testing::RunPassOk(DivergencePass(), capture).divergence();
}

// The hero's check: blocks.0.norm diverges (its custom post-grad pass), blocks.1.norm inherits it.
// Layers are listed out of order; `order` is what counts.
constexpr char kHero[] = R"pb(
  divergence {
    reference: "eager"
    atol: 1e-5
    rtol: 1e-5
    torch_version: "2.6.0"
    layers {
      name: "blocks.1.norm"
      order: 1
      dtype: "f32"
      max_abs_diff: 0.001
      diverged: true
      accumulated_max_abs_diff: 9.5
      tolerance: 1e-4
      noise_floor: 0
    }
    layers {
      name: "blocks.0.up"
      order: 0
      dtype: "f32"
      max_abs_diff: 1e-7
      accumulated_max_abs_diff: 1e-7
      tolerance: 1e-4
    }
    layers {
      name: "blocks.0.norm"
      order: 0
      dtype: "f32"
      max_abs_diff: 5.033
      max_rel_diff: 2.0
      diverged: true
      accumulated_max_abs_diff: 5.1
      tolerance: 1e-4
      noise_floor: 1e-9
    }
    bisect {
      culprit { kind: PASS name: "post_grad_custom_post_pass" confidence: 1 }
      steps { toggle: "backend=eager" diverged: false }
      steps { toggle: "backend=aot_eager" diverged: false }
      steps { toggle: "post_grad_custom_post_pass=None" diverged: false detail: "verdict flipped" }
    }
  }
)pb";

TEST(DivergenceTest, SkippedWithoutACheck) {
  const v1::DivergenceSection s = RunDivergence(v1::SessionCapture());
  EXPECT_EQ(s.status(), v1::SKIPPED);
  EXPECT_EQ(s.reason(), "no divergence check in this capture (run compile_lens.check_divergence)");
}

TEST(DivergenceTest, FirstDivergentLayerInExecutionOrder) {
  const v1::DivergenceSection s = RunDivergence(Capture(kHero));
  EXPECT_EQ(s.status(), v1::OK);
  // blocks.0.up (order 0, listed first of the order-0 layers) passed; blocks.0.norm is next.
  EXPECT_EQ(s.first_divergent_layer(), "blocks.0.norm");
  EXPECT_EQ(s.max_abs_diff(), 5.033);
  EXPECT_EQ(s.accumulated_max_abs_diff(), 5.1);
  EXPECT_EQ(s.tolerance(), 1e-4);
  EXPECT_EQ(s.noise_floor(), 1e-9);
  EXPECT_EQ(s.layers_compared(), 3u);
  EXPECT_EQ(s.cause().kind(), v1::BisectCulprit::PASS);
  EXPECT_EQ(s.cause().name(), "post_grad_custom_post_pass");
  EXPECT_EQ(s.cause().confidence(), 1.0);
  EXPECT_EQ(s.severity(), v1::DivergenceSection::ERROR);
  ASSERT_EQ(s.steps_size(), 3);
  EXPECT_EQ(s.steps(2).toggle(), "post_grad_custom_post_pass=None");
  EXPECT_EQ(s.steps(2).detail(), "verdict flipped");
}

TEST(DivergenceTest, ANanOrInfLayerDivergesWhateverItsVerdict) {
  v1::SessionCapture capture = Capture(R"pb(
    divergence {
      layers { name: "embed" order: 0 max_abs_diff: 0 tolerance: 1e-3 }
      layers { name: "attn" order: 1 max_abs_diff: nan nan: true tolerance: 1e-3 }
      layers { name: "mlp" order: 2 max_abs_diff: 3 diverged: true tolerance: 1e-3 }
    }
  )pb");
  v1::DivergenceSection s = RunDivergence(capture);
  EXPECT_EQ(s.first_divergent_layer(), "attn");
  EXPECT_TRUE(std::isnan(s.max_abs_diff()));
  EXPECT_EQ(s.layers_compared(), 3u);
  // No bisect ran: a real divergence, not attributed.
  EXPECT_EQ(s.severity(), v1::DivergenceSection::ERROR);
  EXPECT_FALSE(s.has_cause());

  capture.mutable_divergence()->mutable_layers(1)->set_nan(false);
  capture.mutable_divergence()->mutable_layers(1)->set_inf(true);
  EXPECT_EQ(RunDivergence(capture).first_divergent_layer(), "attn");
}

TEST(DivergenceTest, CleanCheckNamesNoLayerAndNoCause) {
  v1::SessionCapture capture = Capture(kHero);
  for (v1::DivergenceLayer& layer : *capture.mutable_divergence()->mutable_layers())
    layer.set_diverged(false);
  const v1::DivergenceSection s = RunDivergence(capture);
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.first_divergent_layer(), "");
  EXPECT_EQ(s.layers_compared(), 3u);
  EXPECT_EQ(s.max_abs_diff(), 0);
  EXPECT_FALSE(s.has_cause());  // the bisect's culprit explains nothing when nothing diverged
  EXPECT_EQ(s.severity(), v1::DivergenceSection::SEVERITY_UNSPECIFIED);

  const v1::DivergenceSection empty = RunDivergence(Capture("divergence { reference: \"eager\" }"));
  EXPECT_EQ(empty.status(), v1::OK);
  EXPECT_EQ(empty.layers_compared(), 0u);
  EXPECT_EQ(empty.first_divergent_layer(), "");
}

TEST(DivergenceTest, SeverityFollowsTheCulprit) {
  struct Case {
    v1::BisectCulprit::Kind kind;
    const char* name;
    v1::DivergenceSection::Severity severity;
  };
  const Case cases[] = {
      {v1::BisectCulprit::CONFIG, "fallback_random", v1::DivergenceSection::INFO},
      {v1::BisectCulprit::CONFIG, "emulate_precision_casts", v1::DivergenceSection::LOW},
      {v1::BisectCulprit::CONFIG, "max_autotune", v1::DivergenceSection::ERROR},
      {v1::BisectCulprit::LOWERING, "fallback_random", v1::DivergenceSection::ERROR},
      {v1::BisectCulprit::DECOMPOSITION, "aten.var_mean", v1::DivergenceSection::ERROR},
  };
  for (const Case& c : cases) {
    v1::SessionCapture capture = Capture(kHero);
    v1::BisectCulprit* culprit = capture.mutable_divergence()->mutable_bisect()->mutable_culprit();
    culprit->set_kind(c.kind);
    culprit->set_name(c.name);
    const v1::DivergenceSection s = RunDivergence(capture);
    EXPECT_EQ(s.severity(), c.severity) << c.name;
    EXPECT_EQ(s.cause().name(), c.name);
  }
}

TEST(DivergenceTest, RegisteredAfterCacheStability) {
  const Pass* pass = FindPass("divergence");
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->Section(), "divergence");
  EXPECT_EQ(FindPass("cache_stability")->Section(), "cache_stability");
  std::vector<std::string> sections;
  for (const Pass* p : RegisteredPasses()) sections.emplace_back(p->Section());
  EXPECT_THAT(sections, ElementsAre("failures", "ranks", "ir_diff", "recompile", "compile_time",
                                    "cache_stability", "divergence", "lint", "fusion", "roofline"));
}

}  // namespace
}  // namespace cl

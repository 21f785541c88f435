// The cache-stability and divergence passes on captures the capture package made for real, in the
// torch sandbox (PyTorch 2.6, CPU Inductor): tests/fixtures/python/*.log come from the scenes in
// tests/python/scenes (regenerate with `tests/python/run_sandbox_tests.sh tests/fixtures/python`),
// and the hero captures from examples/hero/run_traces.sh.
#include <string>

#include "absl/strings/str_cat.h"
#include "analyzers/runtime/cache_stability.h"
#include "analyzers/runtime/divergence.h"
#include "capture/torch_trace/importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/captures.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::testing::Gt;
using ::testing::HasSubstr;

v1::SessionCapture Fixture(const std::string& name) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> capture = ImportTraceFile(
      absl::StrCat(CL_SOURCE_DIR, "/tests/fixtures/python/", name, ".log"), options);
  EXPECT_TRUE(capture.ok()) << capture.status();
  return capture.ok() ? *std::move(capture) : v1::SessionCapture();
}

v1::CacheStabilitySection CacheStability(const v1::SessionCapture& capture) {
  return testing::RunPassOk(CacheStabilityPass(), capture).cache_stability();
}

v1::DivergenceSection Divergence(const v1::SessionCapture& capture) {
  return testing::RunPassOk(DivergencePass(), capture).divergence();
}

TEST(RuntimeFixturesTest, AHookAddedAfterCompileIsStale) {
  const v1::SessionCapture capture = Fixture("stale_hook");
  ASSERT_EQ(capture.iterations_size(), 4);
  ASSERT_EQ(capture.sources_size(), 1);  // the scene, embedded by record_sources()
  EXPECT_THAT(capture.sources(0).text(), HasSubstr("register_forward_hook(amplify)"));
  const v1::CacheStabilitySection s = CacheStability(capture);
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.iterations(), 4u);
  EXPECT_EQ(s.eager_checks(), 4u);
  ASSERT_EQ(s.findings_size(), 1);
  const v1::CacheStabilityFinding& f = s.findings(0);
  EXPECT_EQ(f.verdict(), v1::CacheStabilityFinding::STALE);
  EXPECT_EQ(f.state_key(), "model.inner._forward_hooks");
  EXPECT_EQ(f.iteration(), 2u);
  EXPECT_EQ(f.compile_id(), capture.iterations(0).compile_id());
  EXPECT_EQ(f.before(), "0 hook(s)");
  EXPECT_EQ(f.after(), "1 hook(s): amplify");
  EXPECT_EQ(f.confidence(), 1.0);
  EXPECT_THAT(f.evidence(), HasSubstr("also at 1 later iteration"));
}

TEST(RuntimeFixturesTest, AGuardedGlobalRecompilesAndIsNoFinding) {
  const v1::CacheStabilitySection s = CacheStability(Fixture("guarded_global"));
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.findings_size(), 0);
  EXPECT_EQ(s.benign_changes(), 1u);  // globals.activation, followed by its recompile
}

TEST(RuntimeFixturesTest, AWrongCustomPassIsTheCauseOfTheFirstDivergentLayer) {
  const v1::SessionCapture capture = Fixture("divergence_pass");
  EXPECT_EQ(capture.compiles_size(), 0);  // the check's own compiles stay out of the log
  const v1::DivergenceSection s = Divergence(capture);
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.first_divergent_layer(), "norm");
  EXPECT_EQ(s.layers_compared(), 2u);
  EXPECT_THAT(s.max_abs_diff(), Gt(1.0));
  EXPECT_EQ(s.cause().kind(), v1::BisectCulprit::PASS);
  EXPECT_EQ(s.cause().name(), "post_grad_custom_post_pass");
  EXPECT_EQ(s.severity(), v1::DivergenceSection::ERROR);
  ASSERT_GT(s.steps_size(), 0);
  EXPECT_EQ(s.steps(s.steps_size() - 1).toggle(), "post_grad_custom_post_pass=None");
  EXPECT_FALSE(s.steps(s.steps_size() - 1).diverged());
}

TEST(RuntimeFixturesTest, ACleanModelHasNoDivergence) {
  const v1::DivergenceSection s = Divergence(Fixture("divergence_clean"));
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.first_divergent_layer(), "");
  EXPECT_EQ(s.layers_compared(), 5u);
  EXPECT_EQ(s.cause().name(), "");
}

TEST(RuntimeFixturesTest, AnRngOnlyDifferenceIsFallbackRandomAtInfoSeverity) {
  const v1::DivergenceSection s = Divergence(Fixture("divergence_rng"));
  EXPECT_EQ(s.first_divergent_layer(), "<root>");
  EXPECT_EQ(s.cause().kind(), v1::BisectCulprit::CONFIG);
  EXPECT_EQ(s.cause().name(), "fallback_random");
  EXPECT_EQ(s.severity(), v1::DivergenceSection::INFO);
}

// What the hero report's two sections say (docs/design.md §5.3–5.4), from the real hero run.
TEST(RuntimeFixturesTest, TheHero) {
  const v1::SessionCapture head = testing::LoadHero("head.cls.json");
  const v1::DivergenceSection d = Divergence(head);
  EXPECT_EQ(d.first_divergent_layer(), "blocks.0.norm");
  EXPECT_EQ(d.layers_compared(), 2u);
  EXPECT_THAT(d.max_abs_diff(), Gt(1.0));
  EXPECT_EQ(d.cause().kind(), v1::BisectCulprit::PASS);
  EXPECT_EQ(d.cause().name(), "post_grad_custom_post_pass");
  const v1::CacheStabilitySection c = CacheStability(head);
  EXPECT_EQ(c.status(), v1::OK);
  EXPECT_EQ(c.iterations(), 4u);
  EXPECT_EQ(c.findings_size(), 0);
  // Base: no custom pass, so nothing diverges.
  EXPECT_EQ(Divergence(testing::LoadHero("base.cls.json")).first_divergent_layer(), "");
}

}  // namespace
}  // namespace cl

// The cache-stability pass (docs/torch-semantics.md §4.3) on captures written by hand: stale,
// suspicious and benign changes, noise, and the guard-source mapping it relies on.
#include "analyzers/runtime/cache_stability.h"

#include <string>

#include "analyzers/recompile/guard_sources.h"
#include "analyzers/registry.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testing/run_pass.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::cl::testing::StatusIs;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Frame 0 (`forward`) compiled twice: 0/0 with a guard tree, 0/1 with none recorded.
constexpr char kCompiles[] = R"pb(
  frames { id: 0 name: "forward" file: "/p/m.py" line: 10 }
  compiles {
    id: "0/0"
    frame_id: 0
    frame_compile_id: 0
    guarded_sources: "GLOBAL_STATE"
    guarded_sources: "L['x']"
    guarded_sources: "L['self']"
    guarded_sources: "L['self']._modules['blocks']._modules['0']._modules['up']._parameters['weight']"
    guarded_sources: "G['scale']"
  }
  compiles { id: "0/1" frame_id: 0 frame_compile_id: 1 }
)pb";

v1::SessionCapture Capture(const std::string& iterations) {
  v1::SessionCapture capture;
  EXPECT_TRUE(
      google::protobuf::TextFormat::ParseFromString(std::string(kCompiles) + iterations, &capture))
      << iterations;
  return capture;
}

v1::CacheStabilitySection RunCacheStability(const v1::SessionCapture& capture) {
  return ::cl::testing::RunPassOk(CacheStabilityPass(), capture).cache_stability();
}

TEST(CacheStabilityTest, SkippedWithoutIterations) {
  const v1::CacheStabilitySection s = RunCacheStability(Capture(""));
  EXPECT_EQ(s.status(), v1::SKIPPED);
  EXPECT_EQ(s.reason(), "no iterations tracked (wrap the compiled model with compile_lens.track)");
}

// A hook added after the compile, no recompile, and the output diverged: the hero of §4.
TEST(CacheStabilityTest, OneChangedKeyAndADivergedOutputIsStale) {
  const v1::CacheStabilitySection s = RunCacheStability(Capture(R"pb(
    iterations {
      index: 0
      frame_id: 0
      compile_id: "0/0"
      recompiled: true
      output_diverged: false
      output_max_abs_diff: 0
      state { key: "model.inner._forward_hooks" value: "0 hook(s)" }
      state { key: "rng.cpu" value: "sha1:a" }
    }
    iterations {
      index: 1
      frame_id: 0
      compile_id: "0/0"
      output_diverged: true
      output_max_abs_diff: 7.178
      state { key: "model.inner._forward_hooks" value: "1 hook(s): <lambda>" }
      state { key: "rng.cpu" value: "sha1:b" }
    }
  )pb"));
  EXPECT_EQ(s.status(), v1::OK);
  ASSERT_EQ(s.findings_size(), 1);
  const v1::CacheStabilityFinding& f = s.findings(0);
  EXPECT_EQ(f.verdict(), v1::CacheStabilityFinding::STALE);
  EXPECT_EQ(f.state_key(), "model.inner._forward_hooks");
  EXPECT_EQ(f.iteration(), 1u);
  EXPECT_EQ(f.compile_id(), "0/0");
  EXPECT_EQ(f.frame(), "forward");
  EXPECT_EQ(f.before(), "0 hook(s)");
  EXPECT_EQ(f.after(), "1 hook(s): <lambda>");
  EXPECT_THAT(f.confidence(), DoubleEq(1.0));
  EXPECT_EQ(f.evidence(),
            "model.inner._forward_hooks: 0 hook(s) → 1 hook(s): <lambda>; no recompile; output "
            "diverged from eager by 7.178e0 (entry 0/0 matched eager when compiled)");
  EXPECT_THAT(s.noisy_keys(), ElementsAre("rng.cpu"));
  EXPECT_EQ(s.iterations(), 2u);
  EXPECT_EQ(s.eager_checks(), 2u);
  EXPECT_EQ(s.benign_changes(), 0u);
}

TEST(CacheStabilityTest, TwoChangedKeysShareTheBlame) {
  const v1::CacheStabilitySection s = RunCacheStability(Capture(R"pb(
    iterations {
      index: 0
      frame_id: 0
      compile_id: "0/0"
      recompiled: true
      output_diverged: false
      state { key: "globals.scale" value: "4" }
      state { key: "model.lora.disabled" value: "False" }
    }
    iterations {
      index: 1
      frame_id: 0
      compile_id: "0/0"
      output_diverged: true
      state { key: "globals.scale" value: "40" }
      state { key: "model.lora.disabled" value: "True" }
    }
  )pb"));
  ASSERT_EQ(s.findings_size(), 2);
  EXPECT_EQ(s.findings(0).state_key(), "globals.scale");
  EXPECT_EQ(s.findings(1).state_key(), "model.lora.disabled");
  for (const v1::CacheStabilityFinding& f : s.findings()) {
    EXPECT_EQ(f.verdict(), v1::CacheStabilityFinding::STALE);
    EXPECT_THAT(f.confidence(), DoubleEq(0.5));
    // No max abs diff recorded: the verdict alone.
    EXPECT_THAT(f.evidence(), HasSubstr("; no recompile; output diverged from eager (entry 0/0"));
  }
}

TEST(CacheStabilityTest, ARepeatedStaleKeyIsReportedOnceWithItsRepeats) {
  const v1::CacheStabilitySection s = RunCacheStability(Capture(R"pb(
    iterations {
      index: 0
      frame_id: 0
      compile_id: "0/0"
      recompiled: true
      state { key: "globals.scale" value: "4" }
    }
    iterations {
      index: 1
      frame_id: 0
      compile_id: "0/0"
      output_diverged: true
      state { key: "globals.scale" value: "40" }
    }
    iterations {
      index: 2
      frame_id: 0
      compile_id: "0/0"
      output_diverged: true
      state { key: "globals.scale" value: "40" }
    }
    iterations {
      index: 3
      frame_id: 0
      compile_id: "0/0"
      output_diverged: true
      state { key: "globals.scale" value: "41" }
    }
  )pb"));
  ASSERT_EQ(s.findings_size(), 1);
  EXPECT_EQ(s.findings(0).iteration(), 1u);
  // The compile iteration had no eager check: the evidence says so rather than claim a match.
  EXPECT_EQ(s.findings(0).evidence(),
            "globals.scale: 4 → 40; no recompile; output diverged from eager (entry 0/0 had no "
            "eager check when compiled); also at 2 later iterations");
  EXPECT_EQ(s.eager_checks(), 3u);
}

TEST(CacheStabilityTest, AKeyOnOneSideOnlyIsAChangeShownAsADash) {
  const v1::CacheStabilitySection s = RunCacheStability(Capture(R"pb(
    iterations {
      index: 0
      frame_id: 0
      compile_id: "0/0"
      recompiled: true
      output_diverged: false
      state { key: "model.a" value: "1" }
    }
    iterations {
      index: 1
      frame_id: 0
      compile_id: "0/0"
      output_diverged: true
      state { key: "model.b" value: "2" }
    }
  )pb"));
  ASSERT_EQ(s.findings_size(), 2);
  EXPECT_EQ(s.findings(0).state_key(), "model.a");
  EXPECT_EQ(s.findings(0).after(), "");
  EXPECT_THAT(s.findings(0).evidence(), HasSubstr("model.a: 1 → —; no recompile"));
  EXPECT_EQ(s.findings(1).before(), "");
  EXPECT_THAT(s.findings(1).evidence(), HasSubstr("model.b: — → 2; no recompile"));
}

TEST(CacheStabilityTest, NoFindingWhenTheEagerCheckPassedOrTheEntryWasWrongFromTheStart) {
  // Iteration 1: the state changed but the output still matched eager.
  // Frame 1: the entry already diverged when compiled; that is the divergence section's business.
  v1::SessionCapture capture = Capture(R"pb(
    frames { id: 1 name: "step" }
    compiles { id: "1/0" frame_id: 1 frame_compile_id: 0 guarded_sources: "L['x']" }
    iterations {
      index: 0
      frame_id: 0
      compile_id: "0/0"
      recompiled: true
      output_diverged: false
      state { key: "model.lora.disabled" value: "False" }
    }
    iterations {
      index: 1
      frame_id: 0
      compile_id: "0/0"
      output_diverged: false
      state { key: "model.lora.disabled" value: "True" }
    }
    iterations {
      index: 2
      frame_id: 1
      compile_id: "1/0"
      recompiled: true
      output_diverged: true
      state { key: "globals.k" value: "1" }
    }
    iterations {
      index: 3
      frame_id: 1
      compile_id: "1/0"
      output_diverged: true
      state { key: "globals.k" value: "2" }
    }
  )pb");
  const v1::CacheStabilitySection s = RunCacheStability(capture);
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_THAT(s.findings(), ::testing::IsEmpty());
  EXPECT_EQ(s.eager_checks(), 4u);
}

TEST(CacheStabilityTest, AnUnguardedChangeWithoutAnEagerCheckIsSuspicious) {
  const v1::CacheStabilitySection s = RunCacheStability(Capture(R"pb(
    iterations {
      index: 0
      frame_id: 0
      compile_id: "0/0"
      recompiled: true
      state { key: "torch.grad_mode" value: "True" }
      state { key: "torch.autocast.cpu" value: "(False, 'torch.bfloat16')" }
      state { key: "model.blocks.0.up.weight" value: "(64, 64) f32 id@1" }
      state { key: "globals.scale" value: "4" }
      state { key: "inputs.x" value: "a" }
      state { key: "model.lora.disabled" value: "False" }
      state { key: "torch.backends.cudnn.allow_tf32" value: "True" }
    }
    iterations {
      index: 1
      frame_id: 0
      compile_id: "0/0"
      state { key: "torch.grad_mode" value: "False" }
      state { key: "torch.autocast.cpu" value: "(True, 'torch.bfloat16')" }
      state { key: "model.blocks.0.up.weight" value: "(64, 64) f32 id@2" }
      state { key: "globals.scale" value: "40" }
      state { key: "inputs.x" value: "b" }
      state { key: "model.lora.disabled" value: "True" }
      state { key: "torch.backends.cudnn.allow_tf32" value: "False" }
    }
  )pb"));
  // Guarded: grad mode and autocast (GLOBAL_STATE), the weight, G['scale'] and L['x'].
  ASSERT_EQ(s.findings_size(), 2);
  EXPECT_EQ(s.findings(0).state_key(), "model.lora.disabled");
  EXPECT_EQ(s.findings(1).state_key(), "torch.backends.cudnn.allow_tf32");
  for (const v1::CacheStabilityFinding& f : s.findings()) {
    EXPECT_EQ(f.verdict(), v1::CacheStabilityFinding::SUSPICIOUS);
    EXPECT_THAT(f.confidence(), DoubleEq(1.0 / 7));
    EXPECT_THAT(
        f.evidence(),
        HasSubstr("; no recompile; no guard of entry 0/0 reads it, and no eager check ran"));
  }
  EXPECT_EQ(s.eager_checks(), 0u);
}

TEST(CacheStabilityTest, NoGuardsRecordedMeansNoSuspicion) {
  // 0/1 has no guarded_sources: whether the change was guarded cannot be told.
  const v1::CacheStabilitySection s = RunCacheStability(Capture(R"pb(
    iterations {
      index: 0
      frame_id: 0
      compile_id: "0/1"
      recompiled: true
      state { key: "model.lora.disabled" value: "False" }
    }
    iterations {
      index: 1
      frame_id: 0
      compile_id: "0/1"
      state { key: "model.lora.disabled" value: "True" }
    }
  )pb"));
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_THAT(s.findings(), ::testing::IsEmpty());
}

TEST(CacheStabilityTest, AChangeARecompileFollowedIsBenign) {
  const v1::CacheStabilitySection s = RunCacheStability(Capture(R"pb(
    iterations {
      index: 0
      frame_id: 0
      compile_id: "0/0"
      recompiled: true
      output_diverged: false
      state { key: "inputs.x" value: "(16, 64)" }
      state { key: "model.training" value: "True" }
    }
    iterations {
      index: 1
      frame_id: 0
      compile_id: "0/1"
      recompiled: true
      output_diverged: false
      state { key: "inputs.x" value: "(32, 64)" }
      state { key: "model.training" value: "False" }
    }
    iterations {
      index: 2
      frame_id: 0
      compile_id: "0/0"
      output_diverged: false
      state { key: "inputs.x" value: "(16, 64)" }
      state { key: "model.training" value: "True" }
    }
  )pb"));
  EXPECT_THAT(s.findings(), ::testing::IsEmpty());
  EXPECT_EQ(s.benign_changes(), 2u);
  EXPECT_EQ(s.iterations(), 3u);
}

TEST(CacheStabilityTest, NoisyKeysAreContextNeverFindings) {
  const v1::CacheStabilitySection s = RunCacheStability(Capture(R"pb(
    iterations {
      index: 0
      frame_id: 0
      compile_id: "0/0"
      recompiled: true
      output_diverged: false
      state { key: "rng.cpu" value: "a" }
      state { key: "model.w._version" value: "0" }
      state { key: "optimizer.step" value: "0" }
      state { key: "trainer.step_count_total" value: "0" }
    }
    iterations {
      index: 1
      frame_id: 0
      compile_id: "0/0"
      output_diverged: true
      state { key: "rng.cpu" value: "b" }
      state { key: "model.w._version" value: "1" }
      state { key: "optimizer.step" value: "1" }
      state { key: "trainer.step_count_total" value: "1" }
    }
    iterations {
      index: 2
      frame_id: 0
      compile_id: "0/0"
      output_diverged: true
      state { key: "rng.cpu" value: "c" }
      state { key: "model.w._version" value: "2" }
      state { key: "optimizer.step" value: "2" }
      state { key: "trainer.step_count_total" value: "2" }
    }
  )pb"));
  EXPECT_THAT(s.findings(), ::testing::IsEmpty());
  EXPECT_THAT(s.noisy_keys(), ElementsAre("model.w._version", "optimizer.step", "rng.cpu",
                                          "trainer.step_count_total"));
}

TEST(CacheStabilityTest, TheBaselineIsTheFirstServedCallWhenTheCompileWasNotTracked) {
  // Tracking started after 0/0 was compiled: its first tracked call is the baseline.
  const v1::CacheStabilitySection s = RunCacheStability(Capture(R"pb(
    iterations {
      index: 4
      frame_id: 0
      compile_id: "0/0"
      output_diverged: false
      state { key: "globals.scale" value: "4" }
    }
    iterations {
      index: 5
      frame_id: 0
      compile_id: "0/0"
      output_diverged: true
      state { key: "globals.scale" value: "40" }
    }
  )pb"));
  ASSERT_EQ(s.findings_size(), 1);
  EXPECT_EQ(s.findings(0).iteration(), 5u);
  EXPECT_EQ(s.findings(0).before(), "4");
}

TEST(CacheStabilityTest, StaleFindingsComeFirstThenByIteration) {
  // Iterations arrive out of order in the capture; the pass orders them by index.
  const v1::CacheStabilitySection s = RunCacheStability(Capture(R"pb(
    iterations {
      index: 3
      frame_id: 0
      compile_id: "0/0"
      output_diverged: true
      state { key: "globals.scale" value: "40" }
      state { key: "model.mode" value: "a" }
    }
    iterations {
      index: 0
      frame_id: 0
      compile_id: "0/0"
      recompiled: true
      output_diverged: false
      state { key: "globals.scale" value: "4" }
      state { key: "model.mode" value: "a" }
    }
    iterations {
      index: 1
      frame_id: 0
      compile_id: "0/0"
      state { key: "globals.scale" value: "4" }
      state { key: "model.mode" value: "b" }
    }
  )pb"));
  ASSERT_EQ(s.findings_size(), 2);
  EXPECT_EQ(s.findings(0).verdict(), v1::CacheStabilityFinding::STALE);
  EXPECT_EQ(s.findings(0).iteration(), 3u);
  EXPECT_EQ(s.findings(0).state_key(), "globals.scale");
  EXPECT_EQ(s.findings(1).verdict(), v1::CacheStabilityFinding::SUSPICIOUS);
  EXPECT_EQ(s.findings(1).iteration(), 1u);
  EXPECT_EQ(s.findings(1).state_key(), "model.mode");
}

TEST(CacheStabilityTest, CancelledAndRegisteredInReportOrder) {
  const v1::SessionCapture capture = Capture(R"pb(
    iterations { index: 0 frame_id: 0 compile_id: "0/0" recompiled: true })pb");
  EXPECT_THAT(::cl::testing::RunPassCancelled(CacheStabilityPass(), capture),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("cache_stability")));
  std::vector<std::string> names;
  for (const Pass* pass : RegisteredPasses()) names.emplace_back(pass->Name());
  EXPECT_THAT(names, ElementsAre("failures", "ranks", "ir_diff", "recompile", "compile_time",
                                 "cache_stability", "divergence", "lint", "fusion", "roofline"));
  EXPECT_EQ(FindPass("cache_stability")->Section(), "cache_stability");
}

// --- Guard sources as state keys -------------------------------------------------------------

TEST(GuardSourcesTest, SourcesMapOntoTheTrackedKeys) {
  EXPECT_EQ(StateKeyOfGuardSource("L['self']"), "model");
  EXPECT_EQ(StateKeyOfGuardSource("L['x']"), "inputs.x");
  EXPECT_EQ(StateKeyOfGuardSource("G['scale']"), "globals.scale");
  EXPECT_EQ(StateKeyOfGuardSource("L['self']._modules['lora'].disabled"), "model.lora.disabled");
  EXPECT_EQ(StateKeyOfGuardSource(
                "L['self']._modules['blocks']._modules['0']._modules['up']._parameters['weight']"),
            "model.blocks.0.up.weight");
  EXPECT_EQ(StateKeyOfGuardSource("L['self']._buffers['mask']"), "model.mask");
  EXPECT_EQ(StateKeyOfGuardSource("L['self'].__dict__['eps']"), "model.eps");
  EXPECT_EQ(StateKeyOfGuardSource("L['cfg']['depth']"), "inputs.cfg.depth");
  EXPECT_EQ(StateKeyOfGuardSource("L[\"args\"][0]"), "inputs.args.0");
  EXPECT_EQ(StateKeyOfGuardSource("L['self']._modules['inner']._forward_hooks"),
            "model.inner._forward_hooks");
}

TEST(GuardSourcesTest, WhatItDoesNotRecogniseIsKeptAsItIs) {
  EXPECT_EQ(StateKeyOfGuardSource("G"), "G");
  EXPECT_EQ(StateKeyOfGuardSource("L['self'].__dict__"), "model.__dict__");
  EXPECT_EQ(StateKeyOfGuardSource("L['x'][unclosed"), "inputs.x[unclosed");
  EXPECT_EQ(StateKeyOfGuardSource("L['x']['"), "inputs.x['");
  EXPECT_EQ(StateKeyOfGuardSource(""), "");
}

TEST(GuardSourcesTest, GlobalStateCoversTheTorchGlobalsOnlyWhenGuarded) {
  v1::Compile compile;
  compile.add_guarded_sources("GLOBAL_STATE");
  const GuardedKeys with_global(nullptr, compile);
  EXPECT_TRUE(with_global.known());
  for (const char* key :
       {"torch.grad_mode", "torch.autocast.cuda", "torch.deterministic_algorithms",
        "torch.default_dtype", "torch.torch_function_enabled"}) {
    EXPECT_TRUE(with_global.Guards(key)) << key;
  }
  EXPECT_FALSE(with_global.Guards("torch.backends.cudnn.allow_tf32"));
  EXPECT_FALSE(with_global.Guards("torch.float32_matmul_precision"));

  compile.set_guarded_sources(0, "L['x']");
  const GuardedKeys without_global(nullptr, compile);
  EXPECT_FALSE(without_global.Guards("torch.grad_mode"));
  EXPECT_TRUE(without_global.Guards("inputs.x"));
  EXPECT_FALSE(GuardedKeys(nullptr, v1::Compile()).known());
}

TEST(GuardSourcesTest, SourcesIndexedIntoTheFrameCountLikeListedOnes) {
  v1::Frame frame;
  frame.add_guarded_sources("L['x']");
  frame.add_guarded_sources("GLOBAL_STATE");
  frame.add_guarded_sources("G['scale']");
  v1::Compile compile;
  compile.add_guarded_source_ids(2);
  compile.add_guarded_source_ids(1);
  compile.add_guarded_sources("L['y']");
  const GuardedKeys guarded(&frame, compile);
  EXPECT_TRUE(guarded.known());
  EXPECT_TRUE(guarded.Guards("globals.scale"));
  EXPECT_TRUE(guarded.Guards("torch.grad_mode"));
  EXPECT_TRUE(guarded.Guards("inputs.y"));
  EXPECT_FALSE(guarded.Guards("inputs.x"));  // in the frame's table, not among this compile's ids
  // Without its frame the ids read as nothing, though the compile still says it has guards.
  const GuardedKeys frameless(nullptr, compile);
  EXPECT_TRUE(frameless.known());
  EXPECT_FALSE(frameless.Guards("globals.scale"));
  EXPECT_TRUE(frameless.Guards("inputs.y"));
}

}  // namespace
}  // namespace cl

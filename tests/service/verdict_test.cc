// The verdict above the sections: what went wrong, most costly first, read off the sections; on
// real logs (tlparse's corpus) and on reports built to hold one of each problem.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capture/torch_trace/importer.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "service/engine.h"
#include "service/summary.h"
#include "service/thread_pool.h"
#include "tests/testing/fixtures.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Items(const v1::Verdict& v) {
  std::vector<std::string> out;
  for (const v1::VerdictItem& item : v.items())
    out.push_back(absl::StrCat(item.section(), ": ", item.text()));
  return out;
}

v1::AnalysisReport Analyze(const std::string& fixture) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<std::vector<v1::SessionCapture>> captures =
      ImportTrace(::cl::testing::FixturePath(fixture), options);
  EXPECT_TRUE(captures.ok()) << captures.status();
  if (!captures.ok()) return {};
  ThreadPool pool(2, 8);
  Engine engine(&pool);
  absl::StatusOr<EngineResult> r = engine.Analyze(captures->front(), nullptr, {}, nullptr);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->report : v1::AnalysisReport();
}

TEST(VerdictTest, OneOfEachProblemMostCostlyFirst) {
  v1::AnalysisReport report;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        failures {
          status: OK
          compiles: 9
          failed { fail_type: "BackendCompilerFailed" }
          failed {}
        }
        recompile {
          status: OK
          total: 3
          frame { name: "forward" }
          clusters { category: SIZE axis: "x[0]" }
          cache_limit_hits { frame: "step" limit: "cache_size_limit" }
          graph_breaks { count: 2 frame_skipped: true }
          graph_breaks { count: 5 }
        }
        divergence {
          status: OK
          severity: ERROR
          first_divergent_layer: "blocks.0.norm"
          max_abs_diff: 5.033
          cause { name: "post_grad_custom_post_pass" }
        }
        cache_stability {
          status: OK
          findings { verdict: STALE }
          findings { verdict: SUSPICIOUS }
        }
        lint {
          status: OK
          findings { severity: ERROR }
          findings { severity: WARNING }
        }
      )pb",
      &report));
  FillVerdict(&report);
  EXPECT_FALSE(report.verdict().clean());
  EXPECT_THAT(
      Items(report.verdict()),
      ElementsAre(
          "failures: 2 compiles failed (BackendCompilerFailed): those frames did not run compiled",
          "recompile: step hit cache_size_limit: torch stopped compiling it",
          "recompile: 3 recompilations of forward, most on size of x[0]",
          "recompile: 2 graph breaks made torch skip a whole frame: it ran eagerly",
          "recompile: 5 graph breaks",
          "divergence: the compiled model diverges from eager at blocks.0.norm (max abs diff "
          "5.033e0); bisected to post_grad_custom_post_pass",
          "cache-stability: 1 iteration served a stale compiled graph (state changed, no "
          "recompile, output diverged)",
          "lint: 1 lint error: source patterns known to break torch.compile"));
}

// A failed torch.export raised to its caller: the verdict counts it as an export, apart from the
// compiles whose frames then ran eagerly.
TEST(VerdictTest, FailedExportsAreCountedApartFromFailedCompiles) {
  v1::AnalysisReport report;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        failures {
          status: OK
          failed { fail_type: "UserError" exported: true }
          failed { fail_type: "ConstraintViolationError" exported: true }
          failed { fail_type: "BackendCompilerFailed" }
        }
      )pb",
      &report));
  FillVerdict(&report);
  EXPECT_THAT(Items(report.verdict()),
              ElementsAre("failures: 1 compile failed (BackendCompilerFailed): those frames did "
                          "not run compiled",
                          "failures: 2 exports failed (ConstraintViolationError, UserError): "
                          "torch.export raised, and those models were not exported"));
}

// fixtures/torch_trace/torch-2.6/ddp_wrapper: torch.compile of a DDP wrapper broke in DDP's own
// forward before any op, and the one frame it compiled has an empty graph: the model ran eagerly,
// which the verdict says first (the health's "Compiled graphs 0" alone left it to the reader).
TEST(VerdictTest, ASessionThatCompiledNoOpSaysTheModelRanEagerly) {
  const v1::AnalysisReport report = Analyze("torch_trace/torch-2.6/ddp_wrapper/trace.log");
  EXPECT_EQ(report.raw().empty_graphs(), 1u);
  EXPECT_THAT(Items(report.verdict()),
              ElementsAre("recompile: torch compiled no op: the one compile it finished has an "
                          "empty graph, so the model ran eagerly",
                          "recompile: 1 graph break"));

  // Empty graphs beside a compiled one (a resume function with no tensor op) are no problem.
  v1::AnalysisReport mixed;
  mixed.mutable_raw()->set_empty_graphs(3);
  FillVerdict(&mixed);
  EXPECT_THAT(Items(mixed.verdict()),
              ElementsAre("recompile: torch compiled no op: all 3 compiles it finished have "
                          "empty graphs, so the model ran eagerly"));
  mixed.mutable_raw()->set_compiled_graphs(1);
  FillVerdict(&mixed);
  EXPECT_TRUE(mixed.verdict().clean());
}

// fixtures/torch_trace/torch-2.6/ddp_uneven: two ranks recompile once each on their last batch,
// rank 0's of two rows (made dynamic, expected), rank 1's of one (specialised). Rank 0's own
// report has nothing to act on, so the verdict sends the reader to rank 1.
TEST(VerdictTest, ARankThatRecompiledForOtherReasonsIsNamed) {
  const v1::AnalysisReport report = Analyze("torch_trace/torch-2.6/ddp_uneven");
  ASSERT_EQ(report.ranks().divergences_size(), 1);
  EXPECT_EQ(report.ranks().divergences(0).kind(), "recompile_reasons");
  EXPECT_THAT(report.ranks().divergences(0).detail(), HasSubstr("expected 16, actual 1` against"));
  EXPECT_THAT(Items(report.verdict()),
              ElementsAre("ranks: rank 1 recompiled for other reasons than this rank (rank 0), "
                          "so it compiled other graphs: analyze it with --rank 1"));
}

// fixtures/torch_trace/torch-2.6/topk_cache_limit recompiles in two frames: the verdict counts
// them across both rather than calling them all the busier frame's.
TEST(VerdictTest, RecompilesInSeveralFramesAreNotOneFrames) {
  const v1::AnalysisReport report = Analyze("torch_trace/torch-2.6/topk_cache_limit/trace.log");
  EXPECT_THAT(Items(report.verdict()),
              ::testing::Contains("recompile: 8 recompilations in 2 frames (most in "
                                  "topk_sum_fullgraph), most on value of k"));
}

// An input that changed once and that torch made dynamic is expected, not a problem: the verdict
// counts the other recompiles, names the largest of those, and says how many more were expected.
TEST(VerdictTest, ExpectedRecompilesAreCountedApart) {
  v1::AnalysisReport report;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        recompile {
          status: OK
          total: 4
          frame { name: "forward" }
          frames { name: "forward" recompiles: 3 }
          frames { name: "step" recompiles: 1 }
          clusters { category: SIZE axis: "x[0]" count: 2 frame: "forward" expected: true }
          clusters { category: GLOBAL_STATE axis: "grad_mode" count: 1 frame: "forward" }
          clusters { category: VALUE axis: "lr" count: 1 frame: "step" expected: true }
        }
      )pb",
      &report));
  FillVerdict(&report);
  EXPECT_THAT(Items(report.verdict()),
              ElementsAre("recompile: 1 recompilation of forward, most on global_state of "
                          "grad_mode; 3 more expected (nothing to change; the recompile "
                          "section says why)"));

  // All of them expected: nothing to act on.
  report.mutable_recompile()->mutable_clusters(1)->set_expected(true);
  FillVerdict(&report);
  EXPECT_TRUE(report.verdict().clean()) << ::testing::PrintToString(Items(report.verdict()));
}

// fixtures/torch_trace/torch-2.6/dynamic: x's size changed once and grad mode once (both expected:
// a size made dynamic, a no_grad call beside training ones), then a dtype changed (not).
TEST(VerdictTest, TheDynamicSceneLeadsWithWhatNeedsAChange) {
  const v1::AnalysisReport report = Analyze("torch_trace/torch-2.6/dynamic/trace.log");
  EXPECT_THAT(
      Items(report.verdict()),
      ElementsAre(
          "recompile: 1 recompilation of forward, most on dtype of x; 2 more expected (nothing "
          "to change; the recompile section says why)"));
}

// fixtures/torch_trace/torch-2.6/lr_schedule: the one recompile is the lr going dynamic; only the
// graph breaks are problems.
TEST(VerdictTest, TheLrScheduleScenesRecompileIsNoProblem) {
  const v1::AnalysisReport report = Analyze("torch_trace/torch-2.6/lr_schedule/trace.log");
  EXPECT_THAT(Items(report.verdict()), ElementsAre("recompile: 2 graph breaks"));
}

TEST(VerdictTest, ACleanSessionSaysSo) {
  const v1::AnalysisReport report = Analyze("torch_trace/torch-2.6/train/trace.log");
  EXPECT_TRUE(report.verdict().clean()) << ::testing::PrintToString(Items(report.verdict()));
  EXPECT_EQ(report.verdict().items_size(), 0);
}

// comp_failure.log: the backend raised. The verdict leads with it.
TEST(VerdictTest, AFailedCompileLeads) {
  const v1::AnalysisReport report = Analyze("torch_trace/tlparse-corpus/tlparse/comp_failure.log");
  ASSERT_FALSE(report.verdict().items().empty());
  EXPECT_EQ(report.verdict().items(0).section(), "failures");
  EXPECT_THAT(report.verdict().items(0).text(), HasSubstr("1 compile failed"));
}

// multi_rank_logs/: rank 0 (the one analyzed by default) has none of rank 1's 14 recompiles.
TEST(VerdictTest, AQuietRankNamesTheRankWithTheTrouble) {
  const v1::AnalysisReport report = Analyze("torch_trace/tlparse-corpus/tlparse/multi_rank_logs");
  EXPECT_EQ(report.metadata().rank(), 0);
  EXPECT_THAT(Items(report.verdict()),
              ::testing::Contains("ranks: rank 1 has 14 recompilations (this is rank 0, with 0): "
                                  "analyze it with --rank 1"));
}

TEST(VerdictTest, AReportWithoutSectionsHasNoItems) {
  v1::AnalysisReport report;
  FillVerdict(&report);
  EXPECT_TRUE(report.verdict().clean());
}

}  // namespace
}  // namespace cl

#include "service/engine.h"

#include <atomic>
#include <stdexcept>
#include <thread>

#include "absl/synchronization/notification.h"
#include "analyzers/registry.h"
#include "capture/capture_io.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/captures.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

using ::cl::testing::StatusIs;
using ::testing::HasSubstr;

// A test pass that fills a section with a recognisable reason, or fails the way it is told to.
class FakePass : public Pass {
 public:
  enum class Mode { kOk, kError, kThrow, kWaitForCancel };
  FakePass(std::string name, std::string section, Mode mode)
      : name_(std::move(name)), section_(std::move(section)), mode_(mode) {}
  absl::string_view Name() const override { return name_; }
  absl::string_view Section() const override { return section_; }
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override {
    switch (mode_) {
      case Mode::kOk:
        out->mutable_recompile()->set_total(static_cast<uint32_t>(in.head.compiles_size()));
        out->mutable_lint()->set_escalated(in.base != nullptr);
        out->add_diagnostics()->set_message("from " + name_);
        return absl::OkStatus();
      case Mode::kError:
        return absl::FailedPreconditionError("it broke: <details>");
      case Mode::kThrow:
        throw std::runtime_error("boom");
      case Mode::kWaitForCancel:
        while (!in.Cancelled()) std::this_thread::yield();
        return absl::CancelledError();
    }
    return absl::OkStatus();
  }

 private:
  std::string name_, section_;
  Mode mode_;
};

v1::SessionCapture Hero() { return ::cl::testing::LoadHero("head.cls.json"); }

TEST(EngineTest, AFailingPassIsAnErrorSectionAndTheRestComesBack) {
  ThreadPool pool(2, 8);
  FakePass good("good", "recompile", FakePass::Mode::kOk);
  FakePass bad("bad", "divergence", FakePass::Mode::kError);
  FakePass thrower("thrower", "fusion", FakePass::Mode::kThrow);
  Engine engine(&pool, {&good, &bad, &thrower});
  const v1::SessionCapture hero = Hero();
  ASSERT_OK_AND_ASSIGN(EngineResult r, engine.Analyze(hero, nullptr, {}, nullptr));

  EXPECT_EQ(r.report.recompile().status(), v1::OK);
  EXPECT_EQ(r.report.recompile().total(), 4u);
  EXPECT_EQ(r.report.divergence().status(), v1::ERROR);
  EXPECT_EQ(r.report.divergence().reason(), "it broke: <details>");
  EXPECT_EQ(r.report.fusion().status(), v1::ERROR);
  EXPECT_THAT(r.report.fusion().reason(), HasSubstr("the pass threw: boom"));
  // A pass only owns its own section: what "good" wrote into lint is not merged.
  EXPECT_EQ(r.report.lint().status(), v1::SKIPPED);
  EXPECT_FALSE(r.report.lint().escalated());
  // Failures are also diagnostics, so they are never silent.
  std::vector<std::string> where;
  for (const v1::Diagnostic& d : r.report.diagnostics()) where.push_back(d.where());
  EXPECT_THAT(where, ::testing::IsSupersetOf({"pass bad", "pass thrower"}));
  ASSERT_EQ(r.timings.size(), 3u);
  EXPECT_EQ(r.timings[0].pass(), "good");
}

TEST(EngineTest, SectionsWithoutAPassSayWhy) {
  ThreadPool pool(1, 8);
  FakePass good("good", "recompile", FakePass::Mode::kOk);
  Engine engine(&pool, {&good});
  const v1::SessionCapture hero = Hero();
  ASSERT_OK_AND_ASSIGN(EngineResult r, engine.Analyze(hero, nullptr, {}, nullptr));
  EXPECT_EQ(r.report.ir_diff().status(), v1::SKIPPED);
  EXPECT_THAT(r.report.ir_diff().reason(), HasSubstr("no pass for this section"));
  v1::AnalyzeOptions only;
  only.add_passes("good");
  FakePass other("other", "lint", FakePass::Mode::kOk);
  Engine two(&pool, {&good, &other});
  ASSERT_OK_AND_ASSIGN(r, two.Analyze(hero, nullptr, only, nullptr));
  EXPECT_EQ(r.report.lint().status(), v1::SKIPPED);
  EXPECT_THAT(r.report.lint().reason(), HasSubstr("not selected"));
}

TEST(EngineTest, MetadataAndRawComeFromTheCapture) {
  ThreadPool pool(1, 8);
  Engine engine(&pool, {});
  const v1::SessionCapture hero = Hero();
  ASSERT_OK_AND_ASSIGN(EngineResult r, engine.Analyze(hero, &hero, {}, nullptr));
  EXPECT_EQ(r.report.metadata().schema(), hero.schema());
  EXPECT_EQ(r.report.metadata().torch_version(), hero.session().torch_version());
  EXPECT_TRUE(r.report.metadata().has_base());
  EXPECT_EQ(r.report.raw().recompilations(), 3u);
  // Every successful compile is a graph: the hero's first compile and its three recompiles.
  EXPECT_EQ(r.report.raw().compiled_graphs(), 4u);
  EXPECT_EQ(r.report.raw().iterations(), static_cast<uint32_t>(hero.iterations_size()));
  EXPECT_EQ(r.report.raw().graph_breaks(), 0u);
}

// The GPU is the session's, one value for the metadata section and the roofline (cl-client --gpu
// overrides it in the capture; tests/e2e has the flag's side).
TEST(EngineTest, TheMetadataAndTheRooflineShowTheSessionsGpu) {
  ThreadPool pool(2, 8);
  Engine engine(&pool);
  v1::SessionCapture hero = Hero();
  hero.mutable_session()->set_gpu("H100-SXM-80GB");
  v1::AnalyzeOptions roofline;
  roofline.add_passes("roofline");
  ASSERT_OK_AND_ASSIGN(EngineResult r, engine.Analyze(hero, nullptr, roofline, nullptr));
  EXPECT_EQ(r.report.metadata().gpu(), "H100-SXM-80GB");
  EXPECT_EQ(r.report.roofline().gpu(), r.report.metadata().gpu());
  EXPECT_DOUBLE_EQ(r.report.roofline().bandwidth(), 3350e9);
}

TEST(EngineTest, UnknownPassNamesAreRefused) {
  ThreadPool pool(1, 8);
  FakePass good("good", "recompile", FakePass::Mode::kOk);
  Engine engine(&pool, {&good});
  v1::AnalyzeOptions options;
  options.add_passes("nope");
  EXPECT_THAT(engine.Analyze(Hero(), nullptr, options, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown pass \"nope\"; the passes are: good")));
}

// A pass that refuses its options in Prepare: every request that asks for the text rendering.
class PickyPass : public FakePass {
 public:
  using FakePass::FakePass;
  absl::Status Prepare(const v1::AnalyzeOptions& request, PassOptions* options) const override {
    return request.render_text() ? absl::InvalidArgumentError("picky: render_text is not for me")
                                 : absl::OkStatus();
  }
};

// Every pass prepares its options before any pass runs, selected or not: one that refuses them
// refuses the whole request, and none of the passes runs.
TEST(EngineTest, APassThatRefusesItsOptionsRefusesTheRequestWhicheverPassesRun) {
  ThreadPool pool(1, 8);
  FakePass good("good", "recompile", FakePass::Mode::kOk);
  PickyPass picky("picky", "lint", FakePass::Mode::kThrow);
  Engine engine(&pool, {&good, &picky});
  v1::AnalyzeOptions options;
  options.add_passes("good");
  EXPECT_THAT(engine.Analyze(Hero(), nullptr, options, nullptr), ::cl::testing::IsOk());
  options.set_render_text(true);
  EXPECT_THAT(
      engine.Analyze(Hero(), nullptr, options, nullptr),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("picky: render_text is not for me")));
}

TEST(EngineTest, RunsWithAFullPoolOnTheCallingThread) {
  ThreadPool pool(1, 0);  // no queue at all: every helper is refused
  FakePass a("a", "recompile", FakePass::Mode::kOk), b("b", "lint", FakePass::Mode::kOk);
  Engine engine(&pool, {&a, &b});
  ASSERT_OK_AND_ASSIGN(EngineResult r, engine.Analyze(Hero(), nullptr, {}, nullptr));
  EXPECT_EQ(r.report.recompile().status(), v1::OK);
  EXPECT_EQ(r.report.lint().status(), v1::OK);
}

// A pass that notes the thread it ran on.
class ThreadNotingPass : public Pass {
 public:
  ThreadNotingPass(std::string name, std::string section)
      : name_(std::move(name)), section_(std::move(section)) {}
  absl::string_view Name() const override { return name_; }
  absl::string_view Section() const override { return section_; }
  absl::Status Run(const PassInput&, v1::AnalysisReport*) const override {
    ran_on_ = std::this_thread::get_id();
    return absl::OkStatus();
  }
  std::thread::id ran_on() const { return ran_on_; }

 private:
  std::string name_, section_;
  mutable std::thread::id ran_on_;
};

// No pool (cl-client on a small session): every pass runs on the calling thread, none is lost.
TEST(EngineTest, WithoutAPoolEveryPassRunsOnTheCallingThread) {
  ThreadNotingPass a("a", "recompile"), b("b", "lint"), c("c", "fusion");
  Engine engine(nullptr, {&a, &b, &c});
  ASSERT_OK_AND_ASSIGN(EngineResult r, engine.Analyze(Hero(), nullptr, {}, nullptr));
  EXPECT_EQ(r.report.recompile().status(), v1::OK);
  EXPECT_EQ(r.report.lint().status(), v1::OK);
  EXPECT_EQ(r.report.fusion().status(), v1::OK);
  for (const ThreadNotingPass* p : {&a, &b, &c}) EXPECT_EQ(p->ran_on(), std::this_thread::get_id());
}

TEST(EngineTest, CancellationIsHonoured) {
  ThreadPool pool(2, 8);
  FakePass waits("waits", "recompile", FakePass::Mode::kWaitForCancel);
  Engine engine(&pool, {&waits});
  std::atomic<bool> cancelled{false};
  const v1::SessionCapture hero = Hero();
  std::thread canceller([&] { cancelled.store(true); });
  EXPECT_THAT(engine.Analyze(hero, nullptr, {}, &cancelled),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("cancelled")));
  canceller.join();
}

// A cancellation that comes once every pass has finished does not throw the report away: the
// server keeps it for the client's retry instead of analyzing the session again.
TEST(EngineTest, ACancellationAfterThePassesKeepsTheReport) {
  ThreadPool pool(2, 8);
  FakePass good("good", "recompile", FakePass::Mode::kOk);
  Engine engine(&pool, {&good});
  const std::atomic<bool> cancelled{true};  // set before the call: no pass here looks at it
  const v1::SessionCapture hero = Hero();
  absl::StatusOr<EngineResult> r = engine.Analyze(hero, nullptr, {}, &cancelled);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->report.recompile().total(), static_cast<uint32_t>(hero.compiles_size()));
}

// An invalid correctness DB refuses the request (whichever passes were asked for): the message
// names the line, and cl-client turns INVALID_ARGUMENT into exit code 3.
TEST(EngineTest, AnInvalidCorrectnessDbRefusesTheRequest) {
  ThreadPool pool(2, 8);
  Engine engine(&pool);
  v1::AnalyzeOptions options;
  options.set_correctness_db(
      "schema_version = 1\n[[pattern]]\nid = \"in_place_op_on_alias\"\n"
      "category = \"aliasing\"\nseverity = \"error\"\n[pattern.detect]\n"
      "kind = \"inplace_on_alias\"\n");
  EXPECT_THAT(
      engine.Analyze(Hero(), nullptr, options, nullptr),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          HasSubstr("correctness DB line 5: pattern \"in_place_op_on_alias\": error severity needs "
                    "at least one [[pattern.issues]] link")));
  options.add_passes("recompile");
  EXPECT_THAT(engine.Analyze(Hero(), nullptr, options, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("correctness DB line 5")));
}

// A server's DB (cl-server --correctness_db) rates requests that carry none; a request's own wins.
TEST(EngineTest, TheDefaultCorrectnessDbRatesRequestsWithoutOne) {
  ThreadPool pool(2, 8);
  Engine engine(&pool);
  v1::AnalyzeOptions lint_only;
  lint_only.add_passes("lint");
  ASSERT_OK_AND_ASSIGN(EngineResult unrated, engine.Analyze(Hero(), nullptr, lint_only, nullptr));
  EXPECT_FALSE(unrated.report.lint().escalated());

  absl::StatusOr<std::string> shipped = ReadFile(CL_SOURCE_DIR "/lint/correctness.toml");
  ASSERT_TRUE(shipped.ok()) << shipped.status();
  v1::AnalyzeOptions server_options;  // what cl-server's --correctness_db makes
  server_options.set_correctness_db(*shipped);
  ASSERT_OK_AND_ASSIGN(PassOptions defaults, PrepareOptions(RegisteredPasses(), server_options));
  engine.SetPassDefaults(std::move(defaults));
  ASSERT_OK_AND_ASSIGN(EngineResult rated, engine.Analyze(Hero(), nullptr, lint_only, nullptr));
  EXPECT_TRUE(rated.report.lint().escalated());
  EXPECT_EQ(rated.report.lint().findings(0).severity(), v1::LintFinding::WARNING);

  v1::AnalyzeOptions mine = lint_only;
  mine.set_correctness_db(
      "schema_version = 1\n[[pattern]]\nid = \"in_place_op_on_alias\"\ncategory = \"aliasing\"\n"
      "severity = \"info\"\n[pattern.detect]\nkind = \"inplace_on_alias\"\n");
  ASSERT_OK_AND_ASSIGN(EngineResult own, engine.Analyze(Hero(), nullptr, mine, nullptr));
  EXPECT_EQ(own.report.lint().findings(0).severity(), v1::LintFinding::INFO);
}

TEST(EngineTest, TheRegistryHasTheRecompilePass) {
  ASSERT_NE(FindPass("recompile"), nullptr);
  EXPECT_EQ(FindPass("recompile")->Section(), "recompile");
  EXPECT_EQ(FindPass("no-such-pass"), nullptr);
}

}  // namespace
}  // namespace cl

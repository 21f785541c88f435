// The gates: each one's line on the real health pair (a head with one more graph break than its
// base), the flag and TOML forms with their errors, and the gates a request may not carry.
#include "analyzers/health/gates.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/engine.h"
#include "service/thread_pool.h"
#include "tests/testing/import_fixture.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

v1::SessionCapture Scene(const std::string& mode) {
  return testing::ImportFixtureLog("torch_trace/torch-2.6/health-" + mode + "/trace.log");
}

absl::StatusOr<EngineResult> Gate(const v1::SessionCapture& head, const v1::SessionCapture* base,
                                  const v1::Gates& gates) {
  ThreadPool pool(2, 16);
  Engine engine(&pool);
  v1::AnalyzeOptions options;
  *options.mutable_gates() = gates;
  return engine.Analyze(head, base, options, nullptr);
}

// "passed: ..." / "FAILED: ..." per gate, in order.
std::vector<std::string> Lines(const v1::HealthSection& h) {
  std::vector<std::string> out;
  for (const v1::GateResult& g : h.gates())
    out.push_back(absl::StrCat(g.passed() ? "passed: " : "FAILED: ", g.message()));
  return out;
}

class GatesOnThePair : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = new v1::SessionCapture(Scene("base"));
    head_ = new v1::SessionCapture(Scene("head"));
  }
  static v1::SessionCapture* base_;
  static v1::SessionCapture* head_;
};
v1::SessionCapture* GatesOnThePair::base_ = nullptr;
v1::SessionCapture* GatesOnThePair::head_ = nullptr;

TEST_F(GatesOnThePair, ANewGraphBreakFailsAndIsNamed) {
  v1::Gates gates;
  gates.set_no_new_graph_breaks(true);
  absl::StatusOr<EngineResult> r = Gate(*head_, base_, gates);
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::HealthSection& h = r->report.health();
  EXPECT_EQ(h.failed_gates(), 1u);
  ASSERT_EQ(h.gates_size(), 1);
  EXPECT_EQ(h.gates(0).gate(), "no-new-graph-breaks");
  EXPECT_THAT(h.gates(0).message(), HasSubstr("1 new graph break: Tensor.item at "));
  EXPECT_THAT(h.gates(0).message(), HasSubstr("health.py:39 (--no-new-graph-breaks)"));
  // The verdict leads with it.
  ASSERT_GT(r->report.verdict().items_size(), 0);
  EXPECT_EQ(r->report.verdict().items(0).section(), "health");
  EXPECT_THAT(r->report.verdict().items(0).text(), HasSubstr("1 gate failed"));
  // The gate's line names the new break: the verdict does not list it a second time.
  for (const v1::VerdictItem& item : r->report.verdict().items())
    EXPECT_THAT(item.text(), Not(HasSubstr("the base did not have"))) << item.text();

  // The same pair without the gate: nothing fails.
  absl::StatusOr<EngineResult> none = Gate(*head_, base_, {});
  ASSERT_TRUE(none.ok());
  bool listed = false;  // without the gate, the verdict names the new break itself
  for (const v1::VerdictItem& item : none->report.verdict().items())
    listed |= absl::StrContains(item.text(), "1 graph break the base did not have");
  EXPECT_TRUE(listed);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->report.health().failed_gates(), 0u);
  EXPECT_TRUE(none->report.health().gates().empty());
  // And the base against itself passes it.
  absl::StatusOr<EngineResult> same = Gate(*base_, base_, gates);
  ASSERT_TRUE(same.ok());
  EXPECT_THAT(Lines(same->report.health()),
              ElementsAre("passed: no new graph breaks (--no-new-graph-breaks)"));
}

TEST_F(GatesOnThePair, CountsRegressionsAndChecksThatCannotBeDecided) {
  v1::Gates gates;
  gates.set_max_graph_breaks(6);
  gates.set_max_recompiles(3);
  gates.add_fail_on("failures");
  gates.add_fail_on("divergence");
  gates.add_fail_on("stale-cache");
  gates.set_fail_on_lint("error");
  (*gates.mutable_max_regression())["graph_breaks"] = 0.5;
  (*gates.mutable_max_regression())["compile_time"] = 0.1;
  absl::StatusOr<EngineResult> r = Gate(*head_, base_, gates);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<std::string> lines = Lines(r->report.health());
  ASSERT_EQ(lines.size(), 8u) << absl::StrJoin(lines, "\n");
  EXPECT_EQ(lines[0], "passed: graph breaks 6 ≤ 6 (--max-graph-breaks 6)");
  EXPECT_EQ(lines[1], "FAILED: recompiles 10 > 3 (--max-recompiles 3)");
  EXPECT_EQ(lines[2], "passed: no failed compile (--fail-on failures)");
  // A plain log holds no run-time checks: not checked, not failed.
  EXPECT_THAT(lines[3], HasSubstr("passed: divergence: not checked ("));
  EXPECT_THAT(lines[4], HasSubstr("passed: stale cache: not checked ("));
  // No source was readable here: the lint pass skipped, so the gate is not decided either way.
  EXPECT_THAT(lines[5], HasSubstr("lint: not checked ("));
  EXPECT_EQ(lines[6],
            "FAILED: Graph breaks 1 → 6, worse +500% > +50% (--max-regression "
            "graph_breaks=50%)");
  EXPECT_THAT(lines[7], HasSubstr("(--max-regression compile_time=10%)"));
  EXPECT_EQ(r->report.health().failed_gates(), 2u);
}

TEST_F(GatesOnThePair, AComparingGateWithoutABaseFails) {
  v1::Gates gates;
  gates.set_no_new_graph_breaks(true);
  (*gates.mutable_max_regression())["guards"] = 0.2;
  absl::StatusOr<EngineResult> r = Gate(*head_, nullptr, gates);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(Lines(r->report.health()),
              ElementsAre(HasSubstr("FAILED: no new graph breaks: needs a base"),
                          HasSubstr("FAILED: guards: needs a base capture")));
}

// --fail-on export: a draft export's log (torch 2.6, scenes/draft_export.py) fails it, naming what
// export could not prove; a log of no export passes it.
TEST(GatesTest, FailOnExportNamesWhatExportCouldNotProve) {
  v1::Gates gates;
  gates.add_fail_on("export");
  absl::StatusOr<EngineResult> draft = Gate(
      testing::ImportFixtureLog("torch_trace/torch-2.6/draft_export/trace.log"), nullptr, gates);
  ASSERT_TRUE(draft.ok()) << draft.status();
  EXPECT_THAT(Lines(draft->report.health()),
              ElementsAre("FAILED: 4 things torch.export could not prove: missing-fake-kernel "
                          "lensdemo.route_topk.default at /mnt/project/draft_export.py:32; "
                          "data-dependent at /mnt/project/draft_export.py:34; data-dependent at "
                          "/mnt/project/draft_export.py:36 and 1 more (--fail-on export)"));
  absl::StatusOr<EngineResult> plain = Gate(Scene("head"), nullptr, gates);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT(Lines(plain->report.health()),
              ElementsAre("passed: nothing torch.export could not prove (--fail-on export)"));
}

TEST(GatesTest, ARequestWithAnUnknownGateIsRefused) {
  v1::SessionCapture capture;
  for (auto set : std::vector<void (*)(v1::Gates*)>{
           [](v1::Gates* g) { g->add_fail_on("everything"); },
           [](v1::Gates* g) { g->set_fail_on_lint("fatal"); },
           [](v1::Gates* g) { (*g->mutable_max_regression())["speed"] = 0.1; },
           [](v1::Gates* g) { (*g->mutable_max_regression())["guards"] = -1; }}) {
    v1::Gates gates;
    set(&gates);
    absl::StatusOr<EngineResult> r = Gate(capture, nullptr, gates);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_THAT(r.status().message(), HasSubstr("gates: "));
  }
}

TEST(GatesTest, FlagForms) {
  v1::Gates g;
  ASSERT_TRUE(ParseRegressionFlag("compile_time=10%, guards=0.2", &g).ok());
  EXPECT_DOUBLE_EQ(g.max_regression().at("compile_time"), 0.1);
  EXPECT_DOUBLE_EQ(g.max_regression().at("guards"), 0.2);
  EXPECT_THAT(ParseRegressionFlag("compile_time", &g).message(), HasSubstr("give METRIC=PERCENT"));
  EXPECT_THAT(ParseRegressionFlag("compile_time=fast", &g).message(),
              HasSubstr("give METRIC=PERCENT"));
  v1::Gates bad;
  EXPECT_THAT(ParseRegressionFlag("speed=10%", &bad).message(),
              HasSubstr("\"speed\", not a health metric (graph_breaks, "));
  v1::Gates words;
  ASSERT_TRUE(ParseFailOnFlag("failures,divergence", &words).ok());
  EXPECT_THAT(words.fail_on(), ElementsAre("failures", "divergence"));
  EXPECT_THAT(ParseFailOnFlag("failure", &words).message(),
              HasSubstr("\"failure\" is not one of failures, divergence, stale-cache"));
}

TEST(GatesTest, TheGateFile) {
  absl::StatusOr<v1::Gates> g = ParseGatesFile(R"(# CI gates for the decoder
max_graph_breaks = 2
no_new_graph_breaks = true
max_recompiles = 4
fail_on = ["failures", "stale-cache"]
fail_on_lint = "warning"
[max_regression]
compile_time = "10%"
guards = 0.25
)",
                                               "ci/gates.toml");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->max_graph_breaks(), 2u);
  EXPECT_TRUE(g->no_new_graph_breaks());
  EXPECT_EQ(g->max_recompiles(), 4u);
  EXPECT_THAT(g->fail_on(), ElementsAre("failures", "stale-cache"));
  EXPECT_EQ(g->fail_on_lint(), "warning");
  EXPECT_DOUBLE_EQ(g->max_regression().at("compile_time"), 0.1);
  EXPECT_DOUBLE_EQ(g->max_regression().at("guards"), 0.25);

  // The command line over the file.
  v1::Gates flags;
  flags.set_max_graph_breaks(0);
  MergeGates(flags, &*g);
  EXPECT_EQ(g->max_graph_breaks(), 0u);
  EXPECT_EQ(g->max_recompiles(), 4u);

  struct Bad {
    const char* text;
    const char* error;
  };
  for (const Bad& bad : {
           Bad{"max_graph_brakes = 2\n", "ci/gates.toml:1: unknown gate \"max_graph_brakes\""},
           Bad{"\nmax_graph_breaks = -1\n", "ci/gates.toml:2: max_graph_breaks must be a whole"},
           Bad{"max_recompiles = \"4\"\n", "max_recompiles must be a whole number"},
           Bad{"no_new_graph_breaks = 1\n", "no_new_graph_breaks must be true/false"},
           Bad{"fail_on = \"failures\"\n", "fail_on must be a list of words"},
           Bad{"fail_on = [\"crashes\"]\n", "fail_on \"crashes\" is not one of"},
           Bad{"fail_on_lint = \"fatal\"\n", "fail_on_lint must be"},
           Bad{"[max_regression]\nspeed = \"5%\"\n", "ci/gates.toml:2: max_regression names"},
           Bad{"[max_regression]\nguards = \"lots\"\n", "must be a percentage"},
           Bad{"max_graph_breaks = \n", "ci/gates.toml:1:"},
       }) {
    absl::StatusOr<v1::Gates> parsed = ParseGatesFile(bad.text, "ci/gates.toml");
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad.text;
    EXPECT_THAT(parsed.status().message(), HasSubstr(bad.error)) << bad.text;
  }
}

}  // namespace
}  // namespace cl

// The lint pass on the real hero captures (their `sources` hold examples/hero_scene.py) and on
// captures built around it: exactly the seed's finding, the seed's HTML row, the shipped DB's
// rating, how the pass prepares its DB, graph-break triggers and diagnostics (the engine's side of
// the DB, a server's and a request's: tests/service/engine_test.cc).
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "analyzers/lint/lint.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lint/correctness_db.h"
#include "proto/report_words.h"
#include "service/render/html.h"
#include "service/render/render.h"
#include "tests/testing/captures.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/run_pass.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

using ::cl::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

std::string ShippedDb() {
  absl::StatusOr<std::string> text = ReadFile(CL_SOURCE_DIR "/lint/correctness.toml");
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

// The pass on `head` with the correctness DB `db` (its text) in the request, prepared by the pass
// as the engine has it prepared.
v1::AnalysisReport RunWith(const v1::SessionCapture& head, const std::string& db) {
  v1::AnalysisReport report;
  v1::AnalyzeOptions request;
  request.set_correctness_db(db);
  PassOptions options;
  const absl::Status prepared = LintPass().Prepare(request, &options);
  EXPECT_TRUE(prepared.ok()) << prepared;
  const PassInput in{head, nullptr, options};
  const absl::Status status = LintPass().Run(in, &report);
  EXPECT_TRUE(status.ok()) << status;
  return report;
}

// The <section> of the page with the given id.
std::string Section(const std::string& page, const std::string& id) {
  const size_t start = page.find(absl::StrCat("<details open id=\"", id, "\">"));
  if (start == std::string::npos) return "";
  return page.substr(start, page.find("</details>", start) - start);
}

TEST(LintPassTest, HeroHasExactlyTheInPlaceOpOnAlias) {
  for (const char* name : {"head.cls.json", "base.cls.json"}) {
    const v1::SessionCapture head = testing::LoadHero(name);
    const v1::AnalysisReport report = testing::RunPassOk(LintPass(), head);
    const v1::LintSection& s = report.lint();
    ASSERT_EQ(s.status(), v1::OK) << name;
    EXPECT_FALSE(s.escalated());
    ASSERT_EQ(s.findings_size(), 1) << name;
    const v1::LintFinding& f = s.findings(0);
    EXPECT_EQ(f.pattern(), "in_place_op_on_alias");
    EXPECT_EQ(f.location().file(), "examples/hero_scene.py");
    EXPECT_EQ(f.location().line(), 96u);
    EXPECT_EQ(f.trigger(), "");
    EXPECT_EQ(f.confidence(), "ast_match");
    EXPECT_EQ(f.severity(), v1::LintFinding::UNRATED);
    EXPECT_EQ(f.links_size(), 0);
    EXPECT_EQ(f.snippet(), "z.mul_(0.5)");
    EXPECT_EQ(f.function(), "Scene.forward");
    EXPECT_EQ(
        f.message(),
        "in-place `mul_` on `z`, which shares storage with `y`; `y` is read again at line 97");
    EXPECT_FALSE(f.assumed_compiled());
    EXPECT_EQ(s.files_scanned(), 1u);
    EXPECT_EQ(s.lines_scanned(), 143u);
    // The region: Scene.forward, from the compiled frame and from torch.compile(model).
    ASSERT_EQ(s.roots_size(), 1);
    EXPECT_EQ(s.roots(0).function(), "Scene.forward");
    EXPECT_EQ(s.roots(0).location().file(), "examples/hero_scene.py");
    EXPECT_EQ(s.roots(0).location().line(), 86u);
    EXPECT_EQ(s.assumed_files_size(), 0);
    EXPECT_EQ(report.diagnostics_size(), 0);
  }
}

// The seed's row, with what matched and the detector's message under the pattern (issue 19: the
// page shows what the JSON has).
TEST(LintPassTest, HeroHtmlIsTheSeedsRowWithWhatMatched) {
  v1::AnalysisReport report = testing::RunPassOk(LintPass(), testing::LoadHero("head.cls.json"));
  const std::string section = Section(RenderHtml(report), "lint");
  const std::string matched =
      "<br><code>z.mul_(0.5)</code><br><span class=\"muted\">in-place `mul_` on `z`, which "
      "shares storage with `y`; `y` is read again at line 97</span>";
  EXPECT_THAT(
      section,
      HasSubstr(
          "<div class=\"body\"><p class=\"warn\">1 candidate pattern from the static scan — not "
          "yet escalated. Pass <code>--db &lt;correctness.toml&gt;</code> to rate severity and "
          "attach issue links.</p>\n<table>\n<thead><tr><th>pattern</th><th>location</th>"
          "<th>trigger</th><th>confidence</th></tr></thead>\n<tbody>\n"
          "<tr><td><code>in_place_op_on_alias</code>" +
          matched +
          "</td><td><code>{repo}/examples/hero_scene.py:96"
          "</code></td><td><code>—</code></td><td>ast_match</td></tr>\n</tbody>\n</table>\n</"
          "div>"));
  // The seed's section byte for byte, but for what the row now adds.
  absl::StatusOr<std::string> seed = ReadFile(testing::FixturePath("seed/hero.html"));
  ASSERT_TRUE(seed.ok()) << seed.status();
  EXPECT_EQ(absl::StrReplaceAll(section, {{matched, ""}}), Section(*seed, "lint"));
  EXPECT_THAT(
      RenderText(report, /*color=*/false),
      HasSubstr(
          "lint: 1 candidate pattern (not yet escalated; pass --db <correctness.toml> to rate)\n"
          "  in_place_op_on_alias at examples/hero_scene.py:96 (ast_match): z.mul_(0.5)\n"));
}

TEST(LintPassTest, HeroRatedByTheShippedDb) {
  const v1::AnalysisReport report = RunWith(testing::LoadHero("head.cls.json"), ShippedDb());
  const v1::LintSection& s = report.lint();
  ASSERT_EQ(s.status(), v1::OK);
  EXPECT_TRUE(s.escalated());
  EXPECT_EQ(s.db_updated(), "2026-11-29");
  ASSERT_EQ(s.findings_size(), 1);
  const v1::LintFinding& f = s.findings(0);
  EXPECT_EQ(Word(f.severity()), "warning");  // a view, not an expand: the pattern's default
  EXPECT_EQ(f.category(), "aliasing");
  EXPECT_EQ(f.remedy(), "use the out-of-place op, or clone() before mutating");
  EXPECT_DOUBLE_EQ(f.confidence_score(), 0.7);
  ASSERT_EQ(f.links_size(), 6);
  EXPECT_EQ(f.links(0), "https://github.com/pytorch/pytorch/issues/94777");
  const std::string section = Section(RenderHtml(report), "lint");
  EXPECT_THAT(section,
              HasSubstr("1 pattern from the static scan, rated against the correctness DB"));
  EXPECT_THAT(section, HasSubstr("<th>severity</th><th>links</th>"));
  EXPECT_THAT(section, HasSubstr("<td>warning</td><td><a rel=\"noreferrer\" "
                                 "href=\"https://github.com/pytorch/pytorch/issues/94777\">"));
  EXPECT_THAT(section,
              HasSubstr("<code>in_place_op_on_alias</code>: use the out-of-place op, or clone() "
                        "before mutating"));
  EXPECT_THAT(section, Not(HasSubstr("not yet escalated")));
}

// The request's DB replaces the server's (what `options` holds when Prepare is called); a request
// without one keeps the server's; one that does not parse is refused, naming the line.
TEST(LintPassTest, PrepareParsesTheRequestsDbOverTheServers) {
  v1::AnalyzeOptions server;
  server.set_correctness_db(ShippedDb());
  PassOptions options;
  ASSERT_TRUE(LintPass().Prepare(server, &options).ok());
  ASSERT_NE(options.correctness_db, nullptr);
  const lint::CorrectnessDb* const servers = options.correctness_db.get();

  ASSERT_TRUE(LintPass().Prepare(v1::AnalyzeOptions(), &options).ok());
  EXPECT_EQ(options.correctness_db.get(), servers);

  v1::AnalyzeOptions own;
  own.set_correctness_db(ShippedDb());
  ASSERT_TRUE(LintPass().Prepare(own, &options).ok());
  EXPECT_NE(options.correctness_db.get(), servers);

  v1::AnalyzeOptions bad;
  bad.set_correctness_db(
      "schema_version = 1\n[[pattern]]\nid = \"in_place_op_on_alias\"\n"
      "category = \"aliasing\"\nseverity = \"critical\"\n");
  EXPECT_THAT(LintPass().Prepare(bad, &options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("correctness DB line 5")));
}

TEST(LintPassTest, SkippedWithoutSources) {
  v1::SessionCapture head = testing::LoadHero("head.cls.json");
  head.clear_sources();
  const v1::AnalysisReport report = testing::RunPassOk(LintPass(), head);
  EXPECT_EQ(report.lint().status(), v1::SKIPPED);
  EXPECT_THAT(report.lint().reason(), HasSubstr("no source files in the capture"));
}

TEST(LintPassTest, GraphBreaksAtAFindingAreItsTriggerAndParseProblemsAreDiagnostics) {
  v1::SessionCapture head = testing::LoadHero("head.cls.json");
  v1::GraphBreak* brk = head.mutable_compiles(0)->add_graph_breaks();
  brk->set_reason("Data-dependent branching\n  Explanation: ...");
  v1::StackFrame* at = brk->add_user_stack();
  at->set_file("/mnt/project/examples/train.py");
  at->set_line(5);
  v1::SourceFile* train = head.add_sources();
  train->set_path("/mnt/project/examples/train.py");
  train->set_text(
      "import torch\n@torch.compile\ndef step(x):\n    y = x * 2\n    if y.sum() > 0:\n        "
      "return y\n"
      "    return x\ndef broken(:\n");
  const v1::AnalysisReport report = testing::RunPassOk(LintPass(), head);
  const v1::LintSection& s = report.lint();
  ASSERT_EQ(s.findings_size(), 2);
  EXPECT_EQ(s.findings(0).pattern(), "in_place_op_on_alias");
  const v1::LintFinding& branch = s.findings(1);
  EXPECT_EQ(branch.pattern(), "data_dependent_control_flow");
  EXPECT_EQ(branch.location().file(), "examples/train.py");
  EXPECT_EQ(branch.location().line(), 5u);
  EXPECT_EQ(branch.trigger(), "graph break: Data-dependent branching");
  ASSERT_EQ(report.diagnostics_size(), 1);
  EXPECT_EQ(report.diagnostics(0).where(), "lint examples/train.py:8");
  EXPECT_THAT(report.diagnostics(0).message(), HasSubstr("a syntax error at line 8"));
  const std::string section = Section(RenderHtml(report), "lint");
  EXPECT_THAT(section, HasSubstr("<td><code>graph break: Data-dependent branching</code></td>"));
}

// Lines the seed's hero does not need appear when there is something to say: findings in files no
// root reaches, suppressed findings, and (rated) why a severity moved.
TEST(LintPassTest, AssumedSuppressedAndVersionNotes) {
  v1::SessionCapture head = testing::LoadHero("head.cls.json");
  head.mutable_session()->set_torch_version("2.3.1");
  v1::SourceFile* lib = head.add_sources();
  lib->set_path("/mnt/project/examples/lib.py");
  lib->set_text(
      "import random\ndef helper(x):\n    return x * random.random()\n"
      "def other(x):\n    random.shuffle(x)  # compile-lens: ignore[python_random_in_compiled]\n");
  const v1::AnalysisReport plain = testing::RunPassOk(LintPass(), head);
  ASSERT_EQ(plain.lint().findings_size(), 2);
  EXPECT_FALSE(plain.lint().findings(0).assumed_compiled());  // the hero's
  EXPECT_TRUE(plain.lint().findings(1).assumed_compiled());
  EXPECT_EQ(plain.lint().suppressed(), 1u);
  ASSERT_EQ(plain.lint().assumed_files_size(), 1);
  EXPECT_EQ(plain.lint().assumed_files(0), "examples/lib.py");
  std::string section = Section(RenderHtml(plain), "lint");
  EXPECT_THAT(
      section,
      HasSubstr("<p class=\"muted\">1 finding in files no compiled root reaches, scanned as if "
                "compiled.</p>"));
  EXPECT_THAT(section, HasSubstr("<p class=\"muted\">1 finding suppressed by <code># compile-lens: "
                                 "ignore[…]</code>.</p>"));

  const v1::AnalysisReport rated = RunWith(head, ShippedDb());
  section = Section(RenderHtml(rated), "lint");
  EXPECT_THAT(section, HasSubstr("(severity lowered one step)"));
  EXPECT_THAT(
      section,
      HasSubstr("<p class=\"muted\"><code>python_random_in_compiled</code> at "
                "<code>{repo}/examples/lib.py:3</code>: no compiled root reaches this file: "
                "scanned as if compiled, severity lowered one step</p>"));
}

TEST(LintPassTest, Cancelled) {
  EXPECT_THAT(testing::RunPassCancelled(LintPass(), testing::LoadHero("head.cls.json")),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("cancelled")));
}

}  // namespace
}  // namespace cl

// cl-client check and run as a CI job runs them: the real binary on the torch sandbox's health pair
// (a head with one more graph break than its base), commands that write a real trace, exit codes
// and signals, and the SARIF it writes validated by Microsoft's SARIF multitool (with GitHub's
// ingestion rules).
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/binaries.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/subprocess.h"

namespace cl {
namespace {

namespace fs = std::filesystem;
using ::cl::testing::kClientBinary;
using ::cl::testing::RunCommand;
using ::cl::testing::RunResult;
using ::cl::testing::TmpPath;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Pair(const std::string& mode) {
  return testing::FixturePath("torch_trace/torch-2.6/health-" + mode + "/trace.log");
}

TEST(CheckTest, ANewGraphBreakFailsTheGateAndNamesItsLocation) {
  const std::string md = TmpPath("check.md");
  const RunResult gated =
      RunCommand({kClientBinary, "check", Pair("head"), "--base", Pair("base"),
                  "--no-new-graph-breaks", "--markdown", md, "--color", "never"});
  EXPECT_EQ(gated.exit_code, 5) << gated.stderr_text;
  EXPECT_THAT(gated.stdout_text, HasSubstr("gate FAILED: 1 new graph break: Tensor.item at "));
  EXPECT_THAT(gated.stderr_text,
              HasSubstr("cl-client: gate failed: 1 new graph break: Tensor.item at "));
  EXPECT_THAT(gated.stderr_text, HasSubstr("health.py:39 (--no-new-graph-breaks)"));
  EXPECT_THAT(*ReadFile(md), HasSubstr("**1 of 1 gates failed**"));

  // The same pair passes without the gate, and a gate it meets.
  const RunResult ungated = RunCommand({kClientBinary, "check", Pair("head"), "--base",
                                        Pair("base"), "--max-graph-breaks", "6", "--quiet"});
  EXPECT_EQ(ungated.exit_code, 0) << ungated.stderr_text;
  const RunResult plain =
      RunCommand({kClientBinary, "analyze", Pair("head"), "--base", Pair("base"), "--quiet"});
  EXPECT_EQ(plain.exit_code, 0) << plain.stderr_text;
}

TEST(CheckTest, UsageErrors) {
  for (const auto& [args, error] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"check", Pair("head")}, "check needs a gate"},
           {{"check", Pair("head"), "--no-new-graph-breaks"}, "give --base"},
           {{"check", Pair("head"), "--max-regression", "compile_time=10%"}, "give --base"},
           {{"check", Pair("head"), "--fail-on", "crashes"}, "\"crashes\" is not one of"},
           {{"check", Pair("head"), "--fail-on-lint", "error"}, "--fail-on-lint needs --db"},
           {{"check", Pair("head"), "--gates", "/nonexistent.toml"}, "/nonexistent.toml"},
           {{"run", "true"}, "run takes the command after --"},
           // Found before the log is read (this one does not exist).
           {{"upload", "/nonexistent.log", "--server", "127.0.0.1:1", "--no-new-graph-breaks"},
            "upload sends one session: --no-new-graph-breaks has no base to compare with"},
           {{"analyze", Pair("head"), "--max-graph-breaks", "1"}, "analyze does not take"},
       }) {
    std::vector<std::string> argv = {kClientBinary};
    argv.insert(argv.end(), args.begin(), args.end());
    const RunResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args.back() << ": " << r.stderr_text;
    EXPECT_THAT(r.stderr_text, HasSubstr(error));
  }
}

TEST(CheckTest, AGateFileHoldsTheGates) {
  const std::string gates = TmpPath("gates.toml");
  ASSERT_TRUE(WriteFile(gates, "no_new_graph_breaks = true\nmax_recompiles = 100\n").ok());
  const RunResult r = RunCommand(
      {kClientBinary, "check", Pair("head"), "--base", Pair("base"), "--gates", gates, "--quiet"});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_THAT(r.stderr_text, HasSubstr("new graph break"));
  ASSERT_TRUE(WriteFile(gates, "max_recompile = 1\n").ok());
  const RunResult bad = RunCommand({kClientBinary, "check", Pair("head"), "--gates", gates});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.stderr_text, HasSubstr(gates + ":1: unknown gate \"max_recompile\""));
}

// The SARIF of the hero (its lint finding rated by the correctness DB, its recompiles) and of the
// graph-break scene passes the multitool's schema and GitHub rules with no error or warning.
TEST(SarifTest, TheMultitoolValidatesTheHeroAndAGraphBreakScene) {
  ASSERT_TRUE(fs::exists(CL_SARIF_MULTITOOL))
      << CL_SARIF_MULTITOOL << " not found: run scripts/setup.sh";
  const std::string hero = TmpPath("hero.sarif"), breaks = TmpPath("breaks.sarif");
  RunResult r =
      RunCommand({kClientBinary, "analyze", CL_SOURCE_DIR "/examples/hero/head.cls.json", "--db",
                  CL_SOURCE_DIR "/lint/correctness.toml", "--sarif", hero, "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  r = RunCommand({kClientBinary, "analyze",
                  testing::FixturePath("torch_trace/torch-2.6/break_families/trace.log"), "--sarif",
                  breaks, "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  for (const std::string& sarif : {hero, breaks}) {
    SCOPED_TRACE(sarif);
    const std::string out = sarif + ".validation.sarif";
    const RunResult v =
        RunCommand({CL_SARIF_MULTITOOL, "validate", sarif, "-o", out, "--json-schema",
                    fs::path(CL_SARIF_MULTITOOL).parent_path() / "sarif-2.1.0.json", "--rule-kind",
                    "Sarif;Gh", "--log", "ForceOverwrite"});
    ASSERT_EQ(v.exit_code, 0) << v.stdout_text << v.stderr_text;
    google::protobuf::Struct log;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*ReadFile(out), &log).ok());
    const auto& results = log.fields().at("runs").list_value().values(0).struct_value().fields();
    if (results.contains("results")) {
      for (const auto& result : results.at("results").list_value().values()) {
        const auto& f = result.struct_value().fields();
        const std::string level = f.contains("level") ? f.at("level").string_value() : "warning";
        EXPECT_THAT(level, Not(::testing::AnyOf("error", "warning")))
            << f.at("ruleId").string_value() << ": " << v.stdout_text;
      }
    }
    // What it holds: results at user lines, rules of every kind the scene has.
    const std::string text = *ReadFile(sarif);
    EXPECT_THAT(text, HasSubstr("\"startLine\""));
    if (sarif == hero) {
      EXPECT_THAT(text, HasSubstr("\"lint/in_place_op_on_alias\""));
      EXPECT_THAT(text, HasSubstr("\"recompile/size\""));
      EXPECT_THAT(text, HasSubstr("LintInPlaceOpOnAlias"));
    } else {
      EXPECT_THAT(text, HasSubstr("\"graph-break/data_dependent_branch\""));
      EXPECT_THAT(text, HasSubstr("\"graph-break/scalar_extraction\""));
      EXPECT_THAT(text, HasSubstr("\"compile-failure/"));
    }
  }
}

// A stand-in for a training job: copies a real torch 2.6 log where TORCH_TRACE says, then exits
// with `code`.
std::vector<std::string> WritesATrace(int code) {
  return {"sh", "-c",
          absl::StrCat("zcat -f '", Pair("head"), "' > \"$TORCH_TRACE/dedicated_log_torch_trace_",
                       "job.log\" && exit ", code)};
}

TEST(RunTest, AnalyzesWhatTheCommandWroteAndExitsWithItsCode) {
  const std::string out = TmpPath("run-ok");
  fs::remove_all(out);
  std::vector<std::string> argv = {kClientBinary, "run", "--out", out, "--quiet", "--"};
  for (const std::string& a : WritesATrace(3)) argv.push_back(a);
  const RunResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 3) << r.stderr_text;
  EXPECT_THAT(*ReadFile(out + "/report.json"), HasSubstr("\"health\""));
  EXPECT_TRUE(fs::exists(out + "/report.html"));
  EXPECT_TRUE(fs::exists(out + "/trace/dedicated_log_torch_trace_job.log"));

  // A gate that fails turns the command's 0 into 5.
  const std::string gated = TmpPath("run-gated");
  fs::remove_all(gated);
  argv = {kClientBinary, "run", "--out", gated, "--max-graph-breaks", "0", "--quiet", "--"};
  for (const std::string& a : WritesATrace(0)) argv.push_back(a);
  const RunResult g = RunCommand(argv);
  EXPECT_EQ(g.exit_code, 5);
  EXPECT_THAT(g.stderr_text, HasSubstr("gate failed: graph breaks 6 > 0"));

  // The same folder again is refused: its trace would mix with the last one's.
  const RunResult again = RunCommand({kClientBinary, "run", "--out", gated, "--", "true"});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.stderr_text, HasSubstr("already holds a trace"));
}

TEST(RunTest, ACommandThatWroteNoTraceIsToldSo) {
  const std::string out = TmpPath("run-none");
  fs::remove_all(out);
  const RunResult r = RunCommand({kClientBinary, "run", "--out", out, "--", "sh", "-c", "exit 0"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.stderr_text, HasSubstr("sh wrote no TORCH_TRACE log"));
  EXPECT_THAT(r.stderr_text, HasSubstr("did it call torch.compile?"));
  fs::remove_all(out);
  const RunResult gated =
      RunCommand({kClientBinary, "run", "--out", out, "--max-graph-breaks", "0", "--", "true"});
  EXPECT_EQ(gated.exit_code, 5);
  const RunResult missing = RunCommand(
      {kClientBinary, "run", "--out", TmpPath("run-missing"), "--", "/nonexistent/python3"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_THAT(missing.stderr_text, HasSubstr("/nonexistent/python3: cannot run it"));
}

// SIGINT sent to cl-client (a CI runner cancelling the job) reaches the command, which handles it
// its own way; run exits with the command's code and still analyzes what it wrote.
TEST(RunTest, SigintReachesTheCommand) {
  const std::string out = TmpPath("run-sigint");
  fs::remove_all(out);
  const std::string script = absl::StrCat(
      "trap 'echo interrupted > \"$TORCH_TRACE/../interrupted\"; exit 42' INT; zcat -f '",
      Pair("base"), "' > \"$TORCH_TRACE/dedicated_log_torch_trace_job.log\"; touch ",
      "\"$TORCH_TRACE/../ready\"; while :; do sleep 0.05; done");
  testing::Subprocess run(
      {kClientBinary, "run", "--out", out, "--quiet", "--", "sh", "-c", script});
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!fs::exists(out + "/ready") && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(20));
  ASSERT_TRUE(fs::exists(out + "/ready"));
  run.Signal(SIGINT);
  EXPECT_EQ(run.Wait(), 42);
  EXPECT_THAT(*ReadFile(out + "/interrupted"), HasSubstr("interrupted"));
  EXPECT_THAT(*ReadFile(out + "/report.json"), HasSubstr("\"graph_breaks\""));
}

// examples/ci/compile-health.sh, as a CI job runs it: gated on examples/ci/gates.toml against the
// base, the new break fails the job (5) and the SARIF and the summary are left for the CI system.
TEST(ExampleCiTest, TheExampleScriptFailsTheNewBreakAndLeavesItsFiles) {
  const std::string out = TmpPath("example-ci");
  const std::string summary = TmpPath("step-summary.md");
  fs::remove_all(out);
  fs::remove(summary);
  std::vector<std::string> argv = {"/usr/bin/env",
                                   absl::StrCat("CL_CLIENT=", kClientBinary),
                                   absl::StrCat("CL_BASE=", Pair("base")),
                                   "CL_GATES=" CL_SOURCE_DIR "/examples/ci/gates.toml",
                                   absl::StrCat("CL_OUT=", out),
                                   absl::StrCat("GITHUB_STEP_SUMMARY=", summary),
                                   CL_SOURCE_DIR "/examples/ci/compile-health.sh"};
  for (const std::string& a : WritesATrace(0)) argv.push_back(a);
  const RunResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 5) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr("gate failed: 1 new graph break"));
  EXPECT_THAT(*ReadFile(out + "/compile-lens.sarif"),
              HasSubstr("\"graph-break/scalar_extraction\""));
  EXPECT_THAT(*ReadFile(summary), HasSubstr("### New graph breaks"));
  EXPECT_TRUE(fs::exists(out + "/site/index.html"));
}

}  // namespace
}  // namespace cl

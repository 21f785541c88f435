// The real binaries: cl-server on port 0 (reading the bound address from its first stderr line),
// cl-client streaming the hero session to it, and the same session analyzed in-process. The JSON
// reports must be equal. Then bad input through the CLI, and SIGTERM draining the server.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "capture/capture_io.h"
#include "client/commands.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "service/analysis.h"
#include "service/render/render.h"
#include "tests/testing/binaries.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/subprocess.h"

namespace cl {
namespace {

using ::cl::testing::kClientBinary;
using ::cl::testing::kHeroBase;
using ::cl::testing::kHeroHead;
using ::cl::testing::kServerBinary;
using ::cl::testing::RunCommand;
using ::cl::testing::RunResult;
using ::cl::testing::Subprocess;
using ::cl::testing::TmpPath;
using ::testing::HasSubstr;

class E2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<Subprocess>(std::vector<std::string>{
        kServerBinary, "--listen=127.0.0.1:0", "--drain_delay=0s", "--analysis_threads=2"});
    absl::StatusOr<std::string> address = server_->ReadAnnounced("cl-server: listening on ");
    ASSERT_TRUE(address.ok()) << address.status();
    address_ = *address;
  }

  std::unique_ptr<Subprocess> server_;
  std::string address_;
};

TEST_F(E2eTest, RemoteAndEmbeddedRunsGiveTheSameReport) {
  const RunResult remote = RunCommand({kClientBinary, "analyze", kHeroHead, "--base", kHeroBase,
                                       "--server", address_, "--json", TmpPath("remote.json"),
                                       "--html", TmpPath("remote.html"), "--color=never"});
  ASSERT_EQ(remote.exit_code, 0) << remote.stderr_text;
  const RunResult local =
      RunCommand({kClientBinary, "analyze", kHeroHead, "--base", kHeroBase, "--json",
                  TmpPath("local.json"), "--html", TmpPath("local.html"), "--color=never"});
  ASSERT_EQ(local.exit_code, 0) << local.stderr_text;

  absl::StatusOr<std::string> remote_json = ReadFile(TmpPath("remote.json"));
  absl::StatusOr<std::string> local_json = ReadFile(TmpPath("local.json"));
  ASSERT_TRUE(remote_json.ok() && local_json.ok());
  EXPECT_EQ(*remote_json, *local_json);
  EXPECT_EQ(*ReadFile(TmpPath("remote.html")), *ReadFile(TmpPath("local.html")));
  // The same summary; each ends by naming its own files.
  EXPECT_EQ(absl::StrReplaceAll(remote.stdout_text, {{"remote.", "OUT."}}),
            absl::StrReplaceAll(local.stdout_text, {{"local.", "OUT."}}));

  // The report says what the seed says about recompiles.
  absl::StatusOr<v1::AnalysisReport> report = ParseReportJson(*remote_json);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->recompile().total(), 3u);
  ASSERT_EQ(report->recompile().clusters_size(), 1);
  EXPECT_EQ(report->recompile().clusters(0).axis(), "x[0]");
  EXPECT_THAT(report->recompile().clusters(0).transitions(),
              ::testing::ElementsAre("16→32", "16→64", "16→128"));
  EXPECT_THAT(remote.stdout_text, HasSubstr("recompile"));
}

const std::string kHeadTrace = CL_SOURCE_DIR "/examples/hero/traces/head.log";

TEST_F(E2eTest, ATraceAnalyzedHereOrImportedByTheServerGivesTheSameReport) {
  const RunResult local =
      RunCommand({kClientBinary, "analyze", kHeadTrace, "--no-sources", "--gpu", "A100-SXM-80GB",
                  "--label", "model=hero", "--json", TmpPath("trace-local.json")});
  ASSERT_EQ(local.exit_code, 0) << local.stderr_text;
  const RunResult raw =
      RunCommand({kClientBinary, "analyze", kHeadTrace, "--server", address_, "--raw", "--gpu",
                  "A100-SXM-80GB", "--label", "model=hero", "--json", TmpPath("trace-raw.json")});
  ASSERT_EQ(raw.exit_code, 0) << raw.stderr_text;
  EXPECT_EQ(*ReadFile(TmpPath("trace-local.json")), *ReadFile(TmpPath("trace-raw.json")));
  absl::StatusOr<v1::AnalysisReport> report = ParseReportJson(*ReadFile(TmpPath("trace-raw.json")));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->recompile().total(), 3u);
  EXPECT_EQ(report->metadata().gpu(), "A100-SXM-80GB");
  EXPECT_EQ(report->metadata().labels().at("model"), "hero");
}

// --gpu reaches the report by one route, the session, whichever way the session is analyzed: the
// metadata section and the roofline show the same GPU (the flag's, over the capture's A100) and the
// roofs are that GPU's.
TEST_F(E2eTest, TheGpuFlagIsTheMetadatasAndTheRooflinesAlikeEveryWay) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> ways = {
      {"in-process", {kHeroHead}},
      {"server", {kHeroHead, "--server", address_}},
      {"raw", {kHeadTrace, "--no-sources", "--server", address_, "--raw"}},
  };
  for (const auto& [way, args] : ways) {
    std::vector<std::string> argv = {kClientBinary, "analyze"};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string json = TmpPath(absl::StrCat("gpu-", way, ".json"));
    argv.insert(argv.end(), {"--gpu", "H100-SXM-80GB", "--json", json});
    const RunResult r = RunCommand(argv);
    ASSERT_EQ(r.exit_code, 0) << way << ": " << r.stderr_text;
    absl::StatusOr<v1::AnalysisReport> report = ParseReportJson(*ReadFile(json));
    ASSERT_TRUE(report.ok()) << way << ": " << report.status();
    EXPECT_EQ(report->metadata().gpu(), "H100-SXM-80GB") << way;
    EXPECT_EQ(report->roofline().gpu(), report->metadata().gpu()) << way;
    EXPECT_DOUBLE_EQ(report->roofline().bandwidth(), 3350e9) << way;
  }
}

TEST_F(E2eTest, ImportTraceWritesACapture) {
  const RunResult r = RunCommand({kClientBinary, "import-trace", kHeadTrace, "-o",
                                  TmpPath("imported.cls.json"), "--project-root", "/mnt/project"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(r.stdout_text, HasSubstr("4 compiles"));
  const RunResult again = RunCommand(
      {kClientBinary, "analyze", TmpPath("imported.cls.json"), "--json", TmpPath("imported.json")});
  ASSERT_EQ(again.exit_code, 0) << again.stderr_text;
  EXPECT_EQ(RunCommand({kClientBinary, "import-trace", kHeadTrace}).exit_code, 2)
      << "-o is required";
  const RunResult missing =
      RunCommand({kClientBinary, "import-trace", "/nonexistent.log", "-o", TmpPath("x.cls.json")});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_THAT(missing.stderr_text, HasSubstr("/nonexistent.log"));
}

// One log to .cls.pb is written graph by graph as the import goes (WriteCapturePbAsMade), and to
// .cls.json printed around the graphs' text as the import wrote it (WriteCaptureJsonAsMade); from
// a directory, the capture is made first. Each reads back as the same capture, record texts, every
// graph's nodes and the source files included, and the two JSON files are the same bytes; a log
// that is refused leaves no file.
TEST_F(E2eTest, ImportTraceToBinaryIsTheSameCapture) {
  const std::string pb = TmpPath("streamed.cls.pb"), json = TmpPath("whole.cls.json");
  const std::string dir = TmpPath("one-log-dir");
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kHeadTrace, dir + "/head.log",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string from_dir = TmpPath("from-dir.cls.pb");
  const std::string from_dir_json = TmpPath("from-dir.cls.json");
  for (const auto& [in, out] : std::vector<std::pair<std::string, std::string>>{
           {kHeadTrace, pb}, {kHeadTrace, json}, {dir, from_dir}, {dir, from_dir_json}}) {
    const RunResult r =
        RunCommand({kClientBinary, "import-trace", in, "-o", out, "--project-root", "/mnt/project",
                    "--path-map", "/mnt/project/examples=" CL_SOURCE_DIR "/examples/hero"});
    ASSERT_EQ(r.exit_code, 0) << out << ": " << r.stderr_text;
    EXPECT_THAT(r.stdout_text, HasSubstr("4 compiles")) << out;
  }
  absl::StatusOr<v1::SessionCapture> streamed = ReadCaptureFile(pb);
  absl::StatusOr<v1::SessionCapture> whole = ReadCaptureFile(json);
  absl::StatusOr<v1::SessionCapture> directory = ReadCaptureFile(from_dir);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(directory.ok()) << directory.status();
  EXPECT_GT(streamed->sources_size(), 0) << "the files the dropped nodes name are still read";
  EXPECT_GT(streamed->records_size(), 0);
  ASSERT_GT(streamed->graphs_size(), 0);
  for (const v1::Graph& g : streamed->graphs()) EXPECT_GT(g.nodes_size(), 0) << g.id();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*streamed, *whole));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*directory, *whole));
  EXPECT_EQ(*ReadFile(json), *ReadFile(from_dir_json));

  const std::string refused = TmpPath("refused.cls.pb");
  const std::string not_a_log = TmpPath("not-a-log.txt");
  ASSERT_TRUE(WriteFile(not_a_log, "just some text\n").ok());
  EXPECT_EQ(RunCommand({kClientBinary, "import-trace", not_a_log, "-o", refused}).exit_code, 3);
  EXPECT_FALSE(std::filesystem::exists(refused));
}

TEST_F(E2eTest, EveryRankOfAMultiRankDirectory) {
  const std::string dir =
      testing::FixturePath("torch_trace/tlparse-corpus/tlparse/multi_rank_logs");
  const RunResult r = RunCommand(
      {kClientBinary, "analyze", dir, "--all-ranks", "--no-sources", "--json", TmpPath("mr.json")});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  for (int rank = 0; rank < 4; ++rank) {
    absl::StatusOr<std::string> json = ReadFile(TmpPath(absl::StrCat("mr.rank", rank, ".json")));
    ASSERT_TRUE(json.ok()) << rank;
    absl::StatusOr<v1::AnalysisReport> report = ParseReportJson(*json);
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report->ranks().status(), v1::OK);
    EXPECT_EQ(report->metadata().rank(), rank);
  }
  // One rank, chosen; its report carries the cross-rank section naming the storm on rank 1.
  const RunResult one = RunCommand(
      {kClientBinary, "analyze", dir, "--rank", "1", "--no-sources", "--json", TmpPath("r1.json")});
  ASSERT_EQ(one.exit_code, 0) << one.stderr_text;
  absl::StatusOr<v1::AnalysisReport> report = ParseReportJson(*ReadFile(TmpPath("r1.json")));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->recompile().total(), 14u);
  bool rank1_diverges = false;
  for (const v1::RankDivergence& d : report->ranks().divergences()) {
    for (int rank : d.ranks()) rank1_diverges |= rank == 1;
  }
  EXPECT_TRUE(rank1_diverges);
}

// --html-dir: here, from the server (--raw), and one site per rank; a file in its place is a usage
// error naming the flag.
TEST_F(E2eTest, TheSiteIsWrittenHereFromTheServerAndPerRank) {
  namespace fs = std::filesystem;
  const std::string log = testing::FixturePath("torch_trace/torch-2.6/specialize/trace.log");
  const std::string here = TmpPath("site-here"), there = TmpPath("site-raw");
  fs::remove_all(here);
  fs::remove_all(there);
  const RunResult local = RunCommand({kClientBinary, "analyze", log, "--html-dir", here});
  ASSERT_EQ(local.exit_code, 0) << local.stderr_text;
  EXPECT_THAT(local.stdout_text, HasSubstr("and 3 compile pages"));
  const RunResult raw = RunCommand(
      {kClientBinary, "analyze", log, "--server", address_, "--raw", "--html-dir", there});
  ASSERT_EQ(raw.exit_code, 0) << raw.stderr_text;
  EXPECT_THAT(raw.stdout_text, HasSubstr("and 3 compile pages"));
  for (const char* page :
       {"index.html", "compiles/0_0_0.html", "compiles/1_0_0.html", "compiles/2_0_0.html"}) {
    ASSERT_TRUE(fs::exists(fs::path(here) / page)) << page;
    ASSERT_TRUE(fs::exists(fs::path(there) / page)) << page;
    if (absl::StartsWith(page, "compiles/")) {
      EXPECT_EQ(*ReadFile((fs::path(here) / page).string()),
                *ReadFile((fs::path(there) / page).string()))
          << page;
    }
  }
  const std::string ranks = TmpPath("site-ranks");
  fs::remove_all(ranks);
  const RunResult all =
      RunCommand({kClientBinary, "analyze",
                  testing::FixturePath("torch_trace/tlparse-corpus/tlparse/multi_rank_logs"),
                  "--all-ranks", "--no-sources", "--html-dir", ranks, "--quiet"});
  ASSERT_EQ(all.exit_code, 0) << all.stderr_text;
  for (int rank = 0; rank < 4; ++rank) {
    const fs::path compiles = fs::path(ranks) / absl::StrCat("rank", rank) / "compiles";
    ASSERT_TRUE(fs::is_directory(compiles)) << rank;
    EXPECT_TRUE(fs::exists(compiles / "0_0_0.html")) << rank;  // each rank's own capture
  }
  ASSERT_TRUE(WriteFile(TmpPath("site-file"), "x").ok());
  const RunResult bad =
      RunCommand({kClientBinary, "analyze", log, "--html-dir", TmpPath("site-file")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.stderr_text, HasSubstr("--html-dir"));
}

// --trace-events: one file, one process per rank with --all-ranks; --base explains cache misses.
TEST_F(E2eTest, TraceEventsAndCacheKeyDiffsFromTheCommandLine) {
  const std::string cold = testing::FixturePath("torch_trace/torch-2.6/cache-cold/trace.log");
  const std::string config = testing::FixturePath("torch_trace/torch-2.6/cache-config/trace.log");
  const std::string events = TmpPath("config.trace.json"), json = TmpPath("config.report.json");
  const RunResult run = RunCommand(
      {kClientBinary, "analyze", config, "--base", cold, "--trace-events", events, "--json", json});
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  EXPECT_THAT(run.stdout_text, HasSubstr("compile-time: "));
  EXPECT_THAT(run.stdout_text, HasSubstr("wrote " + events));
  EXPECT_THAT(*ReadFile(json), HasSubstr("inductor_config[unroll_reductions_threshold]"));
  EXPECT_THAT(*ReadFile(events), HasSubstr("\"compile 0/4 step\""));

  const std::string ranks = TmpPath("ranks.trace.json");
  const RunResult all =
      RunCommand({kClientBinary, "analyze",
                  testing::FixturePath("torch_trace/tlparse-corpus/tlparse/multi_rank_logs"),
                  "--all-ranks", "--no-sources", "--trace-events", ranks, "--quiet"});
  ASSERT_EQ(all.exit_code, 0) << all.stderr_text;
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_THAT(*ReadFile(ranks), HasSubstr(absl::StrCat("\"rank ", rank, "\""))) << rank;

  const RunResult raw = RunCommand(
      {kClientBinary, "analyze", cold, "--server", address_, "--raw", "--trace-events", events});
  EXPECT_EQ(raw.exit_code, 2);
  EXPECT_THAT(raw.stderr_text, HasSubstr("--trace-events"));
}

// The gates travel in the request and run on the server: a job's teardown upload fails the job
// (exit 5) with the server's gate lines; the check command gets the same answer remotely.
TEST_F(E2eTest, GatesRunOnTheServer) {
  const std::string head = testing::FixturePath("torch_trace/torch-2.6/health-head/trace.log");
  const std::string base = testing::FixturePath("torch_trace/torch-2.6/health-base/trace.log");
  const RunResult upload =
      RunCommand({kClientBinary, "upload", head, "--server", address_, "--max-graph-breaks", "2"});
  EXPECT_EQ(upload.exit_code, 5) << upload.stderr_text;
  EXPECT_THAT(upload.stderr_text,
              HasSubstr("gate failed: graph breaks 6 > 2 (--max-graph-breaks 2)"));
  const RunResult ok = RunCommand(
      {kClientBinary, "upload", head, "--server", address_, "--max-graph-breaks", "6", "--quiet"});
  EXPECT_EQ(ok.exit_code, 0) << ok.stderr_text;
  const RunResult check = RunCommand({kClientBinary, "check", head, "--base", base, "--server",
                                      address_, "--no-new-graph-breaks", "--quiet"});
  EXPECT_EQ(check.exit_code, 5) << check.stderr_text;
  EXPECT_THAT(check.stderr_text, HasSubstr("1 new graph break: Tensor.item at "));
  // A gate no build knows is refused before anything is sent (the server refuses it too:
  // gates_test), and the server stays up.
  const RunResult bad = RunCommand(
      {kClientBinary, "check", head, "--server", address_, "--max-regression", "speed=5%"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.stderr_text, HasSubstr("not a health metric"));
  EXPECT_EQ(RunCommand({kClientBinary, "health", "--server", address_}).exit_code, 0);
}

TEST_F(E2eTest, HealthCheck) {
  const RunResult r = RunCommand({kClientBinary, "health", "--server", address_});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(r.stdout_text, HasSubstr("SERVING"));
}

TEST_F(E2eTest, BadInputGetsAClearErrorAndTheServerStaysUp) {
  ASSERT_TRUE(WriteFile(TmpPath("garbage.cls.json"), "{\"schema\": \"0.5.0\", oops").ok());
  RunResult r =
      RunCommand({kClientBinary, "analyze", TmpPath("garbage.cls.json"), "--server", address_});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.stderr_text, HasSubstr("garbage.cls.json: not a capture"));

  ASSERT_TRUE(WriteFile(TmpPath("old.cls.json"), "{\"schema\": \"0.3.0\"}").ok());
  r = RunCommand({kClientBinary, "analyze", TmpPath("old.cls.json")});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.stderr_text, HasSubstr("this build reads schema 0.5.x"));

  r = RunCommand({kClientBinary, "analyze", kHeroHead, "--server", address_, "--passes", "nope"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.stderr_text, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.stderr_text, HasSubstr("unknown pass \"nope\""));

  r = RunCommand(
      {kClientBinary, "analyze", kHeroHead, "--server", address_, "--json", TmpPath("after.json")});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
}

// What a user gets wrong on the command line is exit 2, with a message that says what to do, before
// any work is done; what the tool is given that is not a trace is exit 3.
TEST_F(E2eTest, UsageMistakesAreExit2AndSayWhatToDo) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--htlm", "x.html"}, "unknown flag --htlm; did you mean --html?"},
      {{"--html"}, "--html needs a value"},
      {{"--deadline=5x"}, "--deadline: \"5x\" is not a valid value (a duration such as 30s"},
      {{"--label", "team"}, "--label takes KEY=VALUE"},
      {{"--html", "/nonexistent/dir/x.html"}, "--html /nonexistent/dir/x.html: cannot be written"},
      {{"--json", "/"}, "--json /: is a directory"},
      {{"--gpu", "Foo"}, "--gpu Foo: not a GPU compile-lens knows (A100-SXM-80GB,"},
      {{"-o", "x.cls.json"}, "analyze does not take --o"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {kClientBinary, "analyze", kHeroHead};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const RunResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.stderr_text;
    EXPECT_THAT(r.stderr_text, HasSubstr(c.says));
    EXPECT_THAT(r.stderr_text, HasSubstr("Run 'cl-client help analyze' for usage."));
  }
  const RunResult typo = RunCommand({kClientBinary, "anlyze", kHeroHead});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_THAT(typo.stderr_text, HasSubstr("unknown command \"anlyze\"; did you mean analyze?"));
}

TEST_F(E2eTest, HelpIsPerCommandAndVersionSaysTheBuild) {
  for (const std::vector<std::string>& form : {std::vector<std::string>{"help", "import-trace"},
                                               {"import-trace", "--help"},
                                               {"import-trace", "-h"}}) {
    std::vector<std::string> argv = {kClientBinary};
    argv.insert(argv.end(), form.begin(), form.end());
    const RunResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << form[0];
    EXPECT_THAT(r.stdout_text, HasSubstr("cl-client import-trace LOG|DIR -o OUT.cls.json"));
    EXPECT_THAT(r.stdout_text, HasSubstr("--path-map"));
    EXPECT_THAT(r.stdout_text, HasSubstr("Examples:"));
    // Its own flags only: not analyze's, not the transport's, not abseil's.
    for (const char* other : {"--html", "--server", "--tls-ca", "--helpfull", "--flagfile"})
      EXPECT_THAT(r.stdout_text, ::testing::Not(HasSubstr(other))) << other;
  }
  // Every flag the command table gives a command is in that command's help: a flag the binary
  // does not define would be left out silently.
  for (const cl::CommandHelp& command : cl::Commands()) {
    const RunResult r = RunCommand({kClientBinary, "help", command.name});
    EXPECT_EQ(r.exit_code, 0) << command.name;
    for (std::string flag : command.flags) {
      std::replace(flag.begin(), flag.end(), '_', '-');
      EXPECT_THAT(r.stdout_text, HasSubstr("\n  --" + flag)) << command.name << " --" << flag;
    }
  }
  const RunResult top = RunCommand({kClientBinary, "-h"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_THAT(top.stdout_text, HasSubstr("Exit codes:"));
  const RunResult version = RunCommand({kClientBinary, "--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.stdout_text, ::testing::MatchesRegex("cl-client [0-9.]+ \\(.+\\)\n"));
}

TEST_F(E2eTest, WhatIsNotATraceIsExit3InProcessAndOnTheServer) {
  ASSERT_TRUE(WriteFile(TmpPath("empty.log"), "").ok());
  ASSERT_TRUE(WriteFile(TmpPath("hello.log"), "hello\n").ok());
  for (const char* name : {"empty.log", "hello.log"}) {
    for (bool raw : {false, true}) {
      std::vector<std::string> argv = {kClientBinary, "analyze", TmpPath(name)};
      if (raw) argv.insert(argv.end(), {"--server", address_, "--raw"});
      const RunResult r = RunCommand(argv);
      EXPECT_EQ(r.exit_code, 3) << name << " raw=" << raw << "\n" << r.stderr_text;
      EXPECT_THAT(r.stderr_text, HasSubstr("not a TORCH_TRACE log")) << name << " raw=" << raw;
      EXPECT_THAT(r.stderr_text, HasSubstr(name)) << raw;
      if (raw) {
        EXPECT_THAT(r.stderr_text, HasSubstr("INVALID_ARGUMENT"));
      }
    }
  }
  const RunResult after = RunCommand({kClientBinary, "health", "--server", address_});
  EXPECT_EQ(after.exit_code, 0) << after.stderr_text;
}

// multi_rank_runtime/: seven logs, two of them carrying another rank's number inside. --rank
// finds a log by its name, and --all-ranks writes one report per log.
TEST_F(E2eTest, RanksAreTheLogsNames) {
  const std::string dir =
      testing::FixturePath("torch_trace/tlparse-corpus/tlparse/multi_rank_runtime");
  RunResult r = RunCommand({kClientBinary, "analyze", dir, "--rank", "5", "--no-sources", "--quiet",
                            "--json", TmpPath("rt5.json")});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  absl::StatusOr<v1::AnalysisReport> report = ParseReportJson(*ReadFile(TmpPath("rt5.json")));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->metadata().rank(), 5);
  r = RunCommand({kClientBinary, "analyze", dir, "--all-ranks", "--no-sources", "--quiet", "--json",
                  TmpPath("rt.json")});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  for (int rank = 0; rank < 7; ++rank) {
    absl::StatusOr<std::string> json = ReadFile(TmpPath(absl::StrCat("rt.rank", rank, ".json")));
    ASSERT_TRUE(json.ok()) << rank;
    EXPECT_EQ(ParseReportJson(*json)->metadata().rank(), rank);
  }
}

TEST_F(E2eTest, TheSummaryEndsWithWhereTheReportsWent) {
  const std::string html = TmpPath("where.html"), json = TmpPath("where.json");
  const RunResult r =
      RunCommand({kClientBinary, "analyze", kHeroHead, "--html", html, "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_TRUE(absl::EndsWith(r.stdout_text, "wrote " + html + "\nwrote " + json + "\n"))
      << r.stdout_text;
}

TEST_F(E2eTest, UnreachableServerIsExitCode4) {
  const RunResult r = RunCommand(
      {kClientBinary, "analyze", kHeroHead, "--server", "127.0.0.1:1", "--deadline", "3s"});
  EXPECT_EQ(r.exit_code, 4) << r.stderr_text;
}

TEST_F(E2eTest, UsageErrors) {
  EXPECT_EQ(RunCommand({kClientBinary}).exit_code, 2);
  EXPECT_EQ(RunCommand({kClientBinary, "frobnicate"}).exit_code, 2);
  EXPECT_EQ(RunCommand({kClientBinary, "health"}).exit_code, 2);
  const RunResult help = RunCommand({kClientBinary, "--help"});
  EXPECT_THAT(help.stdout_text + help.stderr_text, HasSubstr("cl-client analyze"));
  const RunResult server_help = RunCommand({kServerBinary, "--help"});
  EXPECT_THAT(server_help.stdout_text + server_help.stderr_text, HasSubstr("--max_inflight"));
}

// --help states the bounds on what a report echoes and what lint reads, made from the limits.
TEST_F(E2eTest, HelpStatesTheLimitsTheCodeEnforces) {
  const std::string limits = AnalysisLimitsText();
  EXPECT_THAT(limits, HasSubstr("longer than 16 KiB"));
  EXPECT_THAT(limits, HasSubstr("over 4 MiB or 100000 lines"));
  EXPECT_THAT(limits, HasSubstr("past 8 MiB of source"));
  const RunResult server = RunCommand({kServerBinary, "--help"});
  const RunResult client = RunCommand({kClientBinary, "help", "analyze"});
  EXPECT_THAT(server.stdout_text + server.stderr_text, HasSubstr(limits));
  EXPECT_THAT(client.stdout_text + client.stderr_text, HasSubstr(limits));
}

TEST_F(E2eTest, SigtermDrainsAndExitsZero) {
  server_->Signal(SIGTERM);
  EXPECT_EQ(server_->Wait(), 0);
  const std::string rest = server_->ReadStderrToEnd();
  EXPECT_THAT(rest, HasSubstr("draining"));
  EXPECT_THAT(rest, HasSubstr("drained, exiting"));
}

}  // namespace
}  // namespace cl

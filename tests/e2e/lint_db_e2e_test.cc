// The correctness DB through the real binaries: `cl-client --db` in-process and on a server gives
// the same rated report; an invalid DB is exit code 3 with the line named, either way; cl-server
// --correctness_db rates requests that carry no DB, a request's DB wins, and an invalid server DB
// stops the start with the line named.
#include <string>

#include "absl/strings/match.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/render/render.h"
#include "tests/testing/binaries.h"
#include "tests/testing/subprocess.h"

namespace cl {
namespace {

using ::cl::testing::kClientBinary;
using ::cl::testing::kHeroHead;
using ::cl::testing::kServerBinary;
using ::cl::testing::RunCommand;
using ::cl::testing::RunResult;
using ::cl::testing::Subprocess;
using ::cl::testing::TmpPath;
using ::testing::HasSubstr;

const std::string kDb = CL_SOURCE_DIR "/lint/correctness.toml";

// Line 6 names a severity that does not exist.
constexpr char kBadDb[] =
    "schema_version = 1\n"
    "\n"
    "[[pattern]]\n"
    "id = \"in_place_op_on_alias\"\n"
    "category = \"aliasing\"\n"
    "severity = \"critical\"\n"
    "[pattern.detect]\n"
    "kind = \"inplace_on_alias\"\n";

// Rates the hero's finding `info`.
constexpr char kInfoDb[] =
    "schema_version = 1\n"
    "[[pattern]]\n"
    "id = \"in_place_op_on_alias\"\n"
    "category = \"aliasing\"\n"
    "severity = \"info\"\n"
    "[pattern.detect]\n"
    "kind = \"inplace_on_alias\"\n";

// Starts cl-server with `flags`; the bound address, or "" when it did not come up.
std::string StartServer(std::unique_ptr<Subprocess>& server, std::vector<std::string> flags) {
  flags.insert(flags.begin(),
               {kServerBinary, "--listen=127.0.0.1:0", "--drain_delay=0s", "--analysis_threads=2"});
  server = std::make_unique<Subprocess>(flags);
  return server->ReadAnnounced("cl-server: listening on ").value_or("");
}

v1::AnalysisReport Report(const std::string& path) {
  absl::StatusOr<std::string> json = ReadFile(path);
  EXPECT_TRUE(json.ok()) << path;
  absl::StatusOr<v1::AnalysisReport> report = ParseReportJson(json.ok() ? *json : "");
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *report : v1::AnalysisReport();
}

TEST(LintDbE2eTest, ClientDbInProcessAndRemote) {
  std::unique_ptr<Subprocess> server;
  const std::string address = StartServer(server, {});
  ASSERT_FALSE(address.empty());
  const RunResult local = RunCommand({kClientBinary, "analyze", kHeroHead, "--db", kDb, "--json",
                                      TmpPath("db-local.json"), "--color=never"});
  ASSERT_EQ(local.exit_code, 0) << local.stderr_text;
  const RunResult remote =
      RunCommand({kClientBinary, "analyze", kHeroHead, "--db", kDb, "--server", address, "--json",
                  TmpPath("db-remote.json"), "--color=never"});
  ASSERT_EQ(remote.exit_code, 0) << remote.stderr_text;
  EXPECT_EQ(*ReadFile(TmpPath("db-local.json")), *ReadFile(TmpPath("db-remote.json")));
  const v1::AnalysisReport report = Report(TmpPath("db-remote.json"));
  EXPECT_TRUE(report.lint().escalated());
  ASSERT_EQ(report.lint().findings_size(), 1);
  EXPECT_EQ(report.lint().findings(0).severity(), v1::LintFinding::WARNING);
  EXPECT_EQ(report.lint().findings(0).links(0), "https://github.com/pytorch/pytorch/issues/94777");
  EXPECT_THAT(remote.stdout_text,
              HasSubstr("lint: 1 pattern, rated\n"
                        "  in_place_op_on_alias at examples/hero_scene.py:96 (ast_match, "
                        "warning): z.mul_(0.5)\n"));
}

TEST(LintDbE2eTest, AnInvalidClientDbIsExitCode3NamingTheLine) {
  std::unique_ptr<Subprocess> server;
  const std::string address = StartServer(server, {});
  ASSERT_FALSE(address.empty());
  ASSERT_TRUE(WriteFile(TmpPath("bad.toml"), kBadDb).ok());
  for (const std::vector<std::string>& where :
       {std::vector<std::string>{}, {"--server", address}}) {
    std::vector<std::string> argv = {kClientBinary, "analyze", kHeroHead, "--db",
                                     TmpPath("bad.toml")};
    argv.insert(argv.end(), where.begin(), where.end());
    const RunResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 3) << r.stderr_text;
    EXPECT_THAT(r.stderr_text, HasSubstr("cl-client: INVALID_ARGUMENT: "));
    EXPECT_THAT(r.stderr_text,
                HasSubstr("correctness DB line 6: pattern \"in_place_op_on_alias\": severity "
                          "\"critical\" is not one of error, warning, info"));
  }
  const RunResult missing =
      RunCommand({kClientBinary, "analyze", kHeroHead, "--db", "/nonexistent/correctness.toml"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_THAT(missing.stderr_text, HasSubstr("/nonexistent/correctness.toml"));
  // The server is still up.
  EXPECT_EQ(RunCommand({kClientBinary, "health", "--server", address}).exit_code, 0);
}

TEST(LintDbE2eTest, ServerDbRatesRequestsWithoutOneAndARequestDbWins) {
  std::unique_ptr<Subprocess> server;
  const std::string address = StartServer(server, {"--correctness_db=" + kDb});
  ASSERT_FALSE(address.empty());
  const RunResult plain = RunCommand(
      {kClientBinary, "analyze", kHeroHead, "--server", address, "--json", TmpPath("srv.json")});
  ASSERT_EQ(plain.exit_code, 0) << plain.stderr_text;
  v1::AnalysisReport report = Report(TmpPath("srv.json"));
  EXPECT_TRUE(report.lint().escalated());
  ASSERT_EQ(report.lint().findings_size(), 1);
  EXPECT_EQ(report.lint().findings(0).severity(), v1::LintFinding::WARNING);

  ASSERT_TRUE(WriteFile(TmpPath("info.toml"), kInfoDb).ok());
  const RunResult own = RunCommand({kClientBinary, "analyze", kHeroHead, "--server", address,
                                    "--db", TmpPath("info.toml"), "--json", TmpPath("own.json")});
  ASSERT_EQ(own.exit_code, 0) << own.stderr_text;
  report = Report(TmpPath("own.json"));
  ASSERT_EQ(report.lint().findings_size(), 1);
  EXPECT_EQ(report.lint().findings(0).severity(), v1::LintFinding::INFO);
}

TEST(LintDbE2eTest, AnInvalidServerDbStopsTheStart) {
  ASSERT_TRUE(WriteFile(TmpPath("bad-server.toml"), kBadDb).ok());
  std::unique_ptr<Subprocess> server;
  EXPECT_EQ(StartServer(server, {"--correctness_db=" + TmpPath("bad-server.toml")}), "");
  EXPECT_EQ(server->Wait(), 1);
  std::unique_ptr<Subprocess> missing;
  EXPECT_EQ(StartServer(missing, {"--correctness_db=/nonexistent.toml"}), "");
  EXPECT_EQ(missing->Wait(), 1);
  const RunResult r = RunCommand(
      {kServerBinary, "--listen=127.0.0.1:0", "--correctness_db=" + TmpPath("bad-server.toml")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.stderr_text,
              HasSubstr("cl-server: --correctness_db=" + TmpPath("bad-server.toml") +
                        ": correctness DB line 6: pattern \"in_place_op_on_alias\": severity "
                        "\"critical\" is not one of error, warning, info"));
  const RunResult help = RunCommand({kServerBinary, "--help"});
  EXPECT_THAT(help.stdout_text + help.stderr_text, HasSubstr("--correctness_db"));
  const RunResult client_help = RunCommand({kClientBinary, "--help"});
  EXPECT_THAT(client_help.stdout_text + client_help.stderr_text, HasSubstr("--db"));
}

}  // namespace
}  // namespace cl

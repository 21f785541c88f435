#include "client/command_line.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(std::string, html, "", "test flag");
ABSL_FLAG(std::string, json, "", "test flag");
ABSL_FLAG(bool, sources, true, "test flag");
ABSL_FLAG(absl::Duration, deadline, absl::Seconds(120), "test flag");
ABSL_FLAG(int, rank, -1, "test flag");
ABSL_FLAG(bool, no_new_graph_breaks, false, "test flag: a bool whose own name starts with no_");
ABSL_FLAG(std::string, hidden, "", "a flag this program has but does not accept");

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

bool Accept(absl::string_view name) { return name != "hidden"; }

absl::StatusOr<ParsedCommandLine> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "cl-client");
  return ParseFlags(NormalizeCommandLine(std::move(args)), Accept);
}

TEST(CommandLineTest, DashesBecomeUnderscoresInNamesOnly) {
  EXPECT_THAT(
      NormalizeCommandLine(
          {"cl-client", "import-trace", "a-b.log", "--no-sources", "--session-id=x-y"}),
      ElementsAre("cl-client", "import-trace", "a-b.log", "--nosources", "--session_id=x-y"));
}

// --no-X negates a bool X, unless no_X is a flag of its own (--no-new-graph-breaks).
TEST(CommandLineTest, AFlagNamedNoSomethingIsNotANegation) {
  EXPECT_THAT(NormalizeCommandLine({"cl-client", "check", "--no-new-graph-breaks", "--no-sources"}),
              ElementsAre("cl-client", "check", "--no_new_graph_breaks", "--nosources"));
}

TEST(ParseFlagsTest, RunsCommandIsWhatFollowsTheSeparator) {
  absl::StatusOr<ParsedCommandLine> line = Parse({"run", "--json", "r.json", "--", "python", "-x"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->positional, ElementsAre("run", "python", "-x"));
  ASSERT_TRUE(line->after_dashes.has_value());
  EXPECT_EQ(*line->after_dashes, 1u);
  EXPECT_FALSE(Parse({"analyze", "s.log"})->after_dashes.has_value());
}

TEST(CommandLineTest, AListFlagGivenTwiceKeepsBothOccurrences) {
  EXPECT_THAT(NormalizeCommandLine({"cl-client", "analyze", "s.log", "--label", "cluster=a",
                                    "--gpu", "H100-SXM", "--label=model=llama,team=x"}),
              ElementsAre("cl-client", "analyze", "s.log", "--gpu", "H100-SXM",
                          "--label=cluster=a,model=llama,team=x"));
  EXPECT_THAT(NormalizeCommandLine({"p", "--path-map", "/a=/b", "--passes=lint", "--path_map=/c=/d",
                                    "--passes", "recompile"}),
              ElementsAre("p", "--path_map=/a=/b,/c=/d", "--passes=lint,recompile"));
}

TEST(CommandLineTest, AListFlagGivenOnceOrEmptyIsKeptAsGiven) {
  EXPECT_THAT(NormalizeCommandLine({"p", "--passes="}), ElementsAre("p", "--passes="));
  EXPECT_THAT(NormalizeCommandLine({"p", "--label=a=1"}), ElementsAre("p", "--label=a=1"));
}

TEST(CommandLineTest, NothingAfterTheSeparatorIsTouched) {
  EXPECT_THAT(NormalizeCommandLine({"p", "--label=a=1", "--", "--label=b=2", "--no-sources"}),
              ElementsAre("p", "--label=a=1", "--", "--label=b=2", "--no-sources"));
}

TEST(CommandLineTest, AListFlagLastWithNoValueIsLeftForTheParserToRefuse) {
  EXPECT_THAT(NormalizeCommandLine({"p", "--label"}), ElementsAre("p", "--label"));
}

TEST(ParseFlagsTest, ReadsEveryFormAbseilReads) {
  absl::StatusOr<ParsedCommandLine> line =
      Parse({"analyze", "--html", "a.html", "run.log", "--json=b.json", "-rank", "3",
             "--no-sources", "--deadline=5s", "--", "--not-a-flag"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->positional, ElementsAre("analyze", "run.log", "--not-a-flag"));
  EXPECT_THAT(line->flags, ElementsAre("html", "json", "rank", "sources", "deadline"));
  EXPECT_EQ(absl::GetFlag(FLAGS_html), "a.html");
  EXPECT_EQ(absl::GetFlag(FLAGS_json), "b.json");
  EXPECT_EQ(absl::GetFlag(FLAGS_rank), 3);
  EXPECT_FALSE(absl::GetFlag(FLAGS_sources));
  EXPECT_EQ(absl::GetFlag(FLAGS_deadline), absl::Seconds(5));
  EXPECT_FALSE(line->help);
}

TEST(ParseFlagsTest, HelpAndVersionAreRecognizedAnywhere) {
  for (const char* h : {"-h", "--help", "-help"}) {
    absl::StatusOr<ParsedCommandLine> line = Parse({"analyze", h});
    ASSERT_TRUE(line.ok()) << h;
    EXPECT_TRUE(line->help) << h;
  }
  absl::StatusOr<ParsedCommandLine> line = Parse({"--version"});
  ASSERT_TRUE(line.ok());
  EXPECT_TRUE(line->version);
}

TEST(ParseFlagsTest, AnUnknownFlagSuggestsTheClosestOne) {
  absl::StatusOr<ParsedCommandLine> line = Parse({"analyze", "run.log", "--htlm", "x.html"});
  EXPECT_EQ(line.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(line.status().message(), "unknown flag --htlm; did you mean --html?");
  // Too far from every flag for a guess.
  line = Parse({"--frobnicate=1"});
  EXPECT_EQ(line.status().message(), "unknown flag --frobnicate");
  // A flag the program has but the client does not accept is as unknown as any other.
  line = Parse({"--hidden=1"});
  EXPECT_EQ(line.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParseFlagsTest, AMissingOrBadValueNamesTheFlag) {
  absl::StatusOr<ParsedCommandLine> line = Parse({"analyze", "run.log", "--html"});
  EXPECT_EQ(line.status().message(), "--html needs a value");
  line = Parse({"analyze", "run.log", "--deadline=soon"});
  EXPECT_EQ(line.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(line.status().message(), HasSubstr("--deadline: \"soon\" is not a valid value"));
  line = Parse({"--rank", "three"});
  EXPECT_THAT(line.status().message(), HasSubstr("--rank: \"three\" is not a valid value"));
}

TEST(ClosestNameTest, OnlyAnUnambiguousTypo) {
  const std::vector<std::string> names = {"html", "json", "host", "server", "spool"};
  EXPECT_EQ(ClosestName("htlm", names), "html");
  EXPECT_EQ(ClosestName("sever", names), "server");
  EXPECT_EQ(ClosestName("xyz", names), "");
  EXPECT_EQ(ClosestName("hos", {"host", "hose"}), "");  // two equally close: no guess
}

// (That each command's help lists every one of its flags is checked against the real binary,
// whose main.cc defines them: e2e_test's HelpIsPerCommandAndVersionSaysTheBuild.)
TEST(CommandsTest, CommandsAreFoundByNameAndOnlyTheirFlagsAreTheClients) {
  for (const CommandHelp& c : Commands()) EXPECT_EQ(FindCommand(c.name), &c);
  EXPECT_EQ(FindCommand("frobnicate"), nullptr);
  EXPECT_TRUE(IsClientFlag("html"));
  EXPECT_TRUE(IsClientFlag("spool"));
  EXPECT_FALSE(IsClientFlag("hidden"));
  EXPECT_FALSE(IsClientFlag("flagfile"));
  EXPECT_THAT(VersionLine(), ::testing::MatchesRegex(R"(cl-client [0-9]+\.[0-9]+\.[0-9]+ \(.+\))"));
}

// Every line of the usage block is indented: a command's own line starts "  cl-client", a
// continuation line deeper (the spool command's second line was once flush left).
TEST(CommandsTest, EveryUsageLineIsIndented) {
  const std::string help = OverallHelp();
  const size_t start = help.find("Usage:\n") + 7, end = help.find("\n\n", start);
  ASSERT_NE(end, std::string::npos);
  int commands = 0;
  for (absl::string_view line : absl::StrSplit(help.substr(start, end - start), '\n')) {
    if (absl::StartsWith(line, "  cl-client ")) {
      ++commands;
    } else {
      EXPECT_TRUE(absl::StartsWith(line, "    ")) << "not indented: " << line;
    }
  }
  EXPECT_GE(commands, static_cast<int>(Commands().size()));
  for (const CommandHelp& c : Commands()) {
    const std::string usage = CommandUsage(c);
    EXPECT_TRUE(absl::StartsWith(usage, "Usage:\n  cl-client ")) << usage;
  }
}

}  // namespace
}  // namespace cl

#include "client/command_line.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

using ::testing::ElementsAre;

TEST(CommandLineTest, DashesBecomeUnderscoresInNamesOnly) {
  EXPECT_THAT(
      NormalizeCommandLine(
          {"cl-client", "import-trace", "a-b.log", "--no-sources", "--session-id=x-y"}),
      ElementsAre("cl-client", "import-trace", "a-b.log", "--nosources", "--session_id=x-y"));
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

TEST(CommandLineTest, AListFlagLastWithNoValueIsLeftForAbseilToRefuse) {
  EXPECT_THAT(NormalizeCommandLine({"p", "--label"}), ElementsAre("p", "--label"));
}

}  // namespace
}  // namespace cl

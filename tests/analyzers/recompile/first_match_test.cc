// FirstMatch: a table of patterns where the first in the table's order that matches wins,
// whichever matches earlier in the text; `whole` patterns match the whole text only.
#include "analyzers/recompile/first_match.h"

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(FirstMatchTest, ListsEveryMatchingPatternInTableOrder) {
  const FirstMatch table({{"world"}, {"hello"}, {"(?i)HELLO w"}, {"absent"}});
  EXPECT_THAT(table.Matching("hello world"), ElementsAre(0, 1, 2));
  EXPECT_THAT(table.Matching("say hello"), ElementsAre(1));
  EXPECT_THAT(table.Matching("nothing here"), IsEmpty());
  EXPECT_THAT(table.Matching(""), IsEmpty());
}

TEST(FirstMatchTest, AWholePatternMatchesTheWholeTextOnly) {
  const FirstMatch table({{"a+b", /*whole=*/true}, {"a+b"}, {"|x.*", /*whole=*/true}});
  EXPECT_THAT(table.Matching("aab"), ElementsAre(0, 1));
  EXPECT_THAT(table.Matching("xaab"), ElementsAre(1, 2));
  EXPECT_THAT(table.Matching("aabc"), ElementsAre(1));
  EXPECT_THAT(table.Matching(""), ElementsAre(2));  // the empty alternative, as a whole
}

TEST(FirstMatchTest, APatternAloneGivesItsCaptures) {
  const FirstMatch table({{R"re(len\((?P<var>.+?)\) == (?P<n>\d+))re", true}, {"=="}});
  const std::string text = "len(L['x']) == 3";
  ASSERT_THAT(table.Matching(text), ElementsAre(0, 1));
  std::string var, n;
  EXPECT_TRUE(RE2::FullMatch(text, table.Regex(0), &var, &n));
  EXPECT_EQ(var, "L['x']");
  EXPECT_EQ(n, "3");
  EXPECT_EQ(&table.Regex(0), &table.Regex(0));  // compiled once
}

// Passes run at once: the table and its patterns' lazy compiles are shared.
TEST(FirstMatchTest, ThreadsShareOneTable) {
  const FirstMatch table({{"a(b+)c"}, {"b"}});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        EXPECT_THAT(table.Matching("xabbbcx"), ElementsAre(0, 1));
        std::string bs;
        EXPECT_TRUE(RE2::PartialMatch("xabbbcx", table.Regex(0), &bs));
        EXPECT_EQ(bs, "bbb");
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST(FirstMatchDeathTest, APatternThatDoesNotCompileIsNamed) {
  EXPECT_DEATH(FirstMatch({{"fine"}, {"(unclosed"}}), "pattern /\\(unclosed/ does not compile");
}

}  // namespace
}  // namespace cl

// FirstMatch: a table of patterns where the first in the table's order that matches wins,
// whichever matches earlier in the text; `whole` patterns match the whole text only.
#include "analyzers/recompile/first_match.h"

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Every pattern that matches `text`, in the table's order.
std::vector<int> All(const FirstMatch& table, absl::string_view text) {
  std::vector<int> out;
  for (int i = table.First(text); i >= 0; i = table.First(text, i + 1)) out.push_back(i);
  return out;
}

TEST(FirstMatchTest, TheFirstInTheTablesOrderWins) {
  const FirstMatch table({{"world"}, {"hello"}, {"(?i)HELLO w"}, {"absent"}});
  EXPECT_EQ(table.First("hello world"), 0);  // "hello" is earlier in the text, later in the table
  EXPECT_THAT(All(table, "hello world"), ElementsAre(0, 1, 2));
  EXPECT_THAT(All(table, "say hello"), ElementsAre(1));
  EXPECT_THAT(All(table, "nothing here"), IsEmpty());
  EXPECT_THAT(All(table, ""), IsEmpty());
}

TEST(FirstMatchTest, AWholePatternMatchesTheWholeTextOnly) {
  const FirstMatch table({{"a+b", /*whole=*/true}, {"a+b"}, {"|x.*", /*whole=*/true}});
  EXPECT_THAT(All(table, "aab"), ElementsAre(0, 1));
  EXPECT_THAT(All(table, "xaab"), ElementsAre(1, 2));
  EXPECT_THAT(All(table, "aabc"), ElementsAre(1));
  EXPECT_THAT(All(table, ""), ElementsAre(2));  // the empty alternative, as a whole
}

TEST(FirstMatchTest, APatternAloneGivesItsCaptures) {
  const FirstMatch table({{R"re(len\((?P<var>.+?)\) == (?P<n>\d+))re", true}, {"=="}});
  const std::string text = "len(L['x']) == 3";
  ASSERT_THAT(All(table, text), ElementsAre(0, 1));
  std::string var, n;
  EXPECT_TRUE(RE2::FullMatch(text, table.Regex(0), &var, &n));
  EXPECT_EQ(var, "L['x']");
  EXPECT_EQ(n, "3");
  EXPECT_EQ(&table.Regex(0), &table.Regex(0));  // compiled once
}

// A long text for a pattern whose DFA has 2^16 states (64 KB of a and b): the same answers. (Where
// the set's DFA gives up on a text, First matches pattern by pattern; RE2 did not give up on any
// text tried here, so that path is not shown to run.)
TEST(FirstMatchTest, ALongTextForAnExponentialDfa) {
  const FirstMatch table({{"c"}, {"(a|b)*a(a|b){16}"}, {"b"}});
  std::string text;
  uint32_t bits = 12345;
  for (int i = 0; i < (64 << 10); ++i) {
    bits = bits * 1103515245 + 12345;
    text.push_back((bits >> 16) & 1 ? 'a' : 'b');
  }
  text[text.size() - 17] = 'a';
  EXPECT_EQ(table.First(text), 1);
  EXPECT_EQ(table.First(text, 2), 2);
  EXPECT_EQ(table.First(text, 3), -1);
}

// Passes run at once: the table and its patterns' lazy compiles are shared.
TEST(FirstMatchTest, ThreadsShareOneTable) {
  const FirstMatch table({{"a(b+)c"}, {"b"}});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        EXPECT_THAT(All(table, "xabbbcx"), ElementsAre(0, 1));
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

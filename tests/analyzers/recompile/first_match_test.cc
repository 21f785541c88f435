// FirstMatch: a table of patterns where the first in the table's order that matches wins,
// whichever matches earlier in the text; `whole` patterns match the whole text only.
#include "analyzers/recompile/first_match.h"

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

TEST(FirstMatchTest, TheFirstInTheTablesOrderWins) {
  const FirstMatch table({{"world"}, {"hello"}, {"(?i)HELLO w"}, {"absent"}});
  EXPECT_EQ(table.First("hello world"), 0);  // "hello" is earlier in the text, later in the table
  EXPECT_EQ(table.First("say hello"), 1);
  EXPECT_EQ(table.First("say HELLO w"), 2);
  EXPECT_EQ(table.First("nothing here"), -1);
  EXPECT_EQ(table.First(""), -1);
}

TEST(FirstMatchTest, AWholePatternMatchesTheWholeTextOnly) {
  const FirstMatch table({{"a+b", /*whole=*/true}, {"a+b"}, {"|x.*", /*whole=*/true}});
  EXPECT_EQ(table.First("aab"), 0);
  EXPECT_EQ(table.First("xaab"), 1);  // not whole: 0 would match a part of it
  EXPECT_EQ(table.First("aabc"), 1);
  EXPECT_EQ(table.First("x"), 2);
  EXPECT_EQ(table.First(""), 2);  // the empty alternative, as a whole
}

TEST(FirstMatchTest, APatternAloneGivesItsCaptures) {
  const FirstMatch table({{R"re(len\((?P<var>.+?)\) == (?P<n>\d+))re", true}, {"=="}});
  const std::string text = "len(L['x']) == 3";
  ASSERT_EQ(table.First(text), 0);
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
  const FirstMatch without({{"c"}, {"b"}});
  std::string text;
  uint32_t bits = 12345;
  for (int i = 0; i < (64 << 10); ++i) {
    bits = bits * 1103515245 + 12345;
    text.push_back((bits >> 16) & 1 ? 'a' : 'b');
  }
  text[text.size() - 17] = 'a';
  EXPECT_EQ(table.First(text), 1);
  EXPECT_EQ(without.First(text), 1);
}

// Passes run at once: the table and its patterns' lazy compiles are shared.
TEST(FirstMatchTest, ThreadsShareOneTable) {
  const FirstMatch table({{"a(b+)c"}, {"b"}});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        EXPECT_EQ(table.First("xabbbcx"), 0);
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

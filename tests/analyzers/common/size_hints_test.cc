// Symbolic sizes at torch's size hints: the spellings FX prints, and everything else refused.
#include "analyzers/common/size_hints.h"

#include <map>
#include <string>

#include "capture/validate.h"
#include "gtest/gtest.h"
#include "tests/testing/import_fixture.h"

namespace cl {
namespace {

SizeHints Hints() {
  SizeHints hints;
  hints.Set("s0", 4);
  hints.Set("s1", 16);
  hints.Set("u1", 7);
  return hints;
}

TEST(SizeHintsTest, NumbersNeedNoHint) {
  EXPECT_EQ(SizeHints().Evaluate("64"), 64);
  EXPECT_EQ(SizeHints().Evaluate("s0"), std::nullopt);
}

TEST(SizeHintsTest, TheSpellingsFxPrints) {
  const SizeHints hints = Hints();
  EXPECT_EQ(hints.Evaluate("s0"), 4);
  EXPECT_EQ(hints.Evaluate("16*s0"), 64);
  EXPECT_EQ(hints.Evaluate("s0*s1"), 64);
  EXPECT_EQ(hints.Evaluate("s0 + 1"), 5);
  EXPECT_EQ(hints.Evaluate("2*s0 - 1"), 7);
  EXPECT_EQ(hints.Evaluate("s1 - s0 - 2"), 10);  // left to right
  EXPECT_EQ(hints.Evaluate("s0**2"), 16);
  EXPECT_EQ(hints.Evaluate("2*s0**2"), 32);  // ** binds tighter than *
  EXPECT_EQ(hints.Evaluate("Max(1, s0)"), 4);
  EXPECT_EQ(hints.Evaluate("Min(s0, s1, 2)"), 2);
  EXPECT_EQ(hints.Evaluate("Mod(s1, 5)"), 1);
  EXPECT_EQ(hints.Evaluate("FloorDiv(s1, 3)"), 5);
  EXPECT_EQ(hints.Evaluate("s1 % 5"), 1);
  // From tlparse's export.log: Python's floor division rounds toward -inf.
  EXPECT_EQ(hints.Evaluate("((u1//3))+5"), 7);
  EXPECT_EQ(hints.Evaluate("(((-u1)//3))+5"), 2);
  EXPECT_EQ(hints.Evaluate("(-7) % 3"), 2);
}

TEST(SizeHintsTest, ReportsTheSymbolsItRead) {
  std::map<std::string, int64_t> used;
  EXPECT_EQ(Hints().Evaluate("s0*s1 + 3", &used), 67);
  EXPECT_EQ(FormatSizeHints(used), "s0 = 4, s1 = 16");
  used.clear();
  EXPECT_EQ(Hints().Evaluate("128", &used), 128);
  EXPECT_TRUE(used.empty());
}

TEST(SizeHintsTest, AnythingElseHasNoValue) {
  const SizeHints hints = Hints();
  for (const char* size : {"u0", "s0 +", "", " ", "s0/2", "sqrt(s0)", "Max(s0", "s0)", "Mod(s0)",
                           "FloorDiv(s0, 0)", "s0 // 0", "s0 % 0", "9223372036854775807*2",
                           "9223372036854775807 + 1", "2**64", "s0**-1", "1.5", "s0 s1"}) {
    EXPECT_EQ(hints.Evaluate(size), std::nullopt) << size;
  }
  // 0, 1 and -1 to a large power end at once rather than loop.
  EXPECT_EQ(hints.Evaluate("(-1)**9223372036854775807"), -1);
  EXPECT_EQ(hints.Evaluate("1**9223372036854775807"), 1);
}

TEST(SizeHintsTest, DeepNestingIsRefusedNotRecursedInto) {
  const std::string deep = std::string(100000, '(') + "s0" + std::string(100000, ')');
  EXPECT_EQ(Hints().Evaluate(deep), std::nullopt);
  const std::string minus(100000, '-');
  EXPECT_EQ(Hints().Evaluate(minus + "s0"), std::nullopt);
  EXPECT_EQ(Hints().Evaluate("((((s0))))"), 4);
}

TEST(SizeHintsTest, ACompilesHintsAreItsBackedSymbols) {
  v1::SessionCapture capture;
  v1::Compile* compile = capture.add_compiles();
  compile->set_id("0/1");
  v1::Symbol* s0 = compile->add_symbols();
  s0->set_name("s0");
  s0->set_hint("8");
  v1::Symbol* u0 = compile->add_symbols();
  u0->set_name("u0");
  u0->set_unbacked(true);
  capture.add_compiles()->set_id("0/0");
  const SizeHintsByCompile by_compile(capture);
  EXPECT_EQ(by_compile.For("0/1").Evaluate("2*s0"), 16);
  EXPECT_EQ(by_compile.For("0/1").Evaluate("u0"), std::nullopt);
  EXPECT_EQ(by_compile.For("0/0").Evaluate("s0"), std::nullopt);
  EXPECT_EQ(by_compile.For("9/9").Evaluate("s0"), std::nullopt);
}

// A Python float passed into a compiled frame (here an .item() across a graph break, in a real
// torch 2.6 run) is a float symbol, "zf0" with a decimal hint: the capture keeps it and validates
// (it once failed the whole analysis as "not an integer"), and it is no size.
TEST(SizeHintsTest, AFloatSymbolIsKeptButIsNoSize) {
  const v1::SessionCapture capture =
      testing::ImportFixtureLog("torch_trace/torch-2.6/resnet_item_break/trace.log.gz");
  EXPECT_TRUE(ValidateCapture(capture).ok()) << ValidateCapture(capture);
  const v1::Compile* with_float = nullptr;
  for (const v1::Compile& c : capture.compiles()) {
    for (const v1::Symbol& symbol : c.symbols()) {
      if (symbol.name() == "zf0") with_float = &c;
    }
  }
  ASSERT_NE(with_float, nullptr);
  EXPECT_EQ(with_float->symbols(0).name(), "zf0");
  EXPECT_EQ(with_float->symbols(0).hint().substr(0, 4), "0.55");
  EXPECT_EQ(SizeHintsByCompile(capture).For(with_float->id()).Evaluate("zf0"), std::nullopt);
}

}  // namespace
}  // namespace cl

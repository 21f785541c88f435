// Utf8Prefix, ClipUtf8 and EscapedExcerpt: cuts on a character boundary, whatever the bytes.
#include "common/utf8.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

constexpr char kE[] = "\xC3\xA9";              // é, 2 bytes
constexpr char kEuro[] = "\xE2\x82\xAC";       // €, 3 bytes
constexpr char kSmile[] = "\xF0\x9F\x98\x80";  // 😀, 4 bytes

std::string Repeat(absl::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out.append(s.data(), s.size());
  return out;
}

TEST(Utf8PrefixTest, TextThatFitsIsWhole) {
  EXPECT_EQ(Utf8Prefix("", 0), "");
  EXPECT_EQ(Utf8Prefix("abc", 3), "abc");  // an exact fit
  EXPECT_EQ(Utf8Prefix("abc", 10), "abc");
  EXPECT_EQ(Utf8Prefix(kSmile, 4), kSmile);
}

TEST(Utf8PrefixTest, AsciiIsCutAtTheBudget) {
  EXPECT_EQ(Utf8Prefix("abcdef", 4), "abcd");
  EXPECT_EQ(Utf8Prefix("abcdef", 0), "");
}

TEST(Utf8PrefixTest, ACutBetweenCharactersKeepsThemAll) {
  const std::string s = absl::StrCat("a", kE, kEuro, kSmile, "z");  // 1 + 2 + 3 + 4 + 1 bytes
  EXPECT_EQ(Utf8Prefix(s, 1), "a");
  EXPECT_EQ(Utf8Prefix(s, 3), absl::StrCat("a", kE));
  EXPECT_EQ(Utf8Prefix(s, 6), absl::StrCat("a", kE, kEuro));
  EXPECT_EQ(Utf8Prefix(s, 10), absl::StrCat("a", kE, kEuro, kSmile));
}

TEST(Utf8PrefixTest, ACutInsideACharacterDropsIt) {
  for (absl::string_view c : {kE, kEuro, kSmile}) {
    const std::string s = absl::StrCat("ab", c, "z");
    for (size_t inside = 1; inside < c.size(); ++inside) {
      EXPECT_EQ(Utf8Prefix(s, 2 + inside), "ab")
          << c.size() << "-byte character, cut at " << inside;
    }
    EXPECT_EQ(Utf8Prefix(s, 2 + c.size()), absl::StrCat("ab", c));
  }
}

TEST(Utf8PrefixTest, ABudgetSmallerThanTheFirstCharacterKeepsNothing) {
  EXPECT_EQ(Utf8Prefix(kSmile, 3), "");
  EXPECT_EQ(Utf8Prefix(kEuro, 1), "");
  EXPECT_EQ(Utf8Prefix(kE, 0), "");
}

TEST(Utf8PrefixTest, InvalidBytesCountAsCharactersOfTheirOwn) {
  // Stray continuation bytes: no character straddles the cut, so it stays where it is.
  EXPECT_EQ(Utf8Prefix("\x80\x80\x80\x80\x80\x80", 4), "\x80\x80\x80\x80");
  // A lead byte whose sequence is cut short in the input itself.
  EXPECT_EQ(Utf8Prefix("ab\xE2\x82z", 3), "ab\xE2");
  EXPECT_EQ(Utf8Prefix("ab\xE2\x82z", 4), "ab\xE2\x82");
  // Bytes that never start a character, and an overlong form (C0 80 is not a well-formed "\0").
  EXPECT_EQ(Utf8Prefix("\xFF\xFE\xFD", 2), "\xFF\xFE");
  EXPECT_EQ(Utf8Prefix("a\xC0\x80z", 2), "a\xC0");
  // A well-formed character after invalid bytes is still not split.
  EXPECT_EQ(Utf8Prefix(absl::StrCat("\xFF", kEuro), 3), "\xFF");
}

TEST(Utf8PrefixTest, APrefixOfValidUtf8IsValid) {
  const std::string s = Repeat(absl::StrCat("x", kE, kEuro, kSmile), 5);
  for (size_t max = 0; max <= s.size(); ++max) {
    const absl::string_view prefix = Utf8Prefix(s, max);
    EXPECT_LE(prefix.size(), max);
    EXPECT_GE(prefix.size() + 3, std::min(max, s.size())) << "a cut backs off at most 3 bytes";
    EXPECT_TRUE(IsValidUtf8(prefix)) << max;
  }
}

TEST(ClipUtf8Test, TextThatFitsIsUnchanged) {
  EXPECT_EQ(ClipUtf8("", 0), "");
  EXPECT_EQ(ClipUtf8("abc", 3), "abc");
  EXPECT_EQ(ClipUtf8(absl::StrCat("a", kSmile), 5), absl::StrCat("a", kSmile));
}

TEST(ClipUtf8Test, AClippedTextEndsWithTheEllipsis) {
  EXPECT_EQ(ClipUtf8("abcdef", 4), "abcd\u2026");
  EXPECT_EQ(ClipUtf8("abcdef", 0), "\u2026");
  EXPECT_EQ(std::string(kEllipsis), "\u2026");
}

TEST(ClipUtf8Test, NeverSplitsACharacter) {
  EXPECT_EQ(ClipUtf8(absl::StrCat("ab", kE, "z"), 3), "ab\u2026");
  EXPECT_EQ(ClipUtf8(absl::StrCat("ab", kEuro, "z"), 4), "ab\u2026");
  EXPECT_EQ(ClipUtf8(absl::StrCat("ab", kSmile, "z"), 5), "ab\u2026");
  EXPECT_EQ(ClipUtf8(absl::StrCat("ab", kSmile, "z"), 6), absl::StrCat("ab", kSmile, "\u2026"));
  EXPECT_EQ(ClipUtf8(Repeat(kE, 10), 5), absl::StrCat(Repeat(kE, 2), "\u2026"));
}

TEST(ClipUtf8Test, InvalidInputIsCutAndMarked) {
  const std::string clipped = ClipUtf8("\x80\x80\x80\x80\x80", 2);
  EXPECT_EQ(clipped, "\x80\x80\u2026");
}

TEST(EscapedExcerptTest, EscapesAndMarksACut) {
  EXPECT_EQ(EscapedExcerpt("a\"b\n", 10), "a\\\"b\\n");
  EXPECT_EQ(EscapedExcerpt("abcdef", 3), "abc\u2026");
  EXPECT_EQ(EscapedExcerpt(absl::StrCat("a", kEuro, "b"), 3), "a\u2026");  // not half of the €
  EXPECT_EQ(EscapedExcerpt(absl::StrCat("a", kEuro, "b"), 4), "a\\xe2\\x82\\xac\u2026");
  EXPECT_EQ(EscapedExcerpt("\xFF", 1), "\\xff");
  EXPECT_EQ(EscapedExcerpt("", 0), "");
}

}  // namespace
}  // namespace cl

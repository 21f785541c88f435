// The small pieces every rendering relies on: scrubbing untrusted text, HTML escaping, the
// writer's code spans and links, number formats, and locations.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "common/number_format.h"
#include "common/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/render/html_escape.h"
#include "service/render/html_writer.h"
#include "service/render/location_format.h"
#include "service/render/untrusted_text.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;

TEST(ScrubUntrustedTest, KeepsValidUtf8) {
  const std::string text = "blocks.0.norm 16→32 é 😀 ≤ 1.43×";
  EXPECT_EQ(ScrubUntrusted(text, Newlines::kKeep), text);
}

TEST(ScrubUntrustedTest, ReplacesEveryBadByte) {
  const std::string fffd = "\uFFFD";
  EXPECT_EQ(ScrubUntrusted("a\xff"
                           "b",
                           Newlines::kKeep),
            "a" + fffd + "b");
  EXPECT_EQ(ScrubUntrusted("\xc0\xaf", Newlines::kKeep), fffd + fffd);             // overlong '/'
  EXPECT_EQ(ScrubUntrusted("\xed\xa0\x80", Newlines::kKeep), fffd + fffd + fffd);  // surrogate
  EXPECT_EQ(ScrubUntrusted("\xf4\x90\x80\x80", Newlines::kKeep),
            fffd + fffd + fffd + fffd);                                        // > U+10FFFF
  EXPECT_EQ(ScrubUntrusted("x\xe2\x86", Newlines::kKeep), "x" + fffd + fffd);  // truncated
  EXPECT_EQ(ScrubUntrusted("\xe2\x86"
                           "a",
                           Newlines::kKeep),
            fffd + fffd + "a");
}

TEST(ScrubUntrustedTest, ShowsControlsAndBidiOverrides) {
  EXPECT_EQ(ScrubUntrusted("a\u202Eb\u2066c\u2069", Newlines::kKeep),
            "a[U+202E]b[U+2066]c[U+2069]");
  EXPECT_EQ(ScrubUntrusted("\x1b[31mred\x07", Newlines::kKeep), "[U+001B][31mred[U+0007]");
  EXPECT_EQ(ScrubUntrusted(std::string("a\0b", 3), Newlines::kKeep), "a[U+0000]b");
  EXPECT_EQ(ScrubUntrusted("\x7f\u0085\r", Newlines::kKeep), "[U+007F][U+0085][U+000D]");
  EXPECT_EQ(ScrubUntrusted("a\nb\tc", Newlines::kKeep), "a\nb\tc");
  EXPECT_EQ(ScrubUntrusted("a\nb\tc", Newlines::kFlatten), "a b c");
}

TEST(EscapeHtmlTest, EscapesTheFiveCharacters) {
  EXPECT_EQ(EscapeHtml("<a href=\"x\" title='y'>&amp;</a>"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
  EXPECT_EQ(EscapeHtml("16→32 `x`"), "16→32 `x`");
  EXPECT_EQ(EscapeHtml("\xff<"), "\uFFFD&lt;");
}

// The one-pass escaping against its definition, character by character: scrub (untrusted_text.h),
// then the five HTML characters; on random strings of everything that needs care, in runs.
std::string Reference(absl::string_view in, Newlines newlines, bool html) {
  const std::string scrubbed =
      RewriteUtf8(in, [newlines](char32_t cp, absl::string_view bytes, std::string& out) {
        const bool bidi = (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
        if (cp == '\n' || cp == '\t') {
          out += newlines == Newlines::kKeep ? static_cast<char>(cp) : ' ';
        } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || bidi) {
          out += absl::StrFormat("[U+%04X]", static_cast<unsigned>(cp));
        } else {
          out.append(bytes.data(), bytes.size());
        }
      });
  if (!html) return scrubbed;
  return absl::StrReplaceAll(
      scrubbed, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}});
}

TEST(ScrubUntrustedTest, OnePassMatchesTheDefinition) {
  const std::vector<std::string> pieces = {"plain text ",
                                           "x",
                                           "&",
                                           "<",
                                           ">",
                                           "\"",
                                           "'",
                                           "\n",
                                           "\t",
                                           "\r",
                                           std::string(1, '\0'),
                                           "\x1b[31m",
                                           "\x7f",
                                           "\xc2\x85",
                                           "\xc3\xa9",
                                           "\xe2\x80\xae",
                                           "\xe2\x81\xa6",
                                           "\xf0\x9f\x98\x80",
                                           "\xff",
                                           "\x80",
                                           "\xe2\x80",
                                           "\xc0\xaf",
                                           "\xed\xa0\x80",
                                           "\xf4\x90\x80\x80",
                                           "  def forward(self, x):"};
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string in;
    const int n = static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i) in += pieces[rng() % pieces.size()];
    for (const Newlines newlines : {Newlines::kKeep, Newlines::kFlatten}) {
      EXPECT_EQ(ScrubUntrusted(in, newlines), Reference(in, newlines, /*html=*/false))
          << absl::CHexEscape(in);
    }
    EXPECT_EQ(EscapeHtml(in), Reference(in, Newlines::kKeep, /*html=*/true))
        << absl::CHexEscape(in);
    std::string appended = "<kept>";
    AppendEscapedHtml(in, &appended);
    EXPECT_EQ(appended, "<kept>" + EscapeHtml(in));
  }
}

TEST(HtmlWriterTest, CodeSpansAreEscapedInsideAndOut) {
  HtmlWriter w;
  w.TextWithCode("use `<b>` not <i>, `torch.compile`'s, and a lone ` tick");
  EXPECT_EQ(w.Release(),
            "use <code>&lt;b&gt;</code> not &lt;i&gt;, <code>torch.compile</code>&#39;s, and a "
            "lone ` tick");
}

TEST(HtmlWriterTest, LinksOnlyForWebUrls) {
  HtmlWriter w;
  w.Link("HTTPS://example.com/?a=1&b=\"2\"").Tag("|").Link("javascript:alert(1)");
  w.Tag("|").Link(" https://example.com");
  EXPECT_EQ(w.Release(),
            "<a rel=\"noreferrer\" href=\"HTTPS://example.com/?a=1&amp;b=&quot;2&quot;\">"
            "HTTPS://example.com/?a=1&amp;b=&quot;2&quot;</a>|javascript:alert(1)| "
            "https://example.com");
}

TEST(HtmlWriterTest, TablesHaveTheSeedsLayout) {
  HtmlWriter w;
  w.BeginTable({"a", "b"}).Tag("<tr><td>1</td><td>2</td></tr>\n").EndTable();
  EXPECT_EQ(w.Release(),
            "<table>\n<thead><tr><th>a</th><th>b</th></tr></thead>\n<tbody>\n"
            "<tr><td>1</td><td>2</td></tr>\n</tbody>\n</table>\n");
}

TEST(NumberFormatTest, Percent) {
  EXPECT_EQ(FormatPercent(1.0), "100%");
  EXPECT_EQ(FormatPercent(0.0), "0%");
  EXPECT_EQ(FormatPercent(81920.0 / 270336), "30%");
  EXPECT_EQ(FormatPercent(0.999), "99%");  // never "100%" for an incomplete match
  EXPECT_EQ(FormatPercent(0.001), "<1%");  // never "0%" for something
  EXPECT_EQ(FormatPercent(0.125), "13%");
  EXPECT_EQ(FormatPercent(std::nan("")), "nan");
}

TEST(NumberFormatTest, Fixed) {
  EXPECT_EQ(FormatFixed(1.0, 2), "1.00");
  EXPECT_EQ(FormatFixed(1.4349, 2), "1.43");
  EXPECT_EQ(FormatFixed(std::numeric_limits<double>::infinity(), 2), "inf");
}

TEST(NumberFormatTest, ScientificLikeTheSeed) {
  EXPECT_EQ(FormatScientific(5.033), "5.033e0");
  EXPECT_EQ(FormatScientific(5.0), "5.000e0");
  EXPECT_EQ(FormatScientific(0.001234), "1.234e-3");
  EXPECT_EQ(FormatScientific(123456.0), "1.235e5");
  EXPECT_EQ(FormatScientific(-2.5e-12), "-2.500e-12");
  EXPECT_EQ(FormatScientific(1e300), "1.000e300");
  EXPECT_EQ(FormatScientific(0.0), "0.000e0");
  EXPECT_EQ(FormatScientific(std::nan("")), "nan");
  EXPECT_EQ(FormatScientific(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(NumberFormatTest, Bytes) {
  EXPECT_EQ(FormatBytes(270336), "264 KiB");
  EXPECT_EQ(FormatBytes(188416), "184 KiB");
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(1024 * 1024 - 1), "1 MiB");
  EXPECT_EQ(FormatBytes(3ull << 30), "3 GiB");
  EXPECT_EQ(FormatBytes(~0ull), "16384 PiB");  // the largest unit stretches
}

TEST(NumberFormatTest, Si) {
  EXPECT_EQ(FormatSi(3.1e12, "FLOP"), "3.1 TFLOP");
  EXPECT_EQ(FormatSi(524288, "FLOP"), "524 kFLOP");
  EXPECT_EQ(FormatSi(999.6, "FLOP/s"), "1 kFLOP/s");
  EXPECT_EQ(FormatSi(12, "B"), "12 B");
}

TEST(LocationFormatTest, RelativeFilesSitUnderRepoOnThePage) {
  v1::Location at;
  at.set_file("examples/hero_scene.py");
  at.set_line(89);
  EXPECT_EQ(FormatLocation(at, LocationStyle::kPage), "{repo}/examples/hero_scene.py:89");
  EXPECT_EQ(FormatLocation(at, LocationStyle::kTerminal), "examples/hero_scene.py:89");
  at.set_line_start(69);
  at.set_line_end(72);
  EXPECT_EQ(FormatLocation(at, LocationStyle::kPage), "{repo}/examples/hero_scene.py:69-72");
  at.set_line_end(69);
  EXPECT_EQ(FormatLocation(at, LocationStyle::kPage), "{repo}/examples/hero_scene.py:69");
}

TEST(LocationFormatTest, AbsoluteAndPartialLocations) {
  v1::Location at;
  EXPECT_EQ(FormatLocation(at, LocationStyle::kPage), "—");
  EXPECT_FALSE(HasLocation(at));
  at.set_line(12);
  EXPECT_EQ(FormatLocation(at, LocationStyle::kPage), ":12");
  at.set_file("/usr/lib/python3/dist-packages/torch/nn/modules/module.py");
  EXPECT_EQ(FormatLocation(at, LocationStyle::kPage),
            "/usr/lib/python3/dist-packages/torch/nn/modules/module.py:12");
  at.set_file("C:\\work\\train.py");
  EXPECT_EQ(FormatLocation(at, LocationStyle::kPage), "C:\\work\\train.py:12");
  at.set_line(0);
  at.set_file("train.py");
  EXPECT_EQ(FormatLocation(at, LocationStyle::kPage), "{repo}/train.py");
}

}  // namespace
}  // namespace cl

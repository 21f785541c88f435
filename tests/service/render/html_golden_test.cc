// The hero report against its golden page and against the seed (tests/fixtures/seed/hero.html),
// the page the project promised: same sections in the same order, same visible text, same markup
// apart from the style sheet.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/render/html.h"
#include "service/render/report_css.h"
#include "tests/service/render/hero_report.h"
#include "tests/service/render/page_text.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/golden.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Seed() {
  const std::string path = testing::FixturePath("seed/hero.html");
  absl::StatusOr<std::string> seed = ReadFile(path);
  EXPECT_TRUE(seed.ok()) << seed.status();
  return seed.ok() ? *seed : "";
}

std::vector<std::string> SectionIds(const std::string& html) {
  std::vector<std::string> ids;
  for (const auto& tag : testing::TagSequence(html)) {
    if (absl::StartsWith(tag, "<details open id=\""))
      ids.push_back(tag.substr(18, tag.size() - 20));
  }
  return ids;
}

TEST(HtmlGoldenTest, HeroMatchesGoldenFile) {
  testing::ExpectMatchesGolden("render/hero.html", RenderHtml(testing::HeroReport()));
}

TEST(HtmlGoldenTest, HeroSectionsAreTheSeedsInTheSeedsOrder) {
  const std::string page = RenderHtml(testing::HeroReport());
  EXPECT_THAT(SectionIds(page), ElementsAre("metadata", "ir-diff", "recompile", "cache-stability",
                                            "divergence", "lint", "fusion", "roofline", "raw"));
  EXPECT_EQ(SectionIds(page), SectionIds(Seed()));
}

TEST(HtmlGoldenTest, HeroReadsLikeTheSeedSectionBySection) {
  const auto ours = testing::SectionTexts(RenderHtml(testing::HeroReport()));
  const auto seed = testing::SectionTexts(Seed());
  ASSERT_EQ(seed.size(), 10u);  // header + nine sections
  for (const auto& [id, text] : seed) {
    ASSERT_TRUE(ours.count(id)) << "missing section " << id;
    EXPECT_EQ(ours.at(id), text) << "section " << id;
  }
  EXPECT_EQ(ours.size(), seed.size());
}

// Stronger than the text: every element and attribute is the seed's. The only intended
// difference (the dark-mode style sheet) is inside <style>, which the sequence leaves out.
TEST(HtmlGoldenTest, HeroHasTheSeedsMarkup) {
  EXPECT_EQ(testing::TagSequence(RenderHtml(testing::HeroReport())), testing::TagSequence(Seed()));
}

TEST(HtmlGoldenTest, PageIsSelfContainedUnderItsCsp) {
  const std::string page = RenderHtml(testing::HeroReport());
  EXPECT_THAT(page, HasSubstr("<meta charset=\"utf-8\">"));
  EXPECT_THAT(page, HasSubstr("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                              "'none'; style-src 'unsafe-inline'\">"));
  EXPECT_THAT(page, HasSubstr("<meta name=\"viewport\" content=\"width=device-width, "
                              "initial-scale=1\">"));
  EXPECT_THAT(page, HasSubstr("<title>compile-lens session report</title>"));
  for (const char* outside : {"<script", "src=", "href=", "url(", "@import", "<link", "<img"}) {
    EXPECT_THAT(page, Not(HasSubstr(outside))) << outside;
  }
}

// The style sheet is the real file service/render/report.css, embedded at build time.
TEST(HtmlGoldenTest, StyleSheetIsReportCssWithADarkScheme) {
  const absl::StatusOr<std::string> css =
      ReadFile(std::string(CL_SOURCE_DIR) + "/service/render/report.css");
  ASSERT_TRUE(css.ok()) << css.status();
  EXPECT_EQ(ReportCss().view(), *css);
  EXPECT_THAT(RenderHtml(testing::HeroReport()), HasSubstr("<style>\n" + *css + "</style>"));
  EXPECT_THAT(*css, HasSubstr(":root{color-scheme:light dark}"));
  EXPECT_THAT(*css, HasSubstr("@media (prefers-color-scheme:dark)"));
}

}  // namespace
}  // namespace cl

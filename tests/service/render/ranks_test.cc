// The ranks section of a multi-rank session, in the page and in the terminal summary: shown with
// its divergences and rank rows when the pass ran (OK), escaped like every capture string, and
// absent for a single-rank session, whose page and summary stay exactly the hero's.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/render/html.h"
#include "service/render/text.h"
#include "tests/service/render/hero_report.h"
#include "tests/service/render/hostile_report.h"
#include "tests/service/render/page_text.h"
#include "tests/testing/golden.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::testing::HasSubstr;
using ::testing::Not;

int Occurrences(absl::string_view haystack, absl::string_view needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != absl::string_view::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// The markup of one section, from its <details> to its </details>.
std::string Section(const std::string& page, const std::string& id) {
  const size_t start = page.find("<details open id=\"" + id + "\">");
  if (start == std::string::npos) return "";
  return page.substr(start, page.find("</details>", start) - start);
}

void AddRow(v1::CrossRankSection* s, int rank, const std::string& source, uint32_t compiles,
            uint32_t recompiles) {
  v1::RankRow* row = s->add_ranks();
  row->set_rank(rank);
  row->set_source(source);
  row->set_compiles(compiles);
  row->set_recompiles(recompiles);
  row->set_cache_hits(2 * compiles);
  row->set_cache_misses(1);
}

// The hero with a four-rank section in which rank 1 storms, as the pass would write it.
v1::AnalysisReport FourRanks() {
  v1::AnalysisReport report = testing::HeroReport();
  v1::CrossRankSection* s = report.mutable_ranks();
  s->set_status(v1::OK);
  s->set_world_size(4);
  AddRow(s, 0, "rank_0.log", 1, 0);
  AddRow(s, 1, "rank_1.log", 15, 14);
  AddRow(s, 2, "rank_2.log", 1, 0);
  AddRow(s, 3, "rank_3.log", 1, 0);
  v1::RankDivergence* ids = s->add_divergences();
  ids->set_kind("compile_ids");
  ids->add_ranks(1);
  ids->set_detail("rank 1 compiled 15 times (0/0 … 0/14); ranks 0, 2, 3 compiled once (0/0)");
  v1::RankDivergence* recompiles = s->add_divergences();
  recompiles->set_kind("recompiles");
  recompiles->add_ranks(1);
  recompiles->set_detail("rank 1 recompiled 14 times; ranks 0, 2, 3 did not recompile");
  return report;
}

TEST(RanksRenderTest, AMultiRankSessionGetsItsSectionRightAfterTheMetadata) {
  const std::string page = RenderHtml(FourRanks());
  const std::string section = Section(page, "ranks");
  ASSERT_FALSE(section.empty());
  EXPECT_THAT(section, HasSubstr("<summary><h2>Ranks (multi-rank session)</h2></summary>"));
  EXPECT_LT(page.find("id=\"metadata\""), page.find("id=\"ranks\""));
  EXPECT_LT(page.find("id=\"ranks\""), page.find("id=\"ir-diff\""));
  EXPECT_THAT(section,
              HasSubstr("<p class=\"warn\">4 ranks; 1 rank diverges from the others.</p>"));

  const std::string text = testing::VisibleText(section);
  EXPECT_THAT(text,
              HasSubstr("Divergences (2) kind ranks detail compile_ids 1 rank 1 compiled 15 times "
                        "(0/0 … 0/14); ranks 0, 2, 3 compiled once (0/0) recompiles 1 "
                        "rank 1 recompiled 14 times"));
  EXPECT_THAT(
      text, HasSubstr("Per rank rank log compiles recompiles failed graph breaks cache hit / miss "
                      "/ bypass 0 rank_0.log 1 0 0 0 2 / 1 / 0 1 rank_1.log 15 14 0 0 "
                      "30 / 1 / 0"));
  // The odd rank stands out in the list of all ranks; the others do not.
  EXPECT_THAT(section, HasSubstr("<tr><td class=\"warn\">1</td>"));
  EXPECT_THAT(section, HasSubstr("<tr><td>0</td>"));
}

TEST(RanksRenderTest, RanksThatAgreeReadAsGoodNews) {
  v1::AnalysisReport report = FourRanks();
  report.mutable_ranks()->clear_divergences();
  const std::string section = Section(RenderHtml(report), "ranks");
  EXPECT_THAT(section, HasSubstr("<p class=\"good\">4 ranks; all agree on compiles, cache events "
                                 "and recompiles.</p>"));
  EXPECT_THAT(section, Not(HasSubstr("<th>detail</th>")));
  EXPECT_THAT(section, HasSubstr("<th>rank</th>"));
}

TEST(RanksRenderTest, SeveralOddRanksAreCounted) {
  v1::AnalysisReport report = FourRanks();
  report.mutable_ranks()->mutable_divergences(1)->add_ranks(3);
  EXPECT_THAT(Section(RenderHtml(report), "ranks"),
              HasSubstr("4 ranks; 2 ranks diverge from the others."));
}

TEST(RanksRenderTest, CaptureStringsAreEscaped) {
  v1::AnalysisReport report = FourRanks();
  const std::string payload(testing::kHostilePayload);
  v1::CrossRankSection* s = report.mutable_ranks();
  s->mutable_ranks(0)->set_source(payload);
  s->mutable_divergences(0)->set_kind(payload);
  s->mutable_divergences(0)->set_detail(payload);
  const std::string page = RenderHtml(report);
  const std::string section = Section(page, "ranks");
  EXPECT_EQ(Occurrences(section, testing::kHostileEscapedHtml), 3);
  EXPECT_THAT(section, Not(HasSubstr("<script")));
  EXPECT_TRUE(testing::IsValidUtf8(page));
  for (const std::string& tag : testing::TagSequence(page)) {
    EXPECT_TRUE(testing::RendererElements().count(testing::TagName(tag)))
        << "injected element: " << tag;
  }
}

TEST(RanksRenderTest, ASingleRankSessionShowsNothing) {
  v1::AnalysisReport report = testing::HeroReport();
  report.mutable_ranks()->set_status(v1::SKIPPED);
  report.mutable_ranks()->set_reason("single-rank session");
  const std::string page = RenderHtml(report);
  EXPECT_THAT(page, Not(HasSubstr("id=\"ranks\"")));
  // Byte for byte the hero page and summary, golden files included.
  EXPECT_EQ(page, RenderHtml(testing::HeroReport()));
  testing::ExpectMatchesGolden("render/hero.html", page);
  const std::string text = RenderText(report, /*color=*/false);
  EXPECT_THAT(text, Not(HasSubstr("ranks:")));
  testing::ExpectMatchesGolden("render/hero.txt", text);
}

TEST(RanksRenderTest, AFailedPassHidesTheSectionButNotTheError) {
  v1::AnalysisReport report = testing::HeroReport();
  report.mutable_ranks()->set_status(v1::ERROR);
  report.mutable_ranks()->set_reason("boom");
  EXPECT_THAT(RenderHtml(report), Not(HasSubstr("id=\"ranks\"")));
  EXPECT_THAT(RenderText(report, /*color=*/false), Not(HasSubstr("ranks:")));
}

TEST(RanksRenderTest, TheSummaryHasOneLineAfterTheHeader) {
  const std::string text = RenderText(FourRanks(), /*color=*/false);
  EXPECT_THAT(text, HasSubstr("\nranks: 4 ranks; rank 1 diverges (compile_ids, recompiles)\n"
                              "ir-diff: "));

  v1::AnalysisReport agree = FourRanks();
  agree.mutable_ranks()->clear_divergences();
  EXPECT_THAT(RenderText(agree, /*color=*/false),
              HasSubstr("\nranks: 4 ranks; all agree on compiles, cache events and recompiles\n"));
  EXPECT_THAT(RenderText(agree, /*color=*/true),
              HasSubstr("\x1b[32mall agree on compiles, cache events and recompiles\x1b[0m"));

  v1::AnalysisReport several = FourRanks();
  several.mutable_ranks()->mutable_divergences(1)->add_ranks(3);
  EXPECT_THAT(RenderText(several, /*color=*/false),
              HasSubstr("\nranks: 4 ranks; ranks 1, 3 diverge (compile_ids, recompiles)\n"));
}

TEST(RanksRenderTest, HostileKindsStayOnTheirLine) {
  v1::AnalysisReport report = FourRanks();
  report.mutable_ranks()->mutable_divergences(0)->set_kind(std::string(testing::kHostilePayload));
  const std::string text = RenderText(report, /*color=*/false);
  EXPECT_THAT(text, HasSubstr(std::string(testing::kHostileTerminal)));
  EXPECT_THAT(text, Not(HasSubstr("\x1b[2J")));
}

}  // namespace
}  // namespace cl

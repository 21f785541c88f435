// Hostile captures: every string field of the report holds markup, quotes, an entity, a bidi
// override, invalid UTF-8 and a terminal escape. The page must show each as text and never as
// markup, and every field the page shows must come through the one escaping path.
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/render/html.h"
#include "tests/service/render/hostile_report.h"
#include "tests/service/render/page_text.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;

// The string fields the page shows for an OK section. A field added to the page belongs here;
// a field that disappears from it fails the test. (Enum fields, a category or a severity, print
// the report's own words, never a capture's text.)
const std::vector<std::string>& ShownFields() {
  static const auto* fields =
      new std::vector<std::string>{"metadata.session_id",
                                   "metadata.torch_version",
                                   "metadata.started_at",
                                   "metadata.python_version",
                                   "metadata.host",
                                   "metadata.labels{}.key",
                                   "metadata.labels{}.value",
                                   "ranks.ranks[0].source",
                                   "ranks.divergences[0].kind",
                                   "ranks.divergences[0].detail",
                                   "ir_diff.added[0].node",
                                   "ir_diff.added[0].op",
                                   "ir_diff.added[0].change",
                                   "ir_diff.added[0].location.file",
                                   "ir_diff.removed[0].node",
                                   "ir_diff.modified[0].node",
                                   "recompile.frame.name",
                                   "recompile.frame.location.file",
                                   "recompile.clusters[0].axis",
                                   "recompile.clusters[0].transitions[0]",
                                   "recompile.suggestions[0].text",
                                   "recompile.suggestions[0].evidence",
                                   "recompile.cache_limit_hits[0].frame",
                                   "recompile.cache_limit_hits[0].location.file",
                                   "recompile.cache_limit_hits[0].limit",
                                   "recompile.cache_limit_hits[0].evidence",
                                   "recompile.graph_breaks[0].reason",
                                   "recompile.graph_breaks[0].location.file",
                                   "recompile.graph_breaks[0].remedy",
                                   "recompile.graph_breaks[0].frame",
                                   "cache_stability.findings[0].state_key",
                                   "cache_stability.findings[0].compile_id",
                                   "cache_stability.findings[0].evidence",
                                   "cache_stability.findings[0].before",
                                   "cache_stability.findings[0].after",
                                   "divergence.first_divergent_layer",
                                   "divergence.cause.name",
                                   "lint.findings[0].pattern",
                                   "lint.findings[0].location.file",
                                   "lint.findings[0].trigger",
                                   "lint.findings[0].confidence",
                                   "lint.findings[0].links[0]",
                                   "lint.findings[0].remedy",
                                   "lint.findings[0].version_note",
                                   "fusion.note",
                                   "fusion.opportunities[0].pattern",
                                   "fusion.opportunities[0].location.file",
                                   "fusion.opportunities[0].change",
                                   "fusion.opportunities[0].how",
                                   "roofline.gpu",
                                   "roofline.note",
                                   "roofline.kernels[0].name",
                                   "raw.schema",
                                   "diagnostics[0].where",
                                   "diagnostics[0].message"};
  return *fields;
}

// Every "#path#" marker in the page, each checked to sit right after the escaped payload.
std::set<std::string> EscapedFields(const std::string& page) {
  std::set<std::string> fields;
  static const std::regex kMarker(R"(#([a-z_0-9.\[\]{}]+)#)");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), kMarker);
       it != std::sregex_iterator(); ++it) {
    const size_t at = it->position(0);
    const std::string path = (*it)[1];
    const size_t n = testing::kHostileEscapedHtml.size();
    EXPECT_TRUE(at >= n && page.compare(at - n, n, std::string(testing::kHostileEscapedHtml)) == 0)
        << path
        << " is not preceded by the escaped payload: " << page.substr(at >= 80 ? at - 80 : 0, 80);
    fields.insert(path);
  }
  return fields;
}

void ExpectInert(const std::string& page) {
  EXPECT_TRUE(testing::IsValidUtf8(page));
  EXPECT_THAT(absl::AsciiStrToLower(page), Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("\u202E")));  // the raw override, not its visible form
  EXPECT_THAT(page, Not(HasSubstr("\x1b")));
  for (const std::string& tag : testing::TagSequence(page)) {
    EXPECT_TRUE(testing::RendererElements().count(testing::TagName(tag)))
        << "injected element: " << tag;
  }
}

TEST(HtmlHostileTest, EveryShownFieldIsEscapedAndNothingIsMarkup) {
  const std::string page = RenderHtml(testing::HostileReport());
  ExpectInert(page);
  EXPECT_THAT(EscapedFields(page), IsSupersetOf(ShownFields()));
  // The readable forms of what the payload held.
  EXPECT_THAT(page, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;amp;"));
  EXPECT_THAT(page, HasSubstr("[U+202E]"));
}

TEST(HtmlHostileTest, SkippedAndFailedReasonsAreEscaped) {
  for (const v1::SectionStatus status : {v1::SKIPPED, v1::ERROR}) {
    const std::string page = RenderHtml(testing::HostileReport(status));
    ExpectInert(page);
    const std::set<std::string> fields = EscapedFields(page);
    for (const char* section :
         {"ir_diff", "recompile", "cache_stability", "divergence", "lint", "fusion", "roofline"}) {
      EXPECT_TRUE(fields.count(std::string(section) + ".reason")) << section;
    }
  }
}

// A link from a correctness DB is linked only when it is http(s), and its URL is escaped in the
// attribute like anywhere else.
TEST(HtmlHostileTest, LintLinksAreInert) {
  v1::AnalysisReport report;
  report.mutable_lint()->set_status(v1::OK);
  report.mutable_lint()->set_escalated(true);
  v1::LintFinding* finding = report.mutable_lint()->add_findings();
  finding->add_links("javascript:alert(1)");
  finding->add_links("https://example.com/a\"onmouseover=\"alert(1)");
  finding->add_links("data:text/html,<script>alert(1)</script>");
  const std::string page = RenderHtml(report);
  ExpectInert(page);
  EXPECT_THAT(page, Not(HasSubstr("href=\"javascript")));
  EXPECT_THAT(page, Not(HasSubstr("href=\"data")));
  EXPECT_THAT(page, HasSubstr("<a rel=\"noreferrer\" href=\"https://example.com/"
                              "a&quot;onmouseover=&quot;alert(1)\">"));
  EXPECT_THAT(page, HasSubstr("javascript:alert(1)<br>"));
}

}  // namespace
}  // namespace cl

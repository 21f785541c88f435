// The CI renderings of a report: Markdown (a pull-request comment) and SARIF (code scanning), on a
// hostile report (every string field markup, quotes, controls) and on the real health pair.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "service/render/markdown.h"
#include "service/render/sarif.h"
#include "tests/service/render/hostile_report.h"
#include "tests/testing/golden.h"

namespace cl {
namespace {

using google::protobuf::Struct;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(MarkdownTest, CaptureTextCannotBecomeMarkup) {
  EXPECT_EQ(MarkdownText("a*b_c`d[e](f)<g>|h&i"), "a\\*b\\_c\\`d\\[e\\](f)\\<g\\>\\|h\\&i");
  const std::string md = RenderMarkdown(testing::HostileReport(), {"out/r.html", "out/site"});
  // Every '<', '[' and '*' of capture text is escaped; the link targets are the renderer's.
  const std::string before_links = md.substr(0, md.find("Full report:"));
  for (size_t i = 0; i < before_links.size(); ++i) {
    if (absl::string_view("<[*`").find(before_links[i]) != absl::string_view::npos &&
        !(before_links[i] == '*' && before_links.compare(i, 2, "**") == 0) &&
        !(i > 0 && before_links[i - 1] == '*')) {
      EXPECT_TRUE(i > 0 && before_links[i - 1] == '\\') << before_links.substr(i, 20);
    }
  }
  EXPECT_THAT(md, Not(HasSubstr("\u202E")));
  EXPECT_THAT(md, Not(HasSubstr("\x1b")));
  // Every table row has exactly its cells: a '|' from the capture is escaped.
  for (absl::string_view line : absl::StrSplit(md, '\n')) {
    if (!absl::StartsWith(line, "| ")) continue;
    int cells = 0;
    for (size_t i = 0; i < line.size(); ++i)
      cells += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    EXPECT_TRUE(cells == 3 || cells == 5) << line;
  }
  EXPECT_THAT(md, HasSubstr("Full report: [HTML report](<out/r.html>) [site](<out/site>)"));
}

TEST(MarkdownTest, GatesTableAndNewBreaks) {
  v1::AnalysisReport report;
  report.mutable_metadata()->set_session_id("run-7");
  v1::HealthSection* h = report.mutable_health();
  h->set_status(v1::OK);
  v1::HealthMetric* m = h->add_metrics();
  m->set_label("Graph breaks");
  m->set_measured(true);
  m->set_has_base(true);
  m->set_higher_is_worse(true);
  m->set_head(3);
  m->set_base(2);
  v1::GateResult* g = h->add_gates();
  g->set_passed(false);
  g->set_message("1 new graph break: Tensor.item at model.py:39 (--no-new-graph-breaks)");
  h->set_failed_gates(1);
  v1::HealthBreak* b = h->add_new_breaks();
  b->set_reason("Tensor.item");
  b->mutable_location()->set_file("model.py");
  b->mutable_location()->set_line(39);
  b->set_frame("forward");
  v1::VerdictItem* gate_item = report.mutable_verdict()->add_items();  // shown above, not again
  gate_item->set_section("health");
  gate_item->set_text("1 gate failed: ...");
  v1::VerdictItem* other = report.mutable_verdict()->add_items();
  other->set_section("recompile");
  other->set_text("3 recompilations of forward");
  EXPECT_EQ(RenderMarkdown(report, {}),
            "## compile-lens: run-7\n\n"
            "**1 of 1 gates failed**\n\n"
            "- ❌ 1 new graph break: Tensor.item at model.py:39 (--no-new-graph-breaks)\n\n"
            "| | base | head | change |\n|---|---:|---:|---:|\n"
            "| Graph breaks | 2 | 3 | **+1** |\n\n"
            "### New graph breaks\n\n"
            "- Tensor.item at model.py:39 in forward\n\n"
            "### Top findings\n\n"
            "- 3 recompilations of forward\n\n");
}

Struct ParseJson(const std::string& text) {
  Struct s;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text, &s).ok()) << text.substr(0, 300);
  return s;
}

TEST(SarifTest, HostileTextIsDataAndEveryResultHasARule) {
  absl::StatusOr<std::string> sarif = RenderSarif(testing::HostileReport(), "0.5.0");
  ASSERT_TRUE(sarif.ok()) << sarif.status();
  EXPECT_THAT(*sarif, Not(HasSubstr("\u202E")));
  EXPECT_THAT(*sarif, Not(HasSubstr("\x1b")));
  const Struct root = ParseJson(*sarif);
  EXPECT_EQ(root.fields().at("version").string_value(), "2.1.0");
  const Struct& run = root.fields().at("runs").list_value().values(0).struct_value();
  const auto& rules = run.fields()
                          .at("tool")
                          .struct_value()
                          .fields()
                          .at("driver")
                          .struct_value()
                          .fields()
                          .at("rules")
                          .list_value();
  const auto& results = run.fields().at("results").list_value();
  ASSERT_GT(results.values_size(), 0);
  for (const auto& r : results.values()) {
    const auto& f = r.struct_value().fields();
    const int index = static_cast<int>(f.at("ruleIndex").number_value());
    ASSERT_LT(index, rules.values_size());
    EXPECT_EQ(rules.values(index).struct_value().fields().at("id").string_value(),
              f.at("ruleId").string_value());
    // A rule id is ours: [A-Za-z0-9_./-] only, whatever the capture said.
    for (char c : f.at("ruleId").string_value())
      EXPECT_TRUE(absl::ascii_isalnum(c) ||
                  absl::string_view("_./-").find(c) != absl::string_view::npos)
          << f.at("ruleId").string_value();
    // A file name with markup is percent-encoded in the URI.
    const std::string uri = f.at("locations")
                                .list_value()
                                .values(0)
                                .struct_value()
                                .fields()
                                .at("physicalLocation")
                                .struct_value()
                                .fields()
                                .at("artifactLocation")
                                .struct_value()
                                .fields()
                                .at("uri")
                                .string_value();
    EXPECT_THAT(uri, Not(HasSubstr("<")));
    EXPECT_THAT(uri, Not(HasSubstr(" ")));
  }
}

}  // namespace
}  // namespace cl

// The JSON report: a lossless round trip, the contract paths that dashboards and CI gates read
// (docs/design.md §6), and valid JSON even when a capture carried bad bytes.
#include "service/render/json.h"

#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/service/render/hero_report.h"
#include "tests/service/render/hostile_report.h"
#include "tests/service/render/page_text.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;
using testing::IsOk;
using testing::StatusIs;

TEST(JsonTest, RoundTripIsLossless) {
  const v1::AnalysisReport hero = testing::HeroReport();
  ASSERT_OK_AND_ASSIGN(const std::string json, RenderJson(hero));
  ASSERT_OK_AND_ASSIGN(const v1::AnalysisReport back, ParseReportJson(json));
  EXPECT_TRUE(MessageDifferencer::Equals(hero, back)) << json;
}

TEST(JsonTest, ContractPathsArePresent) {
  ASSERT_OK_AND_ASSIGN(const std::string json, RenderJson(testing::HeroReport()));
  for (const char* path : {"\"metadata\"",
                           "\"session_id\": \"00000000-0000-4000-8000-00000000he50\"",
                           "\"torch_version\": \"2.12.0\"",
                           "\"ir_diff\"",
                           "\"match_coverage\": 1",
                           "\"anchor_uniqueness\": 1",
                           "\"modified\"",
                           "\"confidence\": 1",
                           "\"recompile\"",
                           "\"total\": 3",
                           "\"categories\": 1",
                           "\"category\": \"size\"",
                           "\"transitions\"",
                           "\"16→32\"",
                           "\"suggestions\"",
                           "\"cache_limit_hits\": []",
                           "\"graph_breaks\": []",
                           "\"cache_stability\"",
                           "\"findings\": []",
                           "\"divergence\"",
                           "\"first_divergent_layer\": \"blocks.0.norm\"",
                           "\"max_abs_diff\": 5.033",
                           "\"layers_compared\": 2",
                           "\"kind\": \"PASS\"",
                           "\"lint\"",
                           "\"escalated\": false",
                           "\"pattern\": \"in_place_op_on_alias\"",
                           "\"fusion\"",
                           "\"line_start\": 69",
                           "\"line_end\": 72",
                           "\"hbm_bytes_before\": \"270336\"",
                           "\"speedup_bound\": 1.43",
                           "\"roofline\"",
                           "\"gpu\": \"A100-SXM-80GB\"",
                           "\"kernels\": []",
                           "\"raw\"",
                           "\"compiled_graphs\": 1",
                           "\"diagnostics\": []",
                           "\"status\": \"OK\"",
                           "\"reason\": \"\""}) {
    EXPECT_THAT(json, HasSubstr(path)) << path;
  }
}

TEST(JsonTest, StatusesAndReasonsArePrinted) {
  v1::AnalysisReport report;
  report.mutable_ir_diff()->set_status(v1::SKIPPED);
  report.mutable_ir_diff()->set_reason("no base capture");
  ASSERT_OK_AND_ASSIGN(const std::string json, RenderJson(report));
  EXPECT_THAT(json, HasSubstr("\"status\": \"SKIPPED\",\n  \"reason\": \"no base capture\""));
}

TEST(JsonTest, BadBytesBecomeReplacementCharactersNotBadJson) {
  ASSERT_OK_AND_ASSIGN(const std::string json, RenderJson(testing::HostileReport()));
  EXPECT_TRUE(testing::IsValidUtf8(json));
  ASSERT_OK_AND_ASSIGN(const v1::AnalysisReport back, ParseReportJson(json));
  EXPECT_EQ(
      back.divergence().first_divergent_layer().find("\uFFFD\uFFFD\uFFFD") != std::string::npos,
      true);
  EXPECT_THAT(back.recompile().clusters(0).axis(),
              HasSubstr("<script>alert(1)</script>\"'&amp;\u202E"));
}

// The fields the cache-stability and divergence passes added print the same bytes every time and
// read back losslessly, a NaN difference (a layer that produced NaN) included.
TEST(JsonTest, NewSectionFieldsAreDeterministicAndLossless) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::CacheStabilitySection* s = report.mutable_cache_stability();
  s->set_iterations(5);
  s->set_eager_checks(2);
  s->set_benign_changes(1);
  s->add_noisy_keys("model.w._version");
  s->add_noisy_keys("rng.cpu");
  v1::CacheStabilityFinding* f = s->add_findings();
  f->set_verdict(v1::CacheStabilityFinding::STALE);
  f->set_confidence(1.0 / 3);
  f->set_before("0 hook(s)");
  f->set_after("1 hook(s): <lambda>");
  f->set_frame("forward");
  v1::DivergenceSection* d = report.mutable_divergence();
  d->set_max_abs_diff(std::numeric_limits<double>::quiet_NaN());
  d->set_accumulated_max_abs_diff(std::numeric_limits<double>::infinity());
  d->set_severity(v1::DivergenceSection::LOW);
  d->mutable_cause()->set_confidence(0.5);
  d->add_steps()->set_toggle("backend=aot_eager");
  ASSERT_OK_AND_ASSIGN(const std::string json, RenderJson(report));
  ASSERT_OK_AND_ASSIGN(const std::string again, RenderJson(report));
  EXPECT_EQ(json, again);
  for (const char* path :
       {"\"verdict\": \"STALE\"", "\"noisy_keys\": [", "\"severity\": \"LOW\"",
        "\"max_abs_diff\": \"NaN\"", "\"accumulated_max_abs_diff\": \"Infinity\"",
        "\"toggle\": \"backend=aot_eager\""}) {
    EXPECT_THAT(json, HasSubstr(path)) << path;
  }
  ASSERT_OK_AND_ASSIGN(const v1::AnalysisReport back, ParseReportJson(json));
  // NaN equals nothing, itself included: compare it apart.
  EXPECT_TRUE(std::isnan(back.divergence().max_abs_diff()));
  d->clear_max_abs_diff();
  v1::AnalysisReport back_without_nan = back;
  back_without_nan.mutable_divergence()->clear_max_abs_diff();
  EXPECT_TRUE(MessageDifferencer::Equals(report, back_without_nan)) << json;
}

// The enums that were strings print (and read back) as the strings they were: their words
// (report.proto); the zero value of one, as the empty string it was.
TEST(JsonTest, EnumFieldsPrintTheirWords) {
  v1::AnalysisReport report;
  v1::RecompileSection* recompile = report.mutable_recompile();
  recompile->add_clusters()->set_category(v1::RecompileCategory::GLOBAL_STATE);
  recompile->add_suggestions()->set_category(v1::RecompileCategory::CACHE_LIMIT);
  recompile->add_reasons()->set_category(v1::RecompileCategory::UNKNOWN);
  recompile->add_graph_breaks()->set_category(v1::GraphBreakCategory::DATA_DEPENDENT_BRANCH);
  report.mutable_lint()->add_findings()->set_severity(v1::LintFinding::WARNING);
  report.mutable_lint()->add_findings();  // unrated
  v1::RooflineKernel* kernel = report.mutable_roofline()->add_kernels();
  kernel->set_bound(v1::RooflineKernel::COMPUTE);
  kernel->set_time_source(v1::RooflineKernel::ESTIMATED);
  report.mutable_roofline()->add_kernels();  // no bound, no time
  ASSERT_OK_AND_ASSIGN(const std::string json, RenderJson(report));
  for (const char* path :
       {"\"category\": \"global_state\"", "\"category\": \"cache_limit\"",
        "\"category\": \"unknown\"", "\"category\": \"data_dependent_branch\"",
        "\"severity\": \"warning\"", "\"severity\": \"\"", "\"bound\": \"compute\"",
        "\"time_source\": \"estimated\"", "\"bound\": \"\"", "\"time_source\": \"\""}) {
    EXPECT_THAT(json, HasSubstr(path)) << path;
  }
  ASSERT_OK_AND_ASSIGN(const v1::AnalysisReport back, ParseReportJson(json));
  EXPECT_TRUE(MessageDifferencer::Equals(report, back)) << json;
}

TEST(JsonTest, ParseRejectsMalformedAndIgnoresUnknownFields) {
  EXPECT_THAT(ParseReportJson("{\"recompile\": "),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("report JSON")));
  ASSERT_OK_AND_ASSIGN(const v1::AnalysisReport report,
                       ParseReportJson(R"({"recompile": {"total": 4, "from_the_future": 1}})"));
  EXPECT_EQ(report.recompile().total(), 4u);
}

}  // namespace
}  // namespace cl

// The report's words: every value of the enums that were free strings carries the string the
// JSON printed before, and protobuf's JSON printer and parser use them through ReportTypes().
#include "proto/report_words.h"

#include <string>
#include <vector>

#include "common/proto_json.h"
#include "compile_lens/v1/report.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// Every value's word, in number order.
std::vector<std::string> Words(const google::protobuf::EnumDescriptor& e) {
  std::vector<std::string> words;
  for (int i = 0; i < e.value_count(); ++i) words.emplace_back(Word(e.value(i)));
  return words;
}

// The words are a contract (docs/design.md §6, deploy/monitoring): these lists are the strings the
// report held before they were enums, and only ever grow.
TEST(ReportWordsTest, EveryValueHasTheWordItHadAsAString) {
  EXPECT_THAT(Words(*v1::RecompileCategory::Value_descriptor()),
              ElementsAreArray({"", "size", "stride", "dtype", "device", "requires_grad", "value",
                                "identity", "type", "global_state", "symbolic_shape", "module_mode",
                                "aliasing", "backend_config", "container", "other", "unknown",
                                "cache_limit"}));
  EXPECT_THAT(
      Words(*v1::GraphBreakCategory::Value_descriptor()),
      ElementsAreArray({"", "data_dependent_branch", "scalar_extraction", "dynamic_output_shape",
                        "logging", "unsupported_call", "user_requested", "context_manager",
                        "exception", "nn_module", "generator", "fake_tensor", "bytecode",
                        "recompile_limit", "frame_skip", "other"}));
  EXPECT_THAT(Words(*v1::LintFinding::Severity_descriptor()),
              ElementsAreArray({"", "info", "warning", "error"}));
  EXPECT_THAT(Words(*v1::RooflineKernel::Bound_descriptor()),
              ElementsAreArray({"", "memory", "compute"}));
  EXPECT_THAT(Words(*v1::RooflineKernel::TimeSource_descriptor()),
              ElementsAreArray({"", "measured", "estimated"}));
}

TEST(ReportWordsTest, TypedValuesAndValuesWithoutAWord) {
  EXPECT_EQ(Word(v1::LintFinding::ERROR), "error");
  EXPECT_EQ(Word(v1::RecompileCategory::GLOBAL_STATE), "global_state");
  EXPECT_EQ(Word(v1::LintFinding::UNRATED), "");
  // An enum without words keeps its names; a number this build does not know has no word.
  EXPECT_EQ(Word(v1::SKIPPED), "SKIPPED");
  EXPECT_EQ(Word(static_cast<v1::RecompileCategory::Value>(99)), "");
}

std::string Json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  absl::StatusOr<std::string> json = ToDeterministicJson(message, options, ReportTypes());
  EXPECT_TRUE(json.ok()) << json.status();
  return json.ok() ? *json : "";
}

// Set values print as their words, values left at zero as the zero value's (""), and enums
// without words as protobuf names them.
TEST(ReportTypesTest, JsonPrintsWords) {
  v1::RooflineKernel kernel;
  kernel.set_bound(v1::RooflineKernel::MEMORY);
  EXPECT_THAT(Json(kernel), HasSubstr(R"("bound":"memory")"));
  EXPECT_THAT(Json(kernel), HasSubstr(R"("time_source":"")"));
  v1::RecompileSection section;
  section.set_status(v1::OK);
  section.add_clusters()->set_category(v1::RecompileCategory::REQUIRES_GRAD);
  section.add_graph_breaks();
  EXPECT_THAT(Json(section), HasSubstr(R"("status":"OK")"));
  EXPECT_THAT(Json(section), HasSubstr(R"("category":"requires_grad")"));
  EXPECT_THAT(Json(section), HasSubstr(R"("graph_breaks":[{"reason":"","category":"")"));
}

TEST(ReportTypesTest, JsonParsesWords) {
  std::string wire;
  ASSERT_TRUE(google::protobuf::util::JsonToBinaryString(
                  ReportTypes(), std::string(kTypeUrlPrefix) + "/compile_lens.v1.LintFinding",
                  R"({"severity": "warning"})", &wire)
                  .ok());
  v1::LintFinding finding;
  ASSERT_TRUE(finding.ParseFromString(wire));
  EXPECT_EQ(finding.severity(), v1::LintFinding::WARNING);
  ASSERT_TRUE(google::protobuf::util::JsonToBinaryString(
                  ReportTypes(), std::string(kTypeUrlPrefix) + "/compile_lens.v1.LintFinding",
                  R"({"severity": ""})", &wire)
                  .ok());
  ASSERT_TRUE(finding.ParseFromString(wire));
  EXPECT_EQ(finding.severity(), v1::LintFinding::UNRATED);
}

}  // namespace
}  // namespace cl

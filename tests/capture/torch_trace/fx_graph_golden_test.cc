// The FX text parser against golden dumps of payloads cut from real logs (tests/golden/fx_graph).
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "gtest/gtest.h"
#include "tests/capture/torch_trace/fx_graph_testing.h"
#include "tests/testing/status_matchers.h"

namespace cl::fx_testing {
namespace {

using ::cl::testing::IsOk;

class FxGoldenTest : public ::testing::TestWithParam<const char*> {};

// tests/golden/fx_graph/<case>.txt is a payload cut from a real log (see README.md there);
// <case>.nodes.txt is the expected dump. CL_UPDATE_GOLDEN=1 rewrites the expectations.
TEST_P(FxGoldenTest, MatchesGolden) {
  const std::string base = absl::StrCat(kGoldenDir, "/", GetParam());
  ASSERT_OK_AND_ASSIGN(const std::string text, ReadFile(base + ".txt"));
  const Parsed p = Parse(text);
  const std::string dump = Dump(p.graph, p.result);
  EXPECT_EQ(p.result.skipped_lines, 0u) << dump;
  ExpectConsistent(p.graph);
  const char* update = std::getenv("CL_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    ASSERT_THAT(WriteFile(base + ".nodes.txt", dump), IsOk());
    return;
  }
  ASSERT_OK_AND_ASSIGN(const std::string want, ReadFile(base + ".nodes.txt"));
  EXPECT_EQ(dump, want) << "regenerate with CL_UPDATE_GOLDEN=1 if the change is intended";
}

INSTANTIATE_TEST_SUITE_P(Payloads, FxGoldenTest,
                         ::testing::Values("hero_post_grad", "hero_dynamo_output",
                                           "train_aot_backward", "train_aot_joint",
                                           "dynamic_symbolic", "dynamic_aot_backward_symbolic",
                                           "corpus_joint_pytree_multiline",
                                           "corpus_flex_attention_nested", "corpus_aot_get_attr",
                                           "corpus_multiline_signature"));

}  // namespace
}  // namespace cl::fx_testing

// RepairUtf8 and ClipLongStrings over real report messages: every string field at any depth,
// singular and repeated, map values but never map keys.
#include "common/proto_utf8.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "compile_lens/v1/report.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;

using ::testing::EndsWith;
using ::testing::StartsWith;

TEST(ClipLongStringsTest, ClipsEveryLongStringAndStatesItsLength) {
  v1::AnalysisReport report;
  const std::string long_name(100, 'n');
  report.mutable_recompile()->add_clusters()->set_frame(long_name);        // nested, repeated
  report.mutable_recompile()->add_clusters()->add_transitions(long_name);  // a repeated string
  report.mutable_metadata()->set_session_id("short");                      // left whole
  (*report.mutable_metadata()->mutable_labels())[long_name] = long_name;   // map: value only
  EXPECT_EQ(ClipLongStrings(report, 10), 3);

  const std::string clipped =
      absl::StrCat(std::string(10, 'n'), kEllipsis, "[clipped: 100 bytes in all]");
  EXPECT_EQ(report.recompile().clusters(0).frame(), clipped);
  EXPECT_EQ(report.recompile().clusters(1).transitions(0), clipped);
  EXPECT_EQ(report.metadata().session_id(), "short");
  ASSERT_EQ(report.metadata().labels().count(long_name), 1u);  // the key stays distinct
  EXPECT_EQ(report.metadata().labels().at(long_name), clipped);
  EXPECT_EQ(ClipLongStrings(report, 1000), 0);  // nothing is over a larger bound
}

TEST(ClipLongStringsTest, CutsOnACharacterBoundary) {
  v1::AnalysisReport report;
  report.mutable_metadata()->set_session_id("ab\xE2\x82\xAC\xE2\x82\xAC");  // ab€€, 8 bytes
  EXPECT_EQ(ClipLongStrings(report, 4), 1);
  EXPECT_THAT(report.metadata().session_id(), StartsWith(absl::StrCat("ab", kEllipsis)));
  EXPECT_THAT(report.metadata().session_id(), EndsWith("[clipped: 8 bytes in all]"));
  EXPECT_TRUE(IsValidUtf8(report.metadata().session_id()));
}

TEST(RepairUtf8Test, ReplacesIllFormedBytesAtAnyDepth) {
  v1::AnalysisReport report;
  report.mutable_recompile()->add_clusters()->set_frame("f\xFF");
  report.mutable_metadata()->set_session_id("fine");
  EXPECT_EQ(RepairUtf8(report), 1);
  EXPECT_EQ(report.recompile().clusters(0).frame(), "f\xEF\xBF\xBD");
  EXPECT_EQ(report.metadata().session_id(), "fine");
}

}  // namespace
}  // namespace cl

// ImportCounts: what each counter prints, with which severity, and in what order.
#include "capture/torch_trace/import_counters.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Listed(const ImportCounts& counts) {
  v1::SessionCapture capture;
  counts.AppendDiagnostics("trace", &capture);
  std::vector<std::string> out;
  for (const v1::Diagnostic& d : capture.diagnostics()) {
    out.push_back(absl::StrCat(v1::Diagnostic::Severity_Name(d.severity()), " ", d.where(), ": ",
                               d.message()));
  }
  return out;
}

TEST(ImportCountsTest, NothingCountedListsNothing) {
  EXPECT_THAT(Listed(ImportCounts()), IsEmpty());
}

TEST(ImportCountsTest, EachCounterPrintsItsWordsAndSeverity) {
  ImportCounts counts;
  counts.Add(ImportCounter::kBadJson, 3);
  counts.Add(ImportCounter::kGraphs);
  EXPECT_THAT(Listed(counts),
              ElementsAre("WARNING trace: import: 3 bad json", "INFO trace: import: 1 graph"));
}

TEST(ImportCountsTest, TheTokenizersCountersComeFirst) {
  TokenizerCounters t;
  t.records = 7;
  t.long_lines = 1;
  t.lines = 9;  // not a diagnostic
  ImportCounts counts;
  counts.Add(ImportCounter::kBadArtifactJson);
  counts.AddTokenizer(t);
  EXPECT_THAT(Listed(counts),
              ElementsAre("INFO trace: import: 7 records read",
                          "WARNING trace: import: 1 line over the line-length cap (cut)",
                          "WARNING trace: import: 1 bad artifact json"));
}

TEST(ImportCountsTest, ExtrasAreCountedByKindInByteOrder) {
  ImportCounts counts;
  counts.AddKeptInExtras("artifact:b");
  counts.AddKeptInExtras("str_x");
  counts.AddKeptInExtras("artifact:b");
  counts.AddKeptInExtras("artifact:a");
  counts.Add(ImportCounter::kOtherRank);
  counts.Add(ImportCounter::kGuardTreesWithoutGuardLine);
  EXPECT_EQ(counts.count(ImportCounter::kKeptInExtras), 4u);
  EXPECT_THAT(Listed(counts),
              ElementsAre("WARNING trace: import: 1 guard tree without a guard line",
                          "INFO trace: import: 1 kept in extras: artifact:a",
                          "INFO trace: import: 2 kept in extras: artifact:b",
                          "INFO trace: import: 1 kept in extras: str_x",
                          "INFO trace: import: 1 other rank"));
}

TEST(ImportCountsTest, EveryRowHasWords) {
  for (const ImportCounterInfo& row : kImportCounters) {
    EXPECT_FALSE(row.message.empty()) << static_cast<int>(row.id);
    EXPECT_EQ(&InfoOf(row.id), &row);
  }
}

}  // namespace
}  // namespace cl

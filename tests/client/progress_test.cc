// The progress line: drawn only on a terminal, only after a second, never more than ten times a
// second, and erased before anything else is printed.
#include "client/progress.h"

#include <sstream>

#include "common/number_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

auto Records(int n) {
  return [n] { return FormatCount(n, "record", "records"); };
}

TEST(ProgressLineTest, TheLineSaysHowFarAndHowLong) {
  EXPECT_EQ(
      ProgressLine::Text("/tmp/run.log", 100 << 20, 400 << 20, "12345 records", absl::Seconds(3)),
      "run.log: 100 MiB of 400 MiB (25%) · 12345 records · about 10 s left");
  // A .gz: no total, so no share and no estimate.
  EXPECT_EQ(ProgressLine::Text("run.log.gz", 5 << 20, 0, "1 record", absl::Seconds(3)),
            "run.log.gz: 5 MiB · 1 record");
}

TEST(ProgressLineTest, NothingInTheFirstSecondNorWhenDisabled) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  std::ostringstream on, off;
  ProgressLine line(on, /*enabled=*/true), quiet(off, /*enabled=*/false);
  line.Update("a.log", 1, 10, Records(1), t0);
  line.Update("a.log", 2, 10, Records(1), t0 + absl::Milliseconds(900));
  EXPECT_EQ(on.str(), "");
  line.Update("a.log", 5, 10, Records(3), t0 + absl::Seconds(2));
  EXPECT_EQ(on.str(), "\r\x1b[Ka.log: 5 B of 10 B (50%) · 3 records · about 3 s left");
  // Not again within 100 ms.
  line.Update("a.log", 6, 10, Records(3), t0 + absl::Seconds(2) + absl::Milliseconds(50));
  EXPECT_EQ(on.str(), "\r\x1b[Ka.log: 5 B of 10 B (50%) · 3 records · about 3 s left");
  line.Clear();
  EXPECT_THAT(on.str(), ::testing::EndsWith("\r\x1b[K"));
  for (int i = 0; i < 5; ++i) quiet.Update("a.log", i, 10, Records(1), t0 + absl::Seconds(2 + i));
  quiet.Clear();
  EXPECT_EQ(off.str(), "");
}

}  // namespace
}  // namespace cl

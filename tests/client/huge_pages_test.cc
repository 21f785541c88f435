// When cl-client asks for 2 MiB pages: /proc/buddyinfo read as the kernel writes it, and the rule
// (1 GiB free in 2 MiB blocks, and four times the input).
#include "client/huge_pages.h"

#include <filesystem>
#include <string>

#include "common/file_io.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// This machine's, as it read one day: orders 0 to 10 of each zone.
constexpr char kBuddyinfo[] =
    "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1"
    "      3 \n"
    "Node 0, zone    DMA32      1      3      2      2      1      2      0      3      3      1"
    "    753 \n"
    "Node 0, zone   Normal   1199   5389  10390  10141   4815   2625    872    589    195      1"
    "    190 \n";

TEST(HugePagesTest, FreeBlocksOf2MiBAndUpAcrossZones) {
  // Order 9 (2 MiB): 1 + 1 + 1; order 10 (4 MiB): 3 + 753 + 190.
  EXPECT_EQ(FreeHugeBlockBytes(kBuddyinfo, 4096), 3 * 2 * kMiB + 946 * 4 * kMiB);
  // No block that large is free: a fragmented machine.
  EXPECT_EQ(FreeHugeBlockBytes("Node 0, zone   Normal   90000   5000   20   3   1   0   0   0   0"
                               "   0   0\n",
                               4096),
            0u);
}

TEST(HugePagesTest, TextThatIsNotBuddyinfoIsNoFreeMemory) {
  EXPECT_EQ(FreeHugeBlockBytes("", 4096), 0u);
  EXPECT_EQ(FreeHugeBlockBytes("hello\n", 4096), 0u);
  EXPECT_EQ(FreeHugeBlockBytes("Node 0, zone Normal 1 2 x 4 5 6 7 8 9 10 11\n", 4096), 0u);
}

TEST(HugePagesTest, OnlyForLargeInputsWith1GiBFreeAndFourTimesTheInput) {
  EXPECT_TRUE(HugePagesFit(kHugePagesMinInputBytes, 1 << 30));
  // a fragmented machine: the kernel would compact
  EXPECT_FALSE(HugePagesFit(kHugePagesMinInputBytes, (1 << 30) - 1));
  // a log of a few KB: clearing one 2 MiB page costs more than its 4 KiB faults
  EXPECT_FALSE(HugePagesFit(0, 4ull << 30));
  EXPECT_FALSE(HugePagesFit(kHugePagesMinInputBytes - 1, 4ull << 30));
  EXPECT_TRUE(HugePagesFit(74 * kMiB, 4ull << 30));
  EXPECT_TRUE(HugePagesFit(1 << 30, 4ull << 30));
  EXPECT_FALSE(HugePagesFit((1 << 30) + 1, 4ull << 30));
}

TEST(HugePagesTest, InputBytesOfFilesGzipsAndDirectories) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "huge_pages";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteFile((dir / "rank_0.log").string(), std::string(1000, 'x')).ok());
  ASSERT_TRUE(WriteFile((dir / "rank_1.log.gz").string(), std::string(100, 'x')).ok());
  EXPECT_EQ(InputBytes({(dir / "rank_0.log").string()}), 1000u);
  EXPECT_EQ(InputBytes({(dir / "rank_1.log.gz").string()}), 800u);
  EXPECT_EQ(InputBytes({dir.string()}), 1800u);
  EXPECT_EQ(InputBytes({dir.string(), (dir / "missing.log").string()}), 1800u);
}

}  // namespace
}  // namespace cl

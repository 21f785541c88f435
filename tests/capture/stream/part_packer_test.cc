// PartPacker: parts come out in order, batched under the budget, a lone part as a plain `part`.
#include "capture/stream/part_packer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "capture/stream/capture_splitter.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/captures.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

using ::cl::testing::IsOk;
using ::cl::testing::StatusIs;
using ::google::protobuf::util::MessageDifferencer;

std::vector<v1::CapturePart> HeroParts() {
  std::vector<v1::CapturePart> parts;
  EXPECT_THAT(SplitCapture(::cl::testing::LoadHero("head.cls.json"), v1::HEAD, kDefaultPartBudget,
                           [&](v1::CapturePart&& p) {
                             parts.push_back(std::move(p));
                             return absl::OkStatus();
                           }),
              IsOk());
  return parts;
}

std::vector<v1::AnalyzeChunk> Pack(const std::vector<v1::CapturePart>& parts, size_t budget) {
  std::vector<v1::AnalyzeChunk> chunks;
  PartPacker packer(budget);
  const auto emit = [&](v1::AnalyzeChunk&& c) {
    chunks.push_back(std::move(c));
    return absl::OkStatus();
  };
  for (v1::CapturePart p : parts) EXPECT_THAT(packer.Add(std::move(p), emit), IsOk());
  EXPECT_THAT(packer.Flush(emit), IsOk());
  EXPECT_EQ(packer.parts(), parts.size());
  return chunks;
}

std::vector<v1::CapturePart> Unpack(const std::vector<v1::AnalyzeChunk>& chunks) {
  std::vector<v1::CapturePart> parts;
  for (const v1::AnalyzeChunk& c : chunks) {
    if (c.has_part()) parts.push_back(c.part());
    for (const v1::CapturePart& p : c.parts().parts()) parts.push_back(p);
  }
  return parts;
}

void ExpectSameParts(const std::vector<v1::CapturePart>& a, const std::vector<v1::CapturePart>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(MessageDifferencer::Equals(a[i], b[i])) << "part " << i;
}

TEST(PartPackerTest, HeroPartsComeBackInOrderInFewMessagesUnderTheBudget) {
  const std::vector<v1::CapturePart> parts = HeroParts();
  for (size_t budget : {size_t{4096}, size_t{64 << 10}, kDefaultPartBudget}) {
    const std::vector<v1::AnalyzeChunk> chunks = Pack(parts, budget);
    ExpectSameParts(Unpack(chunks), parts);
    // A part over the budget (a record's text, a compile with its metrics) goes alone; the
    // others are packed, four or more to a message.
    const size_t alone = std::count_if(parts.begin(), parts.end(), [&](const v1::CapturePart& p) {
      return p.ByteSizeLong() > budget;
    });
    EXPECT_LT((chunks.size() - alone) * 4, parts.size() - alone) << "budget " << budget;
    for (const v1::AnalyzeChunk& c : chunks) {
      // A batch stays under the budget (a part alone may be as large as the splitter made it).
      if (c.has_parts()) {
        EXPECT_LE(c.ByteSizeLong(), budget + 16);
        EXPECT_GE(c.parts().parts_size(), 2);
      }
    }
  }
}

TEST(PartPackerTest, BudgetZeroSendsEveryPartAlone) {
  const std::vector<v1::CapturePart> parts = HeroParts();
  const std::vector<v1::AnalyzeChunk> chunks = Pack(parts, 0);
  ASSERT_EQ(chunks.size(), parts.size());
  for (const v1::AnalyzeChunk& c : chunks) EXPECT_TRUE(c.has_part());
  ExpectSameParts(Unpack(chunks), parts);
}

TEST(PartPackerTest, APartOverTheBudgetGoesAloneBetweenBatches) {
  std::vector<v1::CapturePart> parts(5);
  for (size_t i = 0; i < parts.size(); ++i) {
    parts[i].set_side(v1::HEAD);
    parts[i].mutable_extra()->set_payload(std::string(i == 2 ? 5000 : 100, 'x'));
  }
  const std::vector<v1::AnalyzeChunk> chunks = Pack(parts, 1024);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].parts().parts_size(), 2);
  EXPECT_TRUE(chunks[1].has_part());
  EXPECT_EQ(chunks[2].parts().parts_size(), 2);
  ExpectSameParts(Unpack(chunks), parts);
}

TEST(PartPackerTest, AnEmitErrorStopsThePacking) {
  PartPacker packer(0);
  int calls = 0;
  const auto refuse = [&](v1::AnalyzeChunk&&) {
    ++calls;
    return absl::AbortedError("the server closed the stream");
  };
  v1::CapturePart part;
  part.set_side(v1::HEAD);
  EXPECT_THAT(packer.Add(v1::CapturePart(part), refuse), IsOk());  // queued, nothing sent yet
  EXPECT_THAT(packer.Add(v1::CapturePart(part), refuse),
              StatusIs(absl::StatusCode::kAborted, ::testing::_));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace cl

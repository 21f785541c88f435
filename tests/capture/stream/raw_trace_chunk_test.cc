// WriteRawTraceChunk and WriteRawTraceChunkHeader: the bytes they write (with the piece after the
// header) are those protobuf serializes for the same AnalyzeChunk, for every side and for piece
// sizes whose lengths cross each varint width.
#include "capture/stream/raw_trace_chunk.h"

#include <string>

#include "common/proto_json.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

std::string Serialized(v1::Side side, const std::string& piece) {
  v1::AnalyzeChunk chunk;
  chunk.mutable_part()->set_side(side);
  chunk.mutable_part()->set_torch_trace(piece);
  return DeterministicBytes(chunk);
}

std::string Written(v1::Side side, const std::string& piece) {
  std::string out(RawTraceChunkSize(side, piece.size()), '\xee');
  out.resize(WriteRawTraceChunk(side, piece, out.data()));
  return out;
}

TEST(RawTraceChunkTest, TheBytesAreProtobufsForEverySideAndVarintWidth) {
  int checked = 0;
  for (const v1::Side side : {v1::HEAD, v1::BASE, v1::SIDE_UNSPECIFIED}) {
    // Around each width of the piece's length and of the part's (a few bytes more).
    for (const size_t edge : {size_t{0}, size_t{128}, size_t{16384}, size_t{2097152}}) {
      for (size_t size = edge < 8 ? 0 : edge - 8; size <= edge + 8; ++size) {
        std::string piece(size, 'x');
        for (size_t i = 0; i < size; i += 61) piece[i] = static_cast<char>('a' + i % 26);
        const std::string want = Serialized(side, piece);
        ASSERT_EQ(RawTraceChunkSize(side, size), want.size())
            << "side " << side << " size " << size;
        ASSERT_EQ(Written(side, piece), want) << "side " << side << " size " << size;
        // Sent from where the piece lies: the header, then the piece.
        char header[kMaxRawTraceChunkHeader];
        const size_t n = WriteRawTraceChunkHeader(side, size, header);
        ASSERT_EQ(std::string(header, n) + piece, want) << "side " << side << " size " << size;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3 * (9 + 17 * 3));
}

TEST(RawTraceChunkTest, TheServerReadsItAsThePart) {
  const std::string piece = "V1206 09:00:00.000000 1 x.py:1] {\"dynamo_start\": {}}\n";
  v1::AnalyzeChunk chunk;
  ASSERT_TRUE(chunk.ParseFromString(Written(v1::BASE, piece)));
  ASSERT_EQ(chunk.kind_case(), v1::AnalyzeChunk::kPart);
  EXPECT_EQ(chunk.part().side(), v1::BASE);
  EXPECT_EQ(chunk.part().torch_trace(), piece);
}

}  // namespace
}  // namespace cl

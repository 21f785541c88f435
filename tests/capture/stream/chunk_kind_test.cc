// ChunkKindOnWire: the oneof member protobuf's parse would set, read off the top-level tags; broken
// framing is refused as the parse refuses it. CarriesTorchTrace: whether a message carries raw log
// bytes, read off the tags of its parts.
#include "capture/stream/chunk_kind.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"
#include "tests/testing/captures.h"

namespace cl {
namespace {

using Kind = v1::AnalyzeChunk::KindCase;

// Read in blocks of `block` bytes, so that lengths and tags straddle the stream's buffers.
std::optional<Kind> KindOf(const std::string& bytes, int block = 7) {
  google::protobuf::io::ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()), block);
  return ChunkKindOnWire(&in);
}

std::optional<Kind> ParsedKind(const std::string& bytes) {
  v1::AnalyzeChunk chunk;
  if (!chunk.ParseFromString(bytes)) return std::nullopt;
  return chunk.kind_case();
}

TEST(ChunkKindTest, EveryKindAsSerialized) {
  v1::AnalyzeChunk chunk;
  EXPECT_EQ(KindOf(chunk.SerializeAsString()), v1::AnalyzeChunk::KIND_NOT_SET);
  chunk.mutable_options()->set_render_html(true);
  EXPECT_EQ(KindOf(chunk.SerializeAsString()), v1::AnalyzeChunk::kOptions);
  chunk.mutable_part()->mutable_frame()->set_name("forward");
  EXPECT_EQ(KindOf(chunk.SerializeAsString()), v1::AnalyzeChunk::kPart);
  chunk.mutable_end();  // empty: still the member, encoded with length 0
  EXPECT_EQ(KindOf(chunk.SerializeAsString()), v1::AnalyzeChunk::kEnd);
  chunk.mutable_parts()->add_parts();
  EXPECT_EQ(KindOf(chunk.SerializeAsString()), v1::AnalyzeChunk::kParts);
}

TEST(ChunkKindTest, TheHeroSessionsMessages) {
  const std::vector<std::string> messages = ::cl::testing::HeroStreamMessages();
  ASSERT_GE(messages.size(), 3u);
  for (const std::string& m : messages) {
    ASSERT_TRUE(ParsedKind(m).has_value());
    EXPECT_EQ(KindOf(m, 1), ParsedKind(m));
    EXPECT_EQ(KindOf(m, 4096), ParsedKind(m));
  }
  EXPECT_EQ(KindOf(messages.back()), v1::AnalyzeChunk::kEnd);
}

TEST(ChunkKindTest, TheLastMemberWinsAsInTheParse) {
  v1::AnalyzeChunk part, end;
  part.mutable_part()->mutable_frame()->set_name("forward");
  end.mutable_end()->set_parts(1);
  const std::string both = part.SerializeAsString() + end.SerializeAsString();
  EXPECT_EQ(KindOf(both), v1::AnalyzeChunk::kEnd);
  EXPECT_EQ(ParsedKind(both), v1::AnalyzeChunk::kEnd);
  const std::string back = end.SerializeAsString() + part.SerializeAsString();
  EXPECT_EQ(KindOf(back), v1::AnalyzeChunk::kPart);
  EXPECT_EQ(ParsedKind(back), v1::AnalyzeChunk::kPart);
}

TEST(ChunkKindTest, UnknownFieldsAndMembersOfAnotherWireTypeAreSkipped) {
  // Field 3 (`end`) as a varint, field 9 as a varint, a fixed64 and a group: all unknown fields.
  const std::string unknown = std::string("\x18\x01", 2) + std::string("\x48\x05", 2) +
                              std::string("\x51", 1) + std::string(8, '\x00') +
                              std::string("\x5b\x08\x01\x5c", 4);
  EXPECT_EQ(KindOf(unknown), v1::AnalyzeChunk::KIND_NOT_SET);
  EXPECT_EQ(ParsedKind(unknown), v1::AnalyzeChunk::KIND_NOT_SET);
  v1::AnalyzeChunk end;
  end.mutable_end();
  EXPECT_EQ(KindOf(unknown + end.SerializeAsString()), v1::AnalyzeChunk::kEnd);
  EXPECT_EQ(ParsedKind(unknown + end.SerializeAsString()), v1::AnalyzeChunk::kEnd);
}

TEST(ChunkKindTest, BrokenFramingIsRefusedAsTheParseRefusesIt) {
  const std::vector<std::string> broken = {
      std::string("\x22\x05\x0a", 3),  // `parts`, 5 bytes long, 1 there
      std::string("\x22", 1),          // a tag and no length
      std::string("\x22\x80", 2),      // a length's varint cut short
      std::string(12, '\xff'),         // a varint past 10 bytes
      std::string("\x00\x01", 2),      // tag 0
      std::string("\x1c", 1),          // an end-group with no group
      std::string("\x5b\x08\x01", 3),  // a group that never ends
      std::string("\x1f\x00", 2),      // wire type 7
  };
  for (const std::string& b : broken) {
    EXPECT_EQ(KindOf(b), std::nullopt) << absl::CHexEscape(b);
    EXPECT_EQ(ParsedKind(b), std::nullopt) << absl::CHexEscape(b);
  }
}

// Every prefix of a message of several top-level fields (real parts, an unknown field, the end
// marker): where the parse takes it, the kind is the parse's; where the framing is refused, the
// parse refuses it too.
TEST(ChunkKindTest, EveryPrefixAgreesWithTheParse) {
  v1::AnalyzeChunk first;
  ASSERT_TRUE(first.ParseFromString(::cl::testing::HeroStreamMessages().front()));
  ASSERT_GE(first.parts().parts_size(), 4);
  v1::AnalyzeChunk part, batch, end;
  *part.mutable_part() = first.parts().parts(0);
  for (int i = 1; i < 4; ++i) *batch.mutable_parts()->add_parts() = first.parts().parts(i);
  end.mutable_end()->set_parts(4);
  const std::string m = part.SerializeAsString() + std::string("\x48\x05", 2) +
                        batch.SerializeAsString() + end.SerializeAsString() +
                        part.SerializeAsString();
  int whole = 0;
  for (size_t n = 0; n <= m.size(); ++n) {
    const std::string prefix = m.substr(0, n);
    const std::optional<Kind> peeked = KindOf(prefix, 64);
    const std::optional<Kind> parsed = ParsedKind(prefix);
    if (parsed) {
      ++whole;
      EXPECT_EQ(peeked, parsed) << "prefix of " << n << " bytes";
    }
    if (!peeked) {
      EXPECT_EQ(parsed, std::nullopt) << "prefix of " << n << " bytes";
    }
  }
  EXPECT_GE(whole, 6);  // the empty message and one after each field, at least
}

bool Raw(const std::string& bytes, int block = 7) {
  google::protobuf::io::ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()), block);
  return CarriesTorchTrace(&in);
}

TEST(ChunkKindTest, RawLogBytesAloneOrInABatch) {
  v1::AnalyzeChunk part;
  part.mutable_part()->set_side(v1::HEAD);
  part.mutable_part()->set_torch_trace("V1206 00:00:00.000000 1 a.py:1] {}\n");
  EXPECT_TRUE(Raw(part.SerializeAsString()));
  EXPECT_TRUE(Raw(part.SerializeAsString(), 1));
  v1::AnalyzeChunk batch;
  batch.mutable_parts()->add_parts()->mutable_header()->set_schema("x");
  *batch.mutable_parts()->add_parts() = part.part();
  EXPECT_TRUE(Raw(batch.SerializeAsString()));
  // An empty log is still raw bytes (length 0, the member set).
  part.mutable_part()->set_torch_trace("");
  EXPECT_TRUE(Raw(part.SerializeAsString()));
}

TEST(ChunkKindTest, TypedPartsAreNotRaw) {
  for (const std::string& m : ::cl::testing::HeroStreamMessages()) EXPECT_FALSE(Raw(m));
  // A typed part that merely has a field numbered like torch_trace in another message (a frame's
  // name is field 1 of Frame, torch_trace field 14 of CapturePart): looked for at the part's level.
  v1::AnalyzeChunk chunk;
  chunk.mutable_part()->mutable_frame()->set_name(std::string(14, 'x'));
  EXPECT_FALSE(Raw(chunk.SerializeAsString()));
}

TEST(ChunkKindTest, BrokenFramingIsNotRaw) {
  v1::AnalyzeChunk part;
  part.mutable_part()->set_torch_trace("V1206 00:00:00.000000 1 a.py:1] {}\n");
  const std::string bytes = part.SerializeAsString();
  for (size_t cut = 0; cut < bytes.size(); ++cut) EXPECT_FALSE(Raw(bytes.substr(0, cut))) << cut;
}

}  // namespace
}  // namespace cl

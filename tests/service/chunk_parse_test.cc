// ApplyRawTraceParts: a message of raw TORCH_TRACE parts is read in place, its bytes handed on as
// the pieces the received slices hold; any other message is left, untouched, to ParseChunk.
#include "service/server/chunk_parse.h"

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_join.h"
#include "common/proto_json.h"
#include "gmock/gmock.h"
#include "grpcpp/support/slice.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

v1::CapturePart RawPart(v1::Side side, const std::string& bytes) {
  v1::CapturePart part;
  part.set_side(side);
  part.set_torch_trace(bytes);
  return part;
}

// `wire` as a received message, cut into slices of the sizes `cuts` gives in turn.
grpc::ByteBuffer Received(const std::string& wire, const std::vector<size_t>& cuts = {}) {
  std::vector<grpc::Slice> slices;
  size_t at = 0;
  for (size_t i = 0; at < wire.size(); ++i) {
    const size_t n = cuts.empty() ? wire.size() : std::min(cuts[i % cuts.size()], wire.size() - at);
    slices.emplace_back(wire.data() + at, n);
    at += n;
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

struct Applied {
  std::vector<std::pair<v1::Side, std::string>> parts;
  size_t pieces = 0;
};

std::optional<absl::Status> Apply(const std::string& wire, Applied* applied,
                                  const std::vector<size_t>& cuts = {}) {
  grpc::ByteBuffer message = Received(wire, cuts);
  return ApplyRawTraceParts(&message,
                            [&](v1::Side side, absl::Span<const absl::string_view> pieces) {
                              applied->parts.emplace_back(side, absl::StrJoin(pieces, ""));
                              applied->pieces += pieces.size();
                              return absl::OkStatus();
                            });
}

TEST(ApplyRawTracePartsTest, APartsBytesArriveAsTheSlicesHoldThem) {
  const std::string log(100000, 'x');
  v1::AnalyzeChunk chunk;
  *chunk.mutable_part() = RawPart(v1::HEAD, log);
  const std::string wire = DeterministicBytes(chunk);
  for (const std::vector<size_t>& cuts :
       std::vector<std::vector<size_t>>{{}, {1}, {7, 4096}, {16384}, {3, 1, 50000}}) {
    Applied applied;
    EXPECT_THAT(Apply(wire, &applied, cuts), Optional(absl::OkStatus()));
    ASSERT_EQ(applied.parts.size(), 1u);
    EXPECT_EQ(applied.parts[0].first, v1::HEAD);
    EXPECT_EQ(applied.parts[0].second, log) << "cut " << absl::StrJoin(cuts, ",");
    if (cuts.size() == 1 && cuts[0] == 16384) {
      EXPECT_GE(applied.pieces, 6u) << "the bytes are the slices', not copied whole";
    }
  }
}

TEST(ApplyRawTracePartsTest, ABatchIsAppliedPartByPartInOrder) {
  v1::AnalyzeChunk chunk;
  *chunk.mutable_parts()->add_parts() = RawPart(v1::HEAD, "first\n");
  *chunk.mutable_parts()->add_parts() = RawPart(v1::BASE, "");
  *chunk.mutable_parts()->add_parts() = RawPart(v1::SIDE_UNSPECIFIED, "third");
  Applied applied;
  EXPECT_THAT(Apply(DeterministicBytes(chunk), &applied, {5}), Optional(absl::OkStatus()));
  EXPECT_THAT(applied.parts,
              ElementsAre(std::make_pair(v1::HEAD, std::string("first\n")),
                          std::make_pair(v1::BASE, std::string()),
                          std::make_pair(v1::SIDE_UNSPECIFIED, std::string("third"))));
}

TEST(ApplyRawTracePartsTest, TheFirstErrorStopsTheParts) {
  v1::AnalyzeChunk chunk;
  for (int i = 0; i < 3; ++i) *chunk.mutable_parts()->add_parts() = RawPart(v1::HEAD, "x");
  grpc::ByteBuffer message = Received(DeterministicBytes(chunk));
  int calls = 0;
  EXPECT_THAT(ApplyRawTraceParts(&message,
                                 [&](v1::Side, absl::Span<const absl::string_view>) {
                                   return ++calls == 2 ? absl::InvalidArgumentError("no")
                                                       : absl::OkStatus();
                                 }),
              Optional(absl::InvalidArgumentError("no")));
  EXPECT_EQ(calls, 2);
}

// Whatever is not a raw part exactly as cl-client sends one is ParseChunk's: nothing applied.
TEST(ApplyRawTracePartsTest, AnythingElseIsLeftToTheParse) {
  std::vector<std::pair<std::string, std::string>> others;
  {
    v1::AnalyzeChunk c;
    c.mutable_part()->set_side(v1::HEAD);
    c.mutable_part()->mutable_header()->set_source_name("x.log");
    others.emplace_back("a header", DeterministicBytes(c));
  }
  {
    v1::AnalyzeChunk c;
    *c.mutable_parts()->add_parts() = RawPart(v1::HEAD, "log");
    c.mutable_parts()->add_parts()->mutable_source_chunk()->set_path("/a.py");
    others.emplace_back("a batch with a source chunk", DeterministicBytes(c));
  }
  {
    v1::AnalyzeChunk c;
    c.mutable_parts();
    others.emplace_back("an empty batch", DeterministicBytes(c));
  }
  {
    v1::AnalyzeChunk c;
    c.mutable_options()->set_render_site(true);
    others.emplace_back("options", DeterministicBytes(c));
  }
  {
    v1::AnalyzeChunk c;
    *c.mutable_part() = RawPart(v1::HEAD, "0123456789");
    const std::string wire = DeterministicBytes(c);
    others.emplace_back("cut short", wire.substr(0, wire.size() - 3));
    others.emplace_back("followed by another field", wire + DeterministicBytes(c));
    // The same part with its fields the other way round (valid, but not how cl-client writes it).
    const std::string part = DeterministicBytes(c.part());
    const std::string side = part.substr(0, 2), bytes = part.substr(2);
    others.emplace_back("bytes before the side",
                        std::string("\x12") + static_cast<char>(part.size()) + bytes + side);
    // side 7: no Side; an unknown field 99 after the bytes.
    others.emplace_back("a side that is none",
                        std::string("\x12") + static_cast<char>(part.size()) + "\x08\x07" + bytes);
    others.emplace_back(
        "an unknown field",
        std::string("\x12") + static_cast<char>(part.size() + 3) + part + "\x98\x06\x01");
  }
  for (const auto& [what, wire] : others) {
    Applied applied;
    EXPECT_EQ(Apply(wire, &applied, {4}), std::nullopt) << what;
    EXPECT_TRUE(applied.parts.empty()) << what;
  }
}

// Random bytes never make it apply something ParseChunk would not read as the same parts.
TEST(ApplyRawTracePartsTest, AppliesOnlyWhatTheParseReadsAlike) {
  std::mt19937 rng(5);
  v1::AnalyzeChunk chunk;
  *chunk.mutable_parts()->add_parts() = RawPart(v1::HEAD, "abc\ndef");
  *chunk.mutable_parts()->add_parts() = RawPart(v1::BASE, "g");
  const std::string valid = DeterministicBytes(chunk);
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string wire = valid;
    for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips)
      wire[rng() % wire.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) wire.resize(rng() % wire.size());
    Applied applied;
    if (Apply(wire, &applied, {1 + rng() % 9}) == std::nullopt) continue;
    ++accepted;
    grpc::ByteBuffer message = Received(wire);
    v1::AnalyzeChunk parsed;
    ASSERT_TRUE(ParseChunk(&message, &parsed))
        << "round " << round << ": " << absl::CHexEscape(wire);
    std::vector<std::pair<v1::Side, std::string>> expected;
    if (parsed.has_part()) expected.emplace_back(parsed.part().side(), parsed.part().torch_trace());
    for (const v1::CapturePart& p : parsed.parts().parts())
      expected.emplace_back(p.side(), p.torch_trace());
    EXPECT_EQ(applied.parts, expected) << "round " << round;
    if (HasFailure()) return;
  }
  EXPECT_GT(accepted, 1000) << "flipped bytes that still make raw parts (in the data, say)";
}

}  // namespace
}  // namespace cl

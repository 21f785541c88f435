#include "service/server/chunk_parse.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "capture/capture_io.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace cl {

bool ParseChunk(grpc::ByteBuffer* message, v1::AnalyzeChunk* chunk) {
  grpc::ProtoBufferReader reader(message);
  return chunk->ParseFromZeroCopyStream(&reader);
}

namespace {

using google::protobuf::internal::WireFormatLite;

constexpr WireFormatLite::WireType kLengthDelimited = WireFormatLite::WIRETYPE_LENGTH_DELIMITED;

struct RawPart {
  v1::Side side = v1::SIDE_UNSPECIFIED;
  std::vector<absl::string_view> pieces;
};

// One CapturePart of `length` bytes that is a side (optional) then torch_trace, and nothing else.
bool ReadRawPart(google::protobuf::io::CodedInputStream& in, uint32_t length, RawPart* part) {
  // Not past the batch it is in (PushLimit would clip it to the batch's end, silently).
  const int room = in.BytesUntilLimit();
  if (length > static_cast<uint32_t>(std::numeric_limits<int>::max()) ||
      (room >= 0 && static_cast<int>(length) > room))
    return false;
  const auto limit = in.PushLimit(static_cast<int>(length));
  uint32_t tag = in.ReadTag();
  if (tag ==
      WireFormatLite::MakeTag(v1::CapturePart::kSideFieldNumber, WireFormatLite::WIRETYPE_VARINT)) {
    uint32_t side = 0;
    if (!in.ReadVarint32(&side) || !v1::Side_IsValid(static_cast<int>(side))) return false;
    part->side = static_cast<v1::Side>(side);
    tag = in.ReadTag();
  }
  if (tag != WireFormatLite::MakeTag(v1::CapturePart::kTorchTraceFieldNumber, kLengthDelimited))
    return false;
  uint32_t left = 0;
  if (!in.ReadVarint32(&left)) return false;
  while (left > 0) {
    const void* data = nullptr;
    int size = 0;
    if (!in.GetDirectBufferPointer(&data, &size) || size <= 0) return false;
    const uint32_t take = std::min(left, static_cast<uint32_t>(size));
    part->pieces.emplace_back(static_cast<const char*>(data), take);
    if (!in.Skip(static_cast<int>(take))) return false;
    left -= take;
  }
  // Nothing after the bytes (a second field would make it another part than this one reads), and
  // the part as long as it says: the end of the stream is no end of a part.
  if (in.BytesUntilLimit() != 0) return false;
  in.PopLimit(limit);
  return true;
}

}  // namespace

std::optional<absl::Status> ApplyRawTraceParts(
    grpc::ByteBuffer* message,
    absl::FunctionRef<absl::Status(v1::Side side, absl::Span<const absl::string_view> pieces)>
        apply) {
  // The pieces point into the reader's slices (decompressed ones are the reader's own): it lives
  // until they are applied.
  grpc::ProtoBufferReader reader(message);
  std::vector<RawPart> parts;
  {
    google::protobuf::io::CodedInputStream in(&reader);
    const uint32_t tag = in.ReadTag();
    uint32_t length = 0;
    if (WireFormatLite::GetTagWireType(tag) != kLengthDelimited || !in.ReadVarint32(&length))
      return std::nullopt;
    if (WireFormatLite::GetTagFieldNumber(tag) == v1::AnalyzeChunk::kPartFieldNumber) {
      if (!ReadRawPart(in, length, &parts.emplace_back())) return std::nullopt;
    } else if (WireFormatLite::GetTagFieldNumber(tag) == v1::AnalyzeChunk::kPartsFieldNumber) {
      if (length > static_cast<uint32_t>(std::numeric_limits<int>::max())) return std::nullopt;
      const auto limit = in.PushLimit(static_cast<int>(length));
      for (uint32_t item = in.ReadTag(); item != 0; item = in.ReadTag()) {
        uint32_t part_length = 0;
        if (item != WireFormatLite::MakeTag(v1::PartBatch::kPartsFieldNumber, kLengthDelimited) ||
            !in.ReadVarint32(&part_length) || !ReadRawPart(in, part_length, &parts.emplace_back()))
          return std::nullopt;
      }
      if (in.BytesUntilLimit() != 0 || parts.empty()) return std::nullopt;
      in.PopLimit(limit);
    } else {
      return std::nullopt;
    }
    if (in.ReadTag() != 0 || !in.ConsumedEntireMessage()) return std::nullopt;
  }
  for (const RawPart& part : parts) {
    if (absl::Status status = apply(part.side, part.pieces); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status NotAChunk(uint64_t number, const grpc::ByteBuffer& message) {
  grpc::Slice whole;
  const std::string where =
      message.DumpToSingleSlice(&whole).ok()
          ? LocateWireProblem(
                absl::string_view(reinterpret_cast<const char*>(whole.begin()), whole.size()),
                v1::AnalyzeChunk::descriptor())
          : "";
  return absl::InvalidArgumentError(absl::StrCat(
      "message ", number, " is not an AnalyzeChunk",
      where.empty()
          ? " (cut short, or a string field that is not UTF-8, or nested past the parse depth)"
          : absl::StrCat(": ", where),
      "; the capture was not analyzed"));
}

}  // namespace cl

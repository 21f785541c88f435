#include "capture/stream/chunk_kind.h"

#include <cstdint>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace cl {
namespace {

using google::protobuf::internal::WireFormatLite;

bool LengthDelimited(uint32_t tag) {
  return WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

// Whether the CapturePart `input` is limited to has a torch_trace field. Reads to the limit;
// false where framing breaks.
bool PartHasTorchTrace(google::protobuf::io::CodedInputStream& input) {
  bool raw = false;
  while (true) {
    const uint32_t tag = input.ReadTag();
    if (tag == 0) return raw && input.ConsumedEntireMessage();
    raw |= WireFormatLite::GetTagFieldNumber(tag) == v1::CapturePart::kTorchTraceFieldNumber &&
           LengthDelimited(tag);
    if (!WireFormatLite::SkipField(&input, tag)) return false;
  }
}

// Reads one length-delimited field's length and calls `inside` with the input limited to it.
template <typename Inside>
bool Within(google::protobuf::io::CodedInputStream& input, Inside inside) {
  uint32_t length = 0;
  if (!input.ReadVarint32(&length)) return false;
  const auto limit = input.PushLimit(static_cast<int>(length));
  const bool found = inside();
  // What `inside` left unread (it stops early only on broken framing).
  const bool whole = input.BytesUntilLimit() == 0 || input.Skip(input.BytesUntilLimit());
  input.PopLimit(limit);
  return found && whole;
}

}  // namespace

std::optional<v1::AnalyzeChunk::KindCase> ChunkKindOnWire(
    google::protobuf::io::ZeroCopyInputStream* in) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream input(in);
  auto kind = v1::AnalyzeChunk::KIND_NOT_SET;
  while (true) {
    const uint32_t tag = input.ReadTag();
    // 0: the end of the bytes (a whole message), or a tag that is cut short or is zero (not one).
    if (tag == 0) return input.ConsumedEntireMessage() ? std::optional(kind) : std::nullopt;
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (field >= v1::AnalyzeChunk::kOptions && field <= v1::AnalyzeChunk::kParts &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      kind = static_cast<v1::AnalyzeChunk::KindCase>(field);
    }
    // False for a length past the end, an end-group tag with no group, wire types 6 and 7.
    if (!WireFormatLite::SkipField(&input, tag)) return std::nullopt;
  }
}

bool CarriesTorchTrace(google::protobuf::io::ZeroCopyInputStream* in) {
  google::protobuf::io::CodedInputStream input(in);
  const auto part = [&input] { return PartHasTorchTrace(input); };
  // A batch: any of its parts.
  const auto batch = [&input, &part] {
    bool any = false;
    while (true) {
      const uint32_t tag = input.ReadTag();
      if (tag == 0) return any;
      if (WireFormatLite::GetTagFieldNumber(tag) == v1::PartBatch::kPartsFieldNumber &&
          LengthDelimited(tag)) {
        any |= Within(input, part);
      } else if (!WireFormatLite::SkipField(&input, tag)) {
        return false;
      }
    }
  };
  bool raw = false;
  while (true) {
    const uint32_t tag = input.ReadTag();
    if (tag == 0) return raw && input.ConsumedEntireMessage();
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (field == v1::AnalyzeChunk::kPart && LengthDelimited(tag)) {
      raw |= Within(input, part);
    } else if (field == v1::AnalyzeChunk::kParts && LengthDelimited(tag)) {
      raw |= Within(input, batch);
    } else if (!WireFormatLite::SkipField(&input, tag)) {
      return false;
    }
  }
}

}  // namespace cl

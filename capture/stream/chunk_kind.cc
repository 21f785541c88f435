#include "capture/stream/chunk_kind.h"

#include <cstdint>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace cl {
namespace {

using google::protobuf::internal::WireFormatLite;

bool LengthDelimited(uint32_t tag) {
  return WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

bool InPartOneof(int number) {
  const google::protobuf::FieldDescriptor* field =
      v1::CapturePart::descriptor()->FindFieldByNumber(number);
  return field != nullptr && field->real_containing_oneof() != nullptr;
}

// Whether the CapturePart `input` is limited to ends with its oneof set to torch_trace (the last
// member on the wire wins, as in the parse). Reads to the limit; false where framing breaks.
bool PartIsTorchTrace(google::protobuf::io::CodedInputStream& input) {
  bool raw = false;
  while (true) {
    const uint32_t tag = input.ReadTag();
    if (tag == 0) return raw && input.ConsumedEntireMessage();
    // Every member of the oneof is length-delimited; with another wire type, or a field the
    // oneof does not have, the parse keeps it as an unknown field.
    if (LengthDelimited(tag) && InPartOneof(WireFormatLite::GetTagFieldNumber(tag)))
      raw = WireFormatLite::GetTagFieldNumber(tag) == v1::CapturePart::kTorchTrace;
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
  bool raw = false;
  while (true) {
    const uint32_t tag = input.ReadTag();
    if (tag == 0) return raw && input.ConsumedEntireMessage();
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (field == v1::AnalyzeChunk::kPart && LengthDelimited(tag)) {
      raw = Within(input, [&] { return PartIsTorchTrace(input); }) || raw;
    } else if (field == v1::AnalyzeChunk::kParts && LengthDelimited(tag)) {
      raw = Within(input,
                   [&] {
                     bool any = false;
                     while (true) {
                       const uint32_t part_tag = input.ReadTag();
                       if (part_tag == 0) return any;
                       if (WireFormatLite::GetTagFieldNumber(part_tag) == 1 &&
                           LengthDelimited(part_tag)) {
                         any = Within(input, [&] { return PartIsTorchTrace(input); }) || any;
                       } else if (!WireFormatLite::SkipField(&input, part_tag)) {
                         return false;
                       }
                     }
                   }) ||
            raw;
    } else if (!WireFormatLite::SkipField(&input, tag)) {
      return false;
    }
  }
}

}  // namespace cl

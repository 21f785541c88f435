#include "capture/stream/chunk_kind.h"

#include <cstdint>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace cl {

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

}  // namespace cl

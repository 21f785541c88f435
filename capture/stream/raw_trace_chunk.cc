#include "capture/stream/raw_trace_chunk.h"

#include <cstdint>
#include <cstring>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace cl {
namespace {

using google::protobuf::internal::WireFormatLite;
using CodedOutput = google::protobuf::io::CodedOutputStream;

constexpr uint32_t LengthTag(int field) {
  return static_cast<uint32_t>(field) << 3 | WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}
constexpr uint32_t kPartTag = LengthTag(v1::AnalyzeChunk::kPartFieldNumber);
constexpr uint32_t kTraceTag = LengthTag(v1::CapturePart::kTorchTraceFieldNumber);
constexpr uint32_t kSideTag =
    static_cast<uint32_t>(v1::CapturePart::kSideFieldNumber) << 3 | WireFormatLite::WIRETYPE_VARINT;

// The CapturePart's own bytes: its side (absent when unspecified, as proto3 leaves a zero enum
// out), then the piece.
size_t PartSize(v1::Side side, size_t piece_size) {
  size_t size =
      CodedOutput::VarintSize32(kTraceTag) + CodedOutput::VarintSize64(piece_size) + piece_size;
  if (side != v1::SIDE_UNSPECIFIED) {
    size += CodedOutput::VarintSize32(kSideTag) +
            CodedOutput::VarintSize64(static_cast<uint64_t>(static_cast<int64_t>(side)));
  }
  return size;
}

uint8_t* Varint(uint64_t value, uint8_t* out) {
  return CodedOutput::WriteVarint64ToArray(value, out);
}

}  // namespace

size_t RawTraceChunkSize(v1::Side side, size_t piece_size) {
  const size_t part = PartSize(side, piece_size);
  return CodedOutput::VarintSize32(kPartTag) + CodedOutput::VarintSize64(part) + part;
}

size_t WriteRawTraceChunkHeader(v1::Side side, size_t piece_size, char* out) {
  auto* p = reinterpret_cast<uint8_t*>(out);
  p = Varint(kPartTag, p);
  p = Varint(PartSize(side, piece_size), p);
  if (side != v1::SIDE_UNSPECIFIED) {
    p = Varint(kSideTag, p);
    p = Varint(static_cast<uint64_t>(static_cast<int64_t>(side)), p);
  }
  p = Varint(kTraceTag, p);
  p = Varint(piece_size, p);
  return static_cast<size_t>(reinterpret_cast<char*>(p) - out);
}

size_t WriteRawTraceChunk(v1::Side side, absl::string_view piece, char* out) {
  const size_t header = WriteRawTraceChunkHeader(side, piece.size(), out);
  if (!piece.empty()) std::memcpy(out + header, piece.data(), piece.size());
  return header + piece.size();
}

}  // namespace cl

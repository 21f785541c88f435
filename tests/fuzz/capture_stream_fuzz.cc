// Any sequence of stream parts through the assembler: errors, never a crash, and a bounded memory
// use. The input is a run of parts, each a 2-byte little-endian length and a CapturePart's bytes
// (make_corpora.sh cuts the fixtures' captures this way); a piece that does not parse is skipped.
// What the assembler accepts stays under its byte limit; what it finishes with validates, and
// split again (capture_splitter.h, small parts so fragments happen) reassembles to the same
// capture. Each piece is also read as a whole Analyze message by cl-server's first look at one
// (chunk_kind.h): where protobuf parses it, that look names the same member; where the look finds
// the framing broken, protobuf refuses it too.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "capture/stream/capture_assembler.h"
#include "capture/stream/capture_splitter.h"
#include "capture/stream/chunk_kind.h"
#include "capture/validate.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace v1 = ::compile_lens::v1;
constexpr uint64_t kMaxBytes = 1 << 20;

// Splits what came out into parts again and assembles them anew: the same captures come back.
void CheckResplit(const cl::AssembledCaptures& in) {
  cl::CaptureAssembler again(64 << 20);
  auto add = [&](v1::CapturePart&& part) { return again.Add(std::move(part)); };
  CL_FUZZ_CHECK(cl::SplitCapture(in.head, v1::HEAD, 1024, add).ok());
  if (in.base) CL_FUZZ_CHECK(cl::SplitCapture(*in.base, v1::BASE, 1024, add).ok());
  v1::EndOfCapture end;
  end.set_parts(again.parts());
  auto out = again.Finish(end);
  CL_FUZZ_CHECK(out.ok());
  CL_FUZZ_CHECK(cl::fuzz::SameMessage(in.head, out->head));
  CL_FUZZ_CHECK(in.base.has_value() == out->base.has_value());
  if (in.base) CL_FUZZ_CHECK(cl::fuzz::SameMessage(*in.base, *out->base));
}

// The first look at a message agrees with protobuf's parse of it.
void CheckChunkKind(const char* data, size_t size) {
  google::protobuf::io::ArrayInputStream in(data, static_cast<int>(size), /*block_size=*/64);
  const std::optional<v1::AnalyzeChunk::KindCase> kind = cl::ChunkKindOnWire(&in);
  v1::AnalyzeChunk chunk;
  const bool parsed = chunk.ParseFromArray(data, static_cast<int>(size));
  if (parsed) CL_FUZZ_CHECK(kind.has_value() && *kind == chunk.kind_case());
  if (!kind) CL_FUZZ_CHECK(!parsed);
  // A message the parse reads as carrying raw log bytes is seen as such on the wire (the server
  // then applies it as it arrives; seeing raw bytes where the parse does not only does that early).
  google::protobuf::io::ArrayInputStream again(data, static_cast<int>(size), /*block_size=*/64);
  const bool raw = cl::CarriesTorchTrace(&again);
  bool parsed_raw = chunk.part().part_case() == v1::CapturePart::kTorchTrace;
  for (const v1::CapturePart& p : chunk.parts().parts())
    parsed_raw |= p.part_case() == v1::CapturePart::kTorchTrace;
  if (parsed && parsed_raw) CL_FUZZ_CHECK(raw);
}

}  // namespace

// protobuf logs every invalid-UTF-8 string it refuses; the refusal is the expected outcome.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  cl::CaptureAssembler assembler(kMaxBytes);
  while (in.size() >= 2) {
    const size_t len = std::min<size_t>(
        static_cast<uint8_t>(in[0]) | static_cast<uint8_t>(in[1]) << 8, in.size() - 2);
    CheckChunkKind(in.data() + 2, len);
    v1::CapturePart part;
    if (part.ParseFromArray(in.data() + 2, static_cast<int>(len))) {
      if (!assembler.Add(std::move(part)).ok()) return 0;
      CL_FUZZ_CHECK(assembler.bytes() <= kMaxBytes);
    }
    in.remove_prefix(2 + len);
  }
  v1::EndOfCapture end;
  end.set_parts(assembler.parts());
  auto out = assembler.Finish(end);
  if (!out.ok()) return 0;
  CL_FUZZ_CHECK_OK(cl::ValidateCapture(out->head));
  if (out->base) CL_FUZZ_CHECK_OK(cl::ValidateCapture(*out->base));
  CheckResplit(*out);
  return 0;
}

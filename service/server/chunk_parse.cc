#include "service/server/chunk_parse.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "capture/capture_io.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace cl {

bool ParseChunk(grpc::ByteBuffer* message, v1::AnalyzeChunk* chunk) {
  grpc::ProtoBufferReader reader(message);
  return chunk->ParseFromZeroCopyStream(&reader);
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

#include "capture/stream/part_packer.h"

#include <utility>

#include "common/status_macros.h"

namespace cl {

absl::Status PartPacker::Add(v1::CapturePart&& part, Emit emit) {
  // A repeated message field costs its tag and a length varint besides the part's own bytes.
  const size_t size = part.ByteSizeLong() + 6;
  if (pending_bytes_ > 0 && pending_bytes_ + size > budget_) CL_RETURN_IF_ERROR(Flush(emit));
  *pending_.mutable_parts()->add_parts() = std::move(part);
  pending_bytes_ += size;
  ++parts_;
  return absl::OkStatus();
}

absl::Status PartPacker::Flush(Emit emit) {
  if (pending_bytes_ == 0) return absl::OkStatus();
  v1::AnalyzeChunk chunk;
  if (pending_.parts().parts_size() == 1) {
    *chunk.mutable_part() = std::move(*pending_.mutable_parts()->mutable_parts(0));
  } else {
    chunk = std::move(pending_);
  }
  pending_ = v1::AnalyzeChunk();
  pending_bytes_ = 0;
  return emit(std::move(chunk));
}

}  // namespace cl

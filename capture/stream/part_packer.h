// Packs consecutive CaptureParts into the Analyze stream's messages.
//
// Most parts are small (one extra, one frame, one kernel): the hero's 784 parts average 1.3 KB.
// Sent one per message, every part cost both ends a gRPC read, a callback and a thread hop. The
// packer gathers consecutive parts into a PartBatch until the next would take the message past the
// byte budget; a part alone goes as a plain `part`. Order is kept, so the assembler sees the parts
// exactly as the splitter cut them.
#ifndef CAPTURE_STREAM_PART_PACKER_H_
#define CAPTURE_STREAM_PART_PACKER_H_

#include <cstddef>
#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "compile_lens/v1/service.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

class PartPacker {
 public:
  using Emit = absl::FunctionRef<absl::Status(v1::AnalyzeChunk&&)>;

  // `budget`: the most bytes of parts a message holds (a single part over it still goes, alone).
  explicit PartPacker(size_t budget) : budget_(budget) {}

  // Queues `part`, first emitting what is queued if `part` would not fit beside it.
  absl::Status Add(v1::CapturePart&& part, Emit emit);
  // Emits what is queued. Call it before the end marker.
  absl::Status Flush(Emit emit);

  uint64_t parts() const { return parts_; }  // parts added so far: EndOfCapture.parts

 private:
  const size_t budget_;
  v1::AnalyzeChunk pending_;
  size_t pending_bytes_ = 0;
  uint64_t parts_ = 0;
};

}  // namespace cl

#endif  // CAPTURE_STREAM_PART_PACKER_H_

// Rebuilds the head (and base) SessionCapture from the parts of an Analyze stream.
//
// Parts arrive as the transport delivers them; the assembler checks each one as it comes (so a bad
// stream is refused at the part that breaks it, naming that part) and counts bytes against the
// session limit. Finish() takes the end marker, then checks the schema and validates each capture.
// Not thread-safe: one stream, one assembler.
//
// Given an arena, the captures are built on it and FinishInPlace() hands out pointers to them:
// parts parsed on the same arena (the server reads each message onto its call's arena) are moved
// in without a copy, and the whole session is freed at once with the arena, whichever thread that
// is. (Without it the allocator took a large share of cl-server's CPU: bench/load/README.md.)
#ifndef CAPTURE_STREAM_CAPTURE_ASSEMBLER_H_
#define CAPTURE_STREAM_CAPTURE_ASSEMBLER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "capture/torch_trace/importer.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/service.pb.h"
#include "google/protobuf/arena.h"

namespace cl {

class LoweredFacts;  // analyzers/lowered_facts.h

namespace v1 = ::compile_lens::v1;

struct AssembledCaptures {
  v1::SessionCapture head;
  std::optional<v1::SessionCapture> base;
};

// A head and an optional base capture, wherever they are kept (an arena, AssembledCaptures).
struct CaptureRefs {
  const v1::SessionCapture* head = nullptr;
  const v1::SessionCapture* base = nullptr;  // null: no base
  // What the passes read of the head's lowered graphs, where its import kept that instead of their
  // nodes (analyzers/lowered_facts.h); null: the nodes are there.
  const LoweredFacts* head_lowered = nullptr;
};

inline CaptureRefs RefsOf(const AssembledCaptures& c) {
  return {&c.head, c.base ? &*c.base : nullptr};
}

class CaptureAssembler {
 public:
  // `max_bytes` caps the encoded size of all parts together (RESOURCE_EXHAUSTED past it). With an
  // `arena` (which must outlive the assembler), the captures are built on it. `max_memory` (0: no
  // limit) is each raw log's import budget (TraceParseOptions::memory_budget): past it the part
  // that crossed it is RESOURCE_EXHAUSTED, naming max_session_memory.
  explicit CaptureAssembler(uint64_t max_bytes, google::protobuf::Arena* arena = nullptr,
                            uint64_t max_memory = 0);

  // INVALID_ARGUMENT naming the part for a malformed or out-of-order part; RESOURCE_EXHAUSTED
  // over the byte limit. A side is typed parts (header first) or raw TORCH_TRACE bytes (after an
  // optional header whose session fields override the log's), imported as they arrive, then the
  // source files the client offers for it (source_chunk parts; those the session names are kept).
  // Its items are moved out of `part`.
  absl::Status Add(v1::CapturePart&& part);
  // For a caller that knows the encoded size of what it is about to add (the server reads each
  // message's size off the wire): counts `bytes` against the limit (`what` names them in the
  // error, and is called only then), and AddCounted then adds their parts without counting them
  // again. Add's own count is ByteSizeLong, a second walk over every field of the part.
  absl::Status CountBytes(uint64_t bytes, absl::FunctionRef<std::string()> what);
  absl::Status AddCounted(v1::CapturePart&& part) { return AddPart(std::move(part), {}); }
  // AddCounted for every part a part-carrying Analyze message carries (a `part` or a batch of
  // `parts`; moved out of it), `message` being its number in the stream: an empty batch, or a
  // message that carries neither, is INVALID_ARGUMENT naming it.
  absl::Status AddCountedMessage(v1::AnalyzeChunk& chunk, uint64_t message);
  // AddCounted for a part of raw TORCH_TRACE bytes given as `pieces`, in order, rather than copied
  // into a part first: what a server reads straight off the received message (RawTraceParts in
  // service/server/chunk_parse.h).
  absl::Status AddCountedTorchTrace(v1::Side side, absl::Span<const absl::string_view> pieces);
  // Ends the stream: the marker's part count must match, nothing may be left half-sent. The
  // captures stay in the assembler (or its arena); the pointers are valid while it lives.
  absl::StatusOr<CaptureRefs> FinishInPlace(const v1::EndOfCapture& end);
  // The same, with the captures moved (copied, from an arena) out.
  absl::StatusOr<AssembledCaptures> Finish(const v1::EndOfCapture& end);

  uint64_t bytes() const { return bytes_; }
  uint64_t parts() const { return parts_; }
  // A raw log arriving after this is imported keeping each record's text (for the site,
  // AnalyzeOptions.render_site), within the parser's own cap on those texts.
  void KeepRecordTexts() { keep_record_texts_ = true; }
  // A head's raw log imported with header.post_grad_nodes_only hands each post-grad graph the
  // passes read to `sink` as it is chosen (TraceParseOptions::lowered_sink), and keeps it without
  // its nodes. Set before the log's bytes arrive.
  void SetLoweredSink(LoweredSink sink) { lowered_sink_ = std::move(sink); }

 private:
  struct SideState {
    v1::SessionCapture* capture = nullptr;  // on the arena, or `owned`
    std::unique_ptr<v1::SessionCapture> owned;
    bool has_header = false;
    absl::flat_hash_map<std::string, int> graph_index;  // graph id -> index in capture.graphs
    std::string fragment_kind;  // non-empty while a fragmented item is arriving
    std::string fragment_bytes;
    std::string source_path;               // non-empty while a source file's pieces are arriving
    std::unique_ptr<TraceImporter> trace;  // set once raw TORCH_TRACE bytes arrive
    bool typed = false;                    // typed parts other than the header arrived
    std::string source_name;               // the header's name for the raw log
    bool post_grad_nodes_only = false;     // the header's: the raw log imported kLoweredOnly
    // A raw side's `capture` holds the header's session and the sources the client offered.
  };

  // AddCounted; `raw` is a torch_trace part's bytes, when they are not in `part`
  // (AddCountedTorchTrace).
  absl::Status AddPart(v1::CapturePart&& part, absl::Span<const absl::string_view> raw);
  absl::Status Apply(SideState& side, v1::CapturePart& part,
                     absl::Span<const absl::string_view> raw = {});
  absl::Status ApplyFragment(SideState& side, const v1::Fragment& fragment);
  absl::Status ApplySourceChunk(SideState& side, v1::SourceChunk& chunk);
  // The sources a raw side's client offered, those `imported` names (AttachSources) added to it.
  static void AttachOfferedSources(SideState& side, v1::SessionCapture* imported);

  SideState NewSide();

  const uint64_t max_bytes_;
  google::protobuf::Arena* const arena_;
  const uint64_t max_memory_;
  uint64_t bytes_ = 0;
  uint64_t parts_ = 0;
  bool keep_record_texts_ = false;
  LoweredSink lowered_sink_;
  SideState head_;
  SideState base_;
};

}  // namespace cl

#endif  // CAPTURE_STREAM_CAPTURE_ASSEMBLER_H_

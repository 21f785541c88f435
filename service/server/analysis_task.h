// The pool half of one Analyze call: what its reactor (analyze_reactor.h) hands to the engine's
// bounded pool once the upload has ended.
//
// The reactor reads the upload on gRPC's threads into a CallUpload: the options, the part-carrying
// messages kept as the bytes that arrived (counted, hashed, not parsed), and the end marker. (A raw
// TORCH_TRACE log is the exception: its messages are applied as they arrive, so that the server
// never holds the log, only the session its import builds; the import then runs while the client
// sends, on the server's import threads (read_ahead.h), as many at once as max_inflight admits
// rather than the pool's threads, and the task finishes it.) An
// AnalysisTask then runs on one pool thread, start to end: it parses the kept messages onto the
// call's arena, in order, and gives their parts to the CaptureAssembler that counted them (which
// checks them), claims the session in RecentSessions (a duplicate gets the first call's answer, not
// a second analysis), runs the analysis, records it in the ServiceMetrics, serializes the answer
// into the call's response and frees the arena, all on that thread. (Parsed on gRPC's threads and
// freed on another, the session's strings cost mimalloc a cross-thread free each; the figures are
// in bench/load/README.md.)
//
// The task never ends the call: Run returns the status the reactor ends it with, so that Finish
// stays the reactor's, and the last touch of it.
#ifndef SERVICE_SERVER_ANALYSIS_TASK_H_
#define SERVICE_SERVER_ANALYSIS_TASK_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "analyzers/lowered_facts.h"
#include "capture/stream/capture_assembler.h"
#include "common/stream_hash.h"
#include "compile_lens/v1/service.pb.h"
#include "google/protobuf/arena.h"
#include "grpcpp/support/byte_buffer.h"
#include "service/engine.h"
#include "service/metrics.h"
#include "service/server/recent_sessions.h"

namespace cl {

// One call's upload. Owned by the call's reactor: its reactions fill it, one at a time, until the
// end marker; then the reactor hands it to the analysis task, and nothing else touches it.
struct CallUpload {
  CallUpload(uint64_t max_session_bytes, uint64_t max_session_memory)
      : max_memory(max_session_memory), assembler(max_session_bytes, &arena, max_session_memory) {
    assembler.SetLoweredSink(lowered.Sink());
  }

  // The call's memory: the analysis task parses each kept message onto it, moves its parts into
  // the captures there, and frees all of it at once when the answer is serialized. Its blocks grow
  // from 16 KiB to 64 KiB: a session is megabytes, which the default blocks (256 B to 8 KiB) take
  // hundreds of allocations to hold (bench/README.md has BM_HeroIngest's share).
  // Not larger: past 128 KiB a block is one of mimalloc's "large" objects, each in pages of its
  // own.
  static google::protobuf::ArenaOptions ArenaOptions() {
    google::protobuf::ArenaOptions options;
    options.start_block_size = 16 << 10;
    options.max_block_size = 64 << 10;
    return options;
  }
  google::protobuf::Arena arena{ArenaOptions()};
  // What the session may take in memory once parsed (max_session_memory): the arena, or a raw
  // log's import (the assembler checks that one). Protobuf's wire format is compact (an empty
  // message is 2 bytes on the wire and a whole message object on the arena), so the wire limit
  // alone does not bound it.
  const uint64_t max_memory;

  // Parses a part-carrying message and gives its parts to the assembler now (a raw log's upload,
  // on the call's import thread: analyze_reactor.cc), within max_memory.
  absl::Status Apply(uint64_t number, grpc::ByteBuffer* message);
  // RESOURCE_EXHAUSTED naming message `number` once the arena holds more than max_memory.
  absl::Status CheckMemory(uint64_t number);

  v1::AnalyzeOptions options;
  // Set once a message carried raw TORCH_TRACE bytes: from then on each message is applied as it
  // arrives rather than kept.
  bool applying = false;
  // The part-carrying messages as they arrived (their slices, not copies), with their numbers in
  // the stream, until the analysis task parses them.
  std::vector<std::pair<uint64_t, grpc::ByteBuffer>> kept;
  // What the passes read of a raw log's lowered graphs, which its import keeps instead of their
  // nodes (header.post_grad_nodes_only). Before the assembler, which holds its sink.
  LoweredFacts lowered;
  // Counts the kept messages' bytes against max_session_bytes as they arrive; the analysis task
  // gives it their parts.
  CaptureAssembler assembler;
  // The kept messages' bytes, hashed as they arrive (still in cache from the socket's copy; by the
  // analysis task they are not), for the recent-sessions key.
  StreamHash hash;
  v1::EndOfCapture end;
};

// The analysis of one uploaded session, on the pool thread that runs it (see the file comment).
// It owns the assembled captures (on the upload's arena) while it runs; the upload is the
// reactor's, which outlives Run; the engine, metrics and recent sessions are the server's.
class AnalysisTask {
 public:
  AnalysisTask(const Engine& engine, ServiceMetrics* metrics, RecentSessions* recent,
               CallUpload* upload)
      : engine_(engine), metrics_(*metrics), recent_(*recent), upload_(*upload) {}

  struct Outcome {
    absl::Status status;   // what the call ends with; OK: the response holds the answer
    bool refused = false;  // the capture itself was refused (malformed, or over a limit)
  };
  // Runs once. `cancelled` flips when the client gives up (the passes poll it); `*response` gets
  // the serialized AnalyzeResponse, or a duplicate's earlier answer.
  Outcome Run(const std::atomic<bool>* cancelled, grpc::ByteBuffer* response);

 private:
  // The kept messages parsed and assembled into captures_.
  absl::Status Assemble();
  // The captures analyzed and the answer serialized into *response; `key` (empty: not deduplicated)
  // is released in recent_ either way.
  absl::Status Analyze(const std::string& key, const std::atomic<bool>* cancelled,
                       grpc::ByteBuffer* response);

  const Engine& engine_;
  ServiceMetrics& metrics_;
  RecentSessions& recent_;
  CallUpload& upload_;
  std::optional<CaptureRefs> captures_;  // on upload_.arena, from Assemble until it is freed
};

}  // namespace cl

#endif  // SERVICE_SERVER_ANALYSIS_TASK_H_

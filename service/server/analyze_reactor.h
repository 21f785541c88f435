// The reactor for one CompileLens.Analyze call.
//
// It only moves bytes: each message is read raw, parsed here onto the call's arena (so its size
// off the wire is what counts against max_session_bytes, at no cost, and a message that does not
// parse is named as such), its parts go to a CaptureAssembler (which checks them), and at the end
// marker the analysis is handed to the engine's bounded pool, whose task calls Finish() as its
// last touch of the reactor. Reactions never block. A full pool or too many sessions in flight is
// RESOURCE_EXHAUSTED straight away; a stream that ends without the marker is INVALID_ARGUMENT and
// is never analyzed. What the call came to (refusal, upload size, the analysis's outcome and
// findings) goes to the ServiceMetrics; the RPC metrics come from the server's interceptor.
#ifndef SERVICE_SERVER_ANALYZE_REACTOR_H_
#define SERVICE_SERVER_ANALYZE_REACTOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "capture/stream/capture_assembler.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "service/engine.h"
#include "service/metrics.h"
#include "service/server/recent_sessions.h"
#include "service/server/security.h"
#include "service/thread_pool.h"

namespace cl {

// What every call shares; owned by the server, outlives every reactor.
struct AnalyzeServiceState {
  const Engine* engine = nullptr;
  ThreadPool* pool = nullptr;
  ServiceMetrics* metrics = nullptr;  // fed after each call; never null
  TokenAuth auth;                     // the bearer token every call must carry, when configured
  RecentSessions* recent = nullptr;   // sessions analyzed lately: a duplicate is not analyzed twice
  uint64_t max_session_bytes = 0;
  int max_inflight = 0;
  std::atomic<int> inflight{0};
};

// Reads AnalyzeChunk messages and answers an AnalyzeResponse, both as bytes (the server registers
// Analyze as a raw callback method).
class AnalyzeReactor : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  AnalyzeReactor(AnalyzeServiceState* state, grpc::CallbackServerContext* context, grpc::ByteBuffer* response);

  void OnReadDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  absl::Status Accept(v1::AnalyzeChunk& chunk, size_t bytes);  // an error ends the call with it
  void StartAnalysis();
  void Refuse(const absl::Status& status);  // ends a call whose session will not be analyzed
  void FinishWith(const absl::Status& status);

  AnalyzeServiceState* const state_;
  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer* const response_;  // the serialized AnalyzeResponse, once there is one
  grpc::ByteBuffer message_;  // the message being read
  bool admitted_ = false;
  bool has_options_ = false;
  bool ended_ = false;
  uint64_t messages_ = 0;  // read and parsed so far, the options included
  // The call's memory: each message is read onto it, its parts moved into the captures there, and
  // all of it freed at once when the call is done. Its blocks grow from 16 KiB to 64 KiB: a
  // session is megabytes, which the default blocks (256 B to 8 KiB) take hundreds of allocations to
  // hold (bench/capture_stream_bench BM_HeroIngest: 3 % of the ingest). Not larger: past 128 KiB a
  // block is one of mimalloc's "large" objects, each in pages of its own.
  static google::protobuf::ArenaOptions CallArenaOptions() {
    google::protobuf::ArenaOptions options;
    options.start_block_size = 16 << 10;
    options.max_block_size = 64 << 10;
    return options;
  }
  google::protobuf::Arena arena_{CallArenaOptions()};
  v1::AnalyzeChunk* const chunk_ = google::protobuf::Arena::CreateMessage<v1::AnalyzeChunk>(&arena_);
  v1::AnalyzeOptions options_;
  CaptureAssembler assembler_;
  std::optional<CaptureRefs> captures_;  // on arena_, once the stream ended
  // Shared with the analysis task, which polls it through the engine's passes.
  std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace cl

#endif  // SERVICE_SERVER_ANALYZE_REACTOR_H_

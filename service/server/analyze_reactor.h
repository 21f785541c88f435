// The reactor for one CompileLens.Analyze call: admission, reading, and the end of the call.
//
// Reactions only move bytes. The options (the first message) are parsed at once; every later
// message is told apart by its top-level tags alone (capture/stream/chunk_kind.h): the parts it
// carries are kept in the call's CallUpload as the bytes that arrived, counted against
// max_session_bytes, and the end marker hands the upload to an AnalysisTask on the engine's
// bounded pool (analysis_task.h: the parts parsed and assembled, the recent-sessions claim, the
// analysis, its metrics, the serialized answer). The reactor ends the call with what the task
// returns: Finish() is the last touch of the reactor, by whichever thread gets to end the call.
//
// A raw TORCH_TRACE log is imported as it arrives instead of kept: from its first bytes on, the
// reactions queue each read for the call's import thread (read_ahead.h), which handles the reads
// in order exactly as a reaction would (the end marker and the end of the stream included), while
// the reactions read on, at most kReadAheadBytes ahead of it. OnDone waits for that thread to
// leave the call.
//
// Refused at once: a call over max_inflight or a full pool (RESOURCE_EXHAUSTED; but a full server
// first takes the slot of a call that has sent nothing for a second, upload_watch.h), a session
// over max_session_bytes (RESOURCE_EXHAUSTED; each kept message also counts kKeptMessageCost, for
// its buffer), a message whose framing is broken, that carries nothing or a second set of options,
// or that comes after the end marker (INVALID_ARGUMENT), a stream that ends without the marker
// (INVALID_ARGUMENT, never analyzed). The UploadWatch ends an upload that reads nothing for
// idle_timeout, or that has not ended within upload_timeout of its admission (DEADLINE_EXCEEDED:
// a stalled, silent or trickling client gives its max_inflight slot back). The analysis starts
// when the client closes its side after the end marker. What is wrong inside a message that
// frames well (a string that is not UTF-8, a part out of order, a dangling reference) is refused by
// the task, naming the message or the part as before, once the end marker has come. What the call
// came to (refusal, upload size, the analysis's outcome and findings) goes to the ServiceMetrics;
// the RPC metrics come from the server's interceptor.
#ifndef SERVICE_SERVER_ANALYZE_REACTOR_H_
#define SERVICE_SERVER_ANALYZE_REACTOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "service/engine.h"
#include "service/metrics.h"
#include "service/server/analysis_task.h"
#include "service/server/read_ahead.h"
#include "service/server/recent_sessions.h"
#include "service/server/security.h"
#include "service/server/upload_watch.h"
#include "service/thread_pool.h"

namespace cl {

// What every call shares; owned by the server, outlives every reactor.
struct AnalyzeServiceState {
  const Engine* engine = nullptr;
  ThreadPool* pool = nullptr;
  ImportThreads* import_threads = nullptr;  // where raw logs' reads are imported (read_ahead.h)
  ServiceMetrics* metrics = nullptr;        // fed after each call; never null
  TokenAuth auth;                    // the bearer token every call must carry, when configured
  RecentSessions* recent = nullptr;  // sessions analyzed lately: a duplicate is not analyzed twice
  uint64_t max_session_bytes = 0;
  uint64_t max_session_memory = 0;
  int max_inflight = 0;
  int max_message_bytes = 0;     // said to each admitted client (`cl-max-message-bytes`)
  UploadWatch* watch = nullptr;  // ends stalled uploads (idle_timeout, upload_timeout); never null
  std::atomic<int> inflight{0};
};

// Reads AnalyzeChunk messages and answers an AnalyzeResponse, both as bytes (the server registers
// Analyze as a raw callback method).
class AnalyzeReactor : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  // What a kept message costs beyond its own bytes, counted against max_session_bytes with them:
  // its ByteBuffer (a grpc_byte_buffer with inline room for 8 slices, about 350 bytes) and its
  // entry in CallUpload::kept. Without it a stream of tiny messages held far more than it was
  // counted for (bench/load/README.md).
  static constexpr uint64_t kKeptMessageCost = 512;
  // A kept message smaller than this is copied out of the slices it arrived in, which share (and
  // keep whole) gRPC's read buffers of kilobytes.
  static constexpr size_t kCopyMessagesUnder = 16 << 10;
  // How far the reactions read ahead of a raw log's import (read_ahead.h): two of cl-client's
  // 1 MiB pieces. 4 MiB took no measurable time off an upload of a 73 MB log (182-184 against
  // 186 ms, 10 rounds, in a first version with one import thread for every call) and held more;
  // 1 MiB held 1-2 MiB less, inside the runs' spread.
  static constexpr size_t kReadAheadBytes = 2 << 20;

  AnalyzeReactor(AnalyzeServiceState* state, grpc::CallbackServerContext* context,
                 grpc::ByteBuffer* response);

  void OnReadDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // What read `number` brought (ok false: the client closed its side), in order: by the reaction
  // itself, or by its import thread once a raw log streams (read_ahead_). False: the call has ended
  // (or waits for the client to close its side); this touched nothing after ending it.
  bool Take(bool ok, uint64_t number, grpc::ByteBuffer* message);
  // Message `number` of the stream (from 1): the first, the options; any later one. An error ends
  // the call with it.
  absl::Status AcceptOptions(uint64_t number, grpc::ByteBuffer* message);
  absl::Status AcceptMessage(uint64_t number, grpc::ByteBuffer* message);
  // Hands the upload to an AnalysisTask on the pool, which ends the call when it is done.
  void StartAnalysis();
  void Refuse(const absl::Status& status);  // ends a call whose session will not be analyzed
  // Ends the call, once: the reactions, the analysis task and the upload watch may each try.
  void FinishWith(const absl::Status& status, std::optional<Rejection> rejection = std::nullopt);
  void Finished(const absl::Status& status,
                std::optional<Rejection> rejection);  // FinishWith, claimed
  // What the watch ends a stalled upload with.
  absl::Status Stalled(UploadEnd why, absl::Duration idle) const;

  // Who ends the call: whoever moves phase_ to kFinished first. The analysis task is started only
  // from kUploading (to kAnalyzing), so the watch never ends a call the task is working on.
  enum class Phase { kUploading, kAnalyzing, kFinished };
  std::atomic<Phase> phase_{Phase::kUploading};
  // The upload as the UploadWatch sees it. The watch may hold it after the reactor is gone; OnDone
  // clears `reactor` first, and End claims the call (phase_) before it touches anything else.
  class Watched final : public WatchedUpload {
   public:
    explicit Watched(AnalyzeReactor* reactor) : WatchedUpload(absl::Now()), reactor_(reactor) {}
    bool End(UploadEnd why, absl::Duration idle) override;
    void Detach() {
      absl::MutexLock lock(&mu_);
      reactor_ = nullptr;
    }

   private:
    absl::Mutex mu_;
    AnalyzeReactor* reactor_ ABSL_GUARDED_BY(mu_);
  };
  std::shared_ptr<Watched> watched_;

  AnalyzeServiceState* const state_;
  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer* const response_;  // the serialized AnalyzeResponse, once there is one
  grpc::ByteBuffer message_;          // the message being read
  // Set once a raw log streams: its reads are imported on its import thread from then on.
  std::unique_ptr<ReadAhead> read_ahead_;
  // Holds a max_inflight slot, given back when the call is done (or passed on, UploadWatch::Evict).
  std::atomic<bool> holds_slot_{false};
  bool has_options_ = false;
  // The end marker came (the client must close its side next). Atomic: the watch reads it.
  std::atomic<bool> ended_{false};
  // Read so far, the options included (atomic: the upload watch reads it on another thread).
  std::atomic<uint64_t> messages_{0};
  // What the reactions read, for the analysis task (which frees the session's memory on its
  // thread).
  CallUpload upload_;
  // Shared with the analysis task, which polls it through the engine's passes.
  std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace cl

#endif  // SERVICE_SERVER_ANALYZE_REACTOR_H_

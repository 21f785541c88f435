// What an Analyze call has read of a raw log and not imported yet, imported in order by one task
// at a time on the call's import thread (a pool of one) while the call's reactions read on.
//
// A raw log is imported as it arrives (analysis_task.h, CallUpload::Apply). Importing in the
// reaction that read each message left the import thread waiting on gRPC's hand-off of the next
// one: 23-51 ms of a 73 MB log's 190 ms upload, in stalls of 2-5 ms (bench/README.md). Here the
// reactions only queue what they read and read on, up to `limit` bytes ahead of the import; past
// it they stop, and the import resumes reading once it has room again. With a fixed HTTP/2
// receive window that bounds what a call holds of its upload to about the window plus `limit`,
// where gRPC's own window sizing let it hold about 17 MiB (an upload over loopback).
#ifndef SERVICE_SERVER_READ_AHEAD_H_
#define SERVICE_SERVER_READ_AHEAD_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/byte_buffer.h"
#include "service/thread_pool.h"

namespace cl {

class ReadAhead {
 public:
  // One read: message `number` of the stream, or (ok false) the end of the client's side.
  struct Read {
    uint64_t number = 0;
    bool ok = true;
    grpc::ByteBuffer message;
  };
  // Handles one read, in order, on the pool's thread; false: the call has ended, handle and read
  // no more.
  using Handle = std::function<bool(Read&)>;

  // `read_on` starts the call's next read (a reaction's StartRead), from the pool's thread.
  ReadAhead(ThreadPool* pool, size_t limit, Handle handle, std::function<void()> read_on);
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;
  ~ReadAhead() { Close(); }

  // Queues what a reaction read. True: read on now. False: wait (the queue is at its limit: the
  // import calls read_on once it is under it; or the call has ended). Nothing is read after the
  // end of the stream, so its read returns false. A pool that takes no task (shutting down) ends
  // the handling, and Push says so with `*refused`.
  bool Push(Read read, bool* refused);
  // No more handling: waits for a running task to end (unless called from it), drops the rest.
  void Close();

  size_t queued_bytes() const;

 private:
  // Shared with the task that drains it, which may still be returning when Close() has let the
  // owner go.
  struct State {
    State(ThreadPool* pool, size_t limit, Handle handle, std::function<void()> read_on)
        : pool(pool), limit(limit), handle(std::move(handle)), read_on(std::move(read_on)) {}
    bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return !draining; }

    ThreadPool* const pool;
    const size_t limit;
    const Handle handle;
    const std::function<void()> read_on;
    mutable absl::Mutex mu;
    std::deque<Read> queue ABSL_GUARDED_BY(mu);
    size_t bytes ABSL_GUARDED_BY(mu) = 0;
    bool draining ABSL_GUARDED_BY(mu) = false;  // a task is scheduled or running
    bool paused ABSL_GUARDED_BY(mu) = false;    // reading waits for room
    bool stopped ABSL_GUARDED_BY(mu) = false;   // the call ended, or Close()
    std::thread::id drainer ABSL_GUARDED_BY(mu);
  };
  // Handles what is queued, kReadsPerTurn reads at a time: then, with more queued, the task goes
  // to the back of the pool's queue, so that the calls sharing an import thread take turns (a call
  // that streams without pause would otherwise keep the thread, and the others' uploads would
  // stall until the upload watch ended them).
  static void Drain(const std::shared_ptr<State>& s);
  static constexpr int kReadsPerTurn = 4;

  const std::shared_ptr<State> s_;
};

// The threads raw logs are imported on: one per hardware thread, each a pool of one, handed to the
// calls in turn. A call keeps the thread it is given: spread over two, one upload of a 73 MB log
// peaked 13 MiB higher (82.5 against 69.5 MiB), as what one thread's heap frees mimalloc does not
// give the other.
class ImportThreads {
 public:
  // `max_queue`: the tasks each thread may have waiting (ReadAhead queues at most one per call).
  explicit ImportThreads(size_t max_queue);
  ThreadPool* Next();
  void Shutdown();  // runs what is queued, then joins

 private:
  std::vector<std::unique_ptr<ThreadPool>> threads_;
  std::atomic<size_t> next_{0};
};

}  // namespace cl

#endif  // SERVICE_SERVER_READ_AHEAD_H_

// A fixed-size thread pool with a bounded queue.
//
// TrySchedule never blocks and never grows the queue past its bound: when the queue is full it
// returns false, and the caller sheds the load (the server answers RESOURCE_EXHAUSTED). The pool is
// owned by whoever runs analyses (cl-server's main, or cl-client in-process) and outlives them.
#ifndef SERVICE_THREAD_POOL_H_
#define SERVICE_THREAD_POOL_H_

#include <algorithm>
#include <cstddef>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace cl {

class ThreadPool {
 public:
  using Task = absl::AnyInvocable<void() &&>;

  // `threads` <= 0 means one per hardware thread. With `nice` > 0 the workers run that much nicer
  // (lower priority; Linux niceness is per thread): a server's transport threads, which take
  // uploads, refuse calls past the limits and answer health checks, then preempt the analyses, so
  // overload is shed at once instead of waiting for a core.
  ThreadPool(int threads, size_t max_queue, int nice = 0);
  // What `threads` <= 0 means: one per hardware thread (at least one).
  static int HardwareThreads() {
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  // Runs what is queued, then joins.
  ~ThreadPool();

  // Queues `task`; false when the queue is full or the pool is shutting down.
  bool TrySchedule(Task task) ABSL_LOCKS_EXCLUDED(mu_);
  // Queues `task` only if a thread is idle to take it at once (optional help, such as the passes
  // of one analysis fanned out): such tasks never take a queue slot that a new call could need.
  bool TryScheduleIfIdle(Task task) ABSL_LOCKS_EXCLUDED(mu_);
  // Stops accepting tasks, runs the queued ones and joins the threads. Idempotent.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);

  size_t queued() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t threads() const { return threads_.size(); }
  size_t max_queue() const { return max_queue_; }

 private:
  void WorkLoop(int nice) ABSL_LOCKS_EXCLUDED(mu_);

  const size_t max_queue_;
  mutable absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  size_t idle_ ABSL_GUARDED_BY(mu_) = 0;  // threads waiting for a task
  std::vector<std::thread> threads_;
};

}  // namespace cl

#endif  // SERVICE_THREAD_POOL_H_

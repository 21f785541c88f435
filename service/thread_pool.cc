#include "service/thread_pool.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace cl {

ThreadPool::ThreadPool(int threads, size_t max_queue, int nice) : max_queue_(max_queue) {
  if (threads <= 0) threads = HardwareThreads();
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this, nice] { WorkLoop(nice); });
}

ThreadPool::~ThreadPool() { Shutdown(); }

bool ThreadPool::TrySchedule(Task task) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= max_queue_) return false;
  queue_.push_back(std::move(task));
  return true;
}

void ThreadPool::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

bool ThreadPool::TryScheduleIfIdle(Task task) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= idle_) return false;
  queue_.push_back(std::move(task));
  return true;
}

size_t ThreadPool::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void ThreadPool::WorkLoop(int nice) {
  // Relative to the thread's niceness (it inherits the process's), capped at 19. Best effort: an
  // unprivileged process may always lower its own priority.
  if (nice > 0) {
    const auto tid = static_cast<id_t>(gettid());
    setpriority(PRIO_PROCESS, tid, std::min(19, getpriority(PRIO_PROCESS, tid) + nice));
  }
  while (true) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      ++idle_;
      mu_.Await(absl::Condition(
          +[](ThreadPool* p)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) { return p->stopping_ || !p->queue_.empty(); },
          this));
      --idle_;
      if (queue_.empty()) return;  // stopping, and nothing left to run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    std::move(task)();
  }
}

}  // namespace cl

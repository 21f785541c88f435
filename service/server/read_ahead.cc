#include "service/server/read_ahead.h"

#include <algorithm>
#include <utility>

namespace cl {

ReadAhead::ReadAhead(ThreadPool* pool, size_t limit, Handle handle, std::function<void()> read_on)
    : s_(std::make_shared<State>(pool, limit, std::move(handle), std::move(read_on))) {}

bool ReadAhead::Push(Read read, bool* refused) {
  *refused = false;
  const bool end = !read.ok;
  bool schedule = false;
  bool read_on = false;
  {
    absl::MutexLock lock(&s_->mu);
    if (s_->stopped) return false;
    s_->bytes += read.message.Length();
    s_->queue.push_back(std::move(read));
    schedule = !s_->draining;
    s_->draining = true;
    read_on = !end && s_->bytes < s_->limit;
    s_->paused = !end && !read_on;
  }
  if (schedule && !s_->pool->TrySchedule([s = s_] { Drain(s); })) {
    absl::MutexLock lock(&s_->mu);
    s_->stopped = true;
    s_->draining = false;
    s_->queue.clear();
    s_->bytes = 0;
    *refused = true;
    return false;
  }
  return read_on;
}

void ReadAhead::Drain(const std::shared_ptr<State>& state) {
  State& s = *state;
  for (int turn = 0;; ++turn) {
    Read read;
    {
      absl::MutexLock lock(&s.mu);
      if (s.stopped || s.queue.empty()) {
        s.draining = false;
        s.drainer = std::thread::id();
        return;
      }
      if (turn == kReadsPerTurn) {
        s.drainer = std::thread::id();  // still draining: the next turn is queued
        if (s.pool->TrySchedule([state] { Drain(state); })) return;
        turn = 0;  // the pool takes no task (shutting down): go on here
      }
      s.drainer = std::this_thread::get_id();
      read = std::move(s.queue.front());
      s.queue.pop_front();
    }
    const size_t size = read.message.Length();
    const bool go_on = s.handle(read);
    bool read_on = false;
    {
      absl::MutexLock lock(&s.mu);
      s.bytes -= size;
      if (!go_on) s.stopped = true;
      if (!s.stopped && s.paused && s.bytes < s.limit) {
        s.paused = false;
        read_on = true;
      }
    }
    if (read_on) s.read_on();
  }
}

void ReadAhead::Close() {
  absl::MutexLock lock(&s_->mu);
  s_->stopped = true;
  // The handler may end the call from the draining task, and gRPC may then close it there too.
  if (s_->drainer != std::this_thread::get_id())
    s_->mu.Await(absl::Condition(s_.get(), &State::Idle));
  s_->queue.clear();
  s_->bytes = 0;
}

ImportThreads::ImportThreads(size_t max_queue) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < threads; ++i)
    threads_.push_back(std::make_unique<ThreadPool>(1, max_queue));
}

ThreadPool* ImportThreads::Next() { return threads_[next_.fetch_add(1) % threads_.size()].get(); }

void ImportThreads::Shutdown() {
  for (const auto& thread : threads_) thread->Shutdown();
}

size_t ReadAhead::queued_bytes() const {
  absl::MutexLock lock(&s_->mu);
  return s_->bytes;
}

}  // namespace cl

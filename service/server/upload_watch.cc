#include "service/server/upload_watch.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/time/clock.h"

namespace cl {

UploadWatch::UploadWatch(UploadWatchOptions options)
    : options_(options),
      tick_(std::clamp(std::min(options.idle_timeout, options.upload_timeout) / 10,
                       absl::Milliseconds(10), absl::Seconds(1))),
      thread_([this] { Run(); }) {}

UploadWatch::~UploadWatch() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void UploadWatch::Add(std::shared_ptr<WatchedUpload> upload) {
  absl::MutexLock lock(&mu_);
  const WatchedUpload* key = upload.get();
  uploads_.emplace(key, std::move(upload));
}

void UploadWatch::Remove(const WatchedUpload* upload) {
  absl::MutexLock lock(&mu_);
  uploads_.erase(upload);
}

bool UploadWatch::Evict() {
  const absl::Time now = absl::Now();
  const absl::Duration evict_after = std::min(options_.evict_after, options_.idle_timeout);
  // Candidates idlest first; each is ended outside the lock, and one that ended meanwhile (its end
  // marker came, or its client gave up) passes to the next.
  std::vector<std::pair<absl::Duration, std::shared_ptr<WatchedUpload>>> idle;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, upload] : uploads_) {
      if (const absl::Duration d = upload->IdleFor(now); d >= evict_after)
        idle.emplace_back(d, upload);
    }
  }
  std::sort(idle.begin(), idle.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [d, upload] : idle) {
    if (upload->End(UploadEnd::kEvicted, d)) {
      Remove(upload.get());
      return true;
    }
  }
  return false;
}

void UploadWatch::Run() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stop_), tick_);
      if (stop_) return;
    }
    Sweep(absl::Now());
  }
}

void UploadWatch::Sweep(absl::Time now) {
  std::vector<std::pair<UploadEnd, std::shared_ptr<WatchedUpload>>> due;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = uploads_.begin(); it != uploads_.end();) {
      const WatchedUpload& u = *it->second;
      if (now - u.admitted() >= options_.upload_timeout) {
        due.emplace_back(UploadEnd::kUploadTimeout, it->second);
      } else if (u.IdleFor(now) >= options_.idle_timeout) {
        due.emplace_back(UploadEnd::kIdle, it->second);
      } else {
        ++it;
        continue;
      }
      uploads_.erase(it++);
    }
  }
  for (const auto& [why, upload] : due) upload->End(why, upload->IdleFor(now));
}

}  // namespace cl

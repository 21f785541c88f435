// The Analyze calls still uploading, watched by one thread so that a slow or silent client cannot
// hold a max_inflight slot: a call that reads no message for idle_timeout, or that has not reached
// its end marker upload_timeout after admission, is ended. And when every slot is taken, admission
// may take the slot of the call that has been idle longest (at least evict_after), rather than
// refuse a client that is ready to send.
//
// The watch knows a call only as a WatchedUpload: when it read last, when it was admitted, and how
// to end it (End, the reactor's, which claims the call first and does nothing for a call that has
// moved on: analyzing, or ended by another path). A reactor adds its upload on admission and
// removes it when the upload ends; a sweep that picked it up just before is harmless, as End then
// finds the call claimed.
#ifndef SERVICE_SERVER_UPLOAD_WATCH_H_
#define SERVICE_SERVER_UPLOAD_WATCH_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace cl {

// Why the watch ends a call.
enum class UploadEnd {
  kIdle,           // no message for idle_timeout
  kUploadTimeout,  // no end marker within upload_timeout of admission
  kEvicted,        // idle while the server was full: its slot went to a new call
};

class WatchedUpload {
 public:
  explicit WatchedUpload(absl::Time admitted) : admitted_(admitted), last_read_(Nanos(admitted)) {}
  virtual ~WatchedUpload() = default;

  // A message arrived now (one relaxed store: called on every read).
  void Read(absl::Time now = absl::Now()) {
    last_read_.store(Nanos(now), std::memory_order_relaxed);
  }
  absl::Duration IdleFor(absl::Time now) const {
    return now - absl::FromUnixNanos(last_read_.load(std::memory_order_relaxed));
  }
  absl::Time admitted() const { return admitted_; }

  // Ends the call for `why`, unless it has ended already (then false). With kEvicted, the call's
  // max_inflight slot passes to the caller: the call ending does not give it back.
  virtual bool End(UploadEnd why, absl::Duration idle) = 0;

 private:
  static int64_t Nanos(absl::Time t) { return absl::ToUnixNanos(t); }
  const absl::Time admitted_;
  std::atomic<int64_t> last_read_;
};

struct UploadWatchOptions {
  absl::Duration idle_timeout = absl::Seconds(10);
  absl::Duration upload_timeout = absl::Seconds(60);
  // A full server takes the slot of a call idle this long (never longer than idle_timeout).
  absl::Duration evict_after = absl::Seconds(1);
};

class UploadWatch {
 public:
  explicit UploadWatch(UploadWatchOptions options);
  ~UploadWatch();  // stops the thread; every upload must have been removed
  UploadWatch(const UploadWatch&) = delete;
  UploadWatch& operator=(const UploadWatch&) = delete;

  void Add(std::shared_ptr<WatchedUpload> upload);
  void Remove(const WatchedUpload* upload);

  // Ends the call idle longest, if one has been idle for evict_after, and gives its slot to the
  // caller: true when it did.
  bool Evict();

  const UploadWatchOptions& options() const { return options_; }

 private:
  void Run();
  // Ends (outside the lock) every upload whose time is up at `now`.
  void Sweep(absl::Time now);

  const UploadWatchOptions options_;
  const absl::Duration
      tick_;  // how often the thread looks: a tenth of the shorter timeout, 10 ms-1 s
  absl::Mutex mu_;
  absl::flat_hash_map<const WatchedUpload*, std::shared_ptr<WatchedUpload>> uploads_
      ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace cl

#endif  // SERVICE_SERVER_UPLOAD_WATCH_H_

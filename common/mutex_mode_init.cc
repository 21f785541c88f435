// Compiled into cl-client and cl-server (client/CMakeLists.txt, service/CMakeLists.txt): abseil's
// Mutex deadlock detection off in release builds, as abseil itself means it to be.
//
// abseil checks the lock order of every Mutex acquisition for cycles unless it was built with
// NDEBUG, and Debian builds it without: each uncontended Lock/Unlock took 44 ns against 17 ns with
// the check off (a loop over four Mutexes, bookworm's abseil 20220623), for every lock in the
// analysis pool, the server's reactors and gRPC, which locks through absl::Mutex too; and the
// flags' static registration takes a lock per flag at every cl-client start. Test and sanitizer
// builds (no NDEBUG) keep the check.
#include "absl/synchronization/mutex.h"

namespace cl {
namespace {

#ifdef NDEBUG
// Priority 101: before the C++ static initializers, which run at the default priority.
__attribute__((constructor(101))) void IgnoreMutexDeadlockCycles() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}
#endif

}  // namespace
}  // namespace cl

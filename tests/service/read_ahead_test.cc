// ReadAhead: reads are handled in order on the pool; reading pauses at the limit and the handler's
// side resumes it once there is room; the end of the stream is handled behind the bytes and
// never reads on; a handler that ends the call stops the rest; Close waits for a running handler.
#include "service/server/read_ahead.h"

#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/impl/grpc_library.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

// grpc::ByteBuffer needs gRPC's library set up, which nothing else this test links does.
const grpc::internal::GrpcLibraryInitializer grpc_library;

ReadAhead::Read MessageOf(uint64_t number, size_t size) {
  std::string bytes(size, 'x');
  grpc::Slice slice(bytes);
  return {number, true, grpc::ByteBuffer(&slice, 1)};
}

TEST(ReadAheadTest, ReadsAreHandledInOrderAndReadingPausesAtTheLimit) {
  ThreadPool pool(1, 8);
  absl::Notification go;
  absl::Mutex mu;
  std::vector<uint64_t> handled;
  std::atomic<int> read_on{0};
  ReadAhead ahead(
      &pool, /*limit=*/1000,
      [&](ReadAhead::Read& read) {
        go.WaitForNotification();  // the first read holds the pool until all are queued
        absl::MutexLock lock(&mu);
        handled.push_back(read.ok ? read.number : 0);
        return true;
      },
      [&] { ++read_on; });
  bool refused = false;
  EXPECT_TRUE(ahead.Push(MessageOf(1, 400), &refused));
  EXPECT_TRUE(ahead.Push(MessageOf(2, 400), &refused));
  EXPECT_FALSE(ahead.Push(MessageOf(3, 400), &refused));  // 1,200 bytes queued: over the limit
  EXPECT_FALSE(refused);
  EXPECT_EQ(ahead.queued_bytes(), 1200u);
  EXPECT_EQ(read_on.load(), 0);
  go.Notify();
  while (read_on.load() == 0) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(read_on.load(), 1);  // once under the limit, reading resumed, once
  EXPECT_FALSE(ahead.Push({4, /*ok=*/false, grpc::ByteBuffer()}, &refused));  // the end
  for (;;) {
    absl::MutexLock lock(&mu);
    if (handled.size() == 4) break;
    mu.AwaitWithTimeout(absl::Condition::kTrue, absl::Milliseconds(1));
  }
  ahead.Close();
  EXPECT_EQ(handled, (std::vector<uint64_t>{1, 2, 3, 0}));
  EXPECT_EQ(read_on.load(), 1);
}

TEST(ReadAheadTest, AHandlerThatEndsTheCallStopsTheRest) {
  ThreadPool pool(1, 8);
  absl::Notification started, go;
  std::atomic<int> calls{0};
  std::atomic<int> read_on{0};
  ReadAhead ahead(
      &pool, /*limit=*/100,
      [&](ReadAhead::Read&) {
        started.Notify();
        go.WaitForNotification();
        ++calls;
        return false;  // the call ended (refused, say)
      },
      [&] { ++read_on; });
  bool refused = false;
  EXPECT_FALSE(ahead.Push(MessageOf(1, 200), &refused));
  EXPECT_FALSE(ahead.Push(MessageOf(2, 10), &refused));
  started.WaitForNotification();
  go.Notify();
  ahead.Close();  // waits for the running handler, and drops what is queued behind it
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(read_on.load(), 0);  // an ended call is not read on
  EXPECT_FALSE(ahead.Push(MessageOf(3, 10), &refused));
  EXPECT_FALSE(refused);
}

// Two calls on one import thread take turns: a call with many reads queued does not keep the
// thread until they are all handled while the other's read waits.
TEST(ReadAheadTest, CallsSharingAThreadTakeTurns) {
  ThreadPool pool(1, 8);
  absl::Notification go;
  ASSERT_TRUE(pool.TrySchedule([&] { go.WaitForNotification(); }));  // holds the thread
  absl::Mutex mu;
  std::vector<std::string> handled;
  const auto handler = [&](const char* call) {
    return [&, call](ReadAhead::Read& read) {
      absl::MutexLock lock(&mu);
      handled.push_back(absl::StrCat(call, read.number));
      return true;
    };
  };
  ReadAhead busy(&pool, /*limit=*/1 << 20, handler("a"), [] {});
  ReadAhead other(&pool, /*limit=*/1 << 20, handler("b"), [] {});
  bool refused = false;
  for (uint64_t n = 1; n <= 10; ++n) EXPECT_TRUE(busy.Push(MessageOf(n, 10), &refused));
  EXPECT_TRUE(other.Push(MessageOf(1, 10), &refused));
  go.Notify();
  {
    absl::MutexLock lock(&mu);
    const auto all_handled = [&handled] { return handled.size() == 11; };
    mu.Await(absl::Condition(&all_handled));
  }
  // The busy call's first turn, the other call's read, then the rest of the busy call's.
  EXPECT_EQ(handled, (std::vector<std::string>{"a1", "a2", "a3", "a4", "b1", "a5", "a6", "a7", "a8",
                                               "a9", "a10"}));
  busy.Close();
  other.Close();
}

TEST(ReadAheadTest, APoolThatTakesNoTaskRefusesTheRead) {
  ThreadPool pool(1, 8);
  pool.Shutdown();
  ReadAhead ahead(
      &pool, 100, [](ReadAhead::Read&) { return true; }, [] {});
  bool refused = false;
  EXPECT_FALSE(ahead.Push(MessageOf(1, 10), &refused));
  EXPECT_TRUE(refused);
  EXPECT_EQ(ahead.queued_bytes(), 0u);
}

}  // namespace
}  // namespace cl

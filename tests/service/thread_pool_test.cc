#include "service/thread_pool.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

TEST(ThreadPoolTest, RunsWhatItAccepts) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(2, 100);
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(pool.TrySchedule([&ran] { ran.fetch_add(1); }));
  }  // the destructor runs what is queued, then joins
  EXPECT_EQ(ran.load(), 50);
}

TEST(ThreadPoolTest, WorkersRunAtTheNicenessAsked) {
  const int own = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  std::atomic<int> seen{-100};
  {
    ThreadPool pool(1, 1, /*nice=*/7);
    ASSERT_TRUE(pool.TrySchedule(
        [&seen] { seen = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); }));
  }
  EXPECT_EQ(seen.load(), std::min(19, own + 7));
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())),
            own);  // the caller's own thread is untouched
}

TEST(ThreadPoolTest, AFullQueueShedsInsteadOfGrowing) {
  ThreadPool pool(1, 2);
  absl::Notification release, started;
  ASSERT_TRUE(pool.TrySchedule([&] {
    started.Notify();
    release.WaitForNotification();
  }));
  started.WaitForNotification();  // the only thread is busy
  EXPECT_TRUE(pool.TrySchedule([] {}));
  EXPECT_TRUE(pool.TrySchedule([] {}));
  EXPECT_FALSE(pool.TrySchedule([] {})) << "a third queued task is over the bound";
  EXPECT_EQ(pool.queued(), 2u);
  release.Notify();
}

TEST(ThreadPoolTest, OptionalHelpIsQueuedOnlyForAnIdleThread) {
  ThreadPool pool(2, 10);
  absl::Notification release, first_started, second_started;
  // Help is taken once a thread is idle (the threads may still be starting).
  while (!pool.TryScheduleIfIdle([&] {
    first_started.Notify();
    release.WaitForNotification();
  })) {
    std::this_thread::yield();
  }
  first_started.WaitForNotification();
  while (!pool.TryScheduleIfIdle([&] {
    second_started.Notify();
    release.WaitForNotification();
  })) {
    std::this_thread::yield();
  }
  second_started.WaitForNotification();
  // Both busy: help is refused although the queue has room, and real work is still queued.
  EXPECT_FALSE(pool.TryScheduleIfIdle([] {}));
  EXPECT_TRUE(pool.TrySchedule([] {}));
  EXPECT_EQ(pool.queued(), 1u);
  release.Notify();
}

TEST(ThreadPoolTest, RefusesAfterShutdown) {
  ThreadPool pool(1, 10);
  pool.Shutdown();
  EXPECT_FALSE(pool.TrySchedule([] {}));
  pool.Shutdown();  // idempotent
}

}  // namespace
}  // namespace cl

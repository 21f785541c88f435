#include "service/thread_pool.h"

#include <atomic>

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

TEST(ThreadPoolTest, AFullQueueShedsInsteadOfGrowing) {
  ThreadPool pool(1, 2);
  absl::Notification release, started;
  ASSERT_TRUE(pool.TrySchedule([&] { started.Notify(); release.WaitForNotification(); }));
  started.WaitForNotification();  // the only thread is busy
  EXPECT_TRUE(pool.TrySchedule([] {}));
  EXPECT_TRUE(pool.TrySchedule([] {}));
  EXPECT_FALSE(pool.TrySchedule([] {})) << "a third queued task is over the bound";
  EXPECT_EQ(pool.queued(), 2u);
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

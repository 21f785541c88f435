// SIGTERM while a real cl-server is under load: its health goes NOT_SERVING, calls that arrive
// after the drain delay are refused, every call it accepted completes with its report, and the
// process exits 0 well inside the grace period.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/analyze_client.h"
#include "client/upload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/binaries.h"
#include "tests/testing/captures.h"
#include "tests/testing/subprocess.h"

namespace cl {
namespace {

using Clock = std::chrono::steady_clock;
using ::cl::testing::kServerBinary;
using ::cl::testing::LoadHero;
using ::cl::testing::Subprocess;
using ::testing::AnyOf;
using ::testing::HasSubstr;

struct CallRecord {
  Clock::time_point start, end;
  absl::StatusCode code;
  std::string message;
  bool report = false;
};

TEST(DrainTest, SigtermUnderLoadLosesNoAcceptedCall) {
  constexpr auto kDrainDelay = std::chrono::seconds(1);
  constexpr auto kGrace = std::chrono::seconds(30);
  Subprocess server({kServerBinary, "--listen=127.0.0.1:0", "--drain_delay=1s", "--drain_grace=30s",
                     "--analysis_threads=2", "--max_inflight=64"});
  absl::StatusOr<std::string> address = server.ReadAnnounced("cl-server: listening on ");
  ASSERT_TRUE(address.ok()) << address.status();
  RemoteOptions remote;
  remote.target = *address;
  remote.deadline = absl::Seconds(60);

  const v1::SessionCapture head = LoadHero("head.cls.json");
  const v1::SessionCapture base = LoadHero("base.cls.json");
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<CallRecord> calls;
  std::vector<std::thread> clients;
  for (int t = 0; t < 6; ++t) {
    clients.emplace_back([&, t] {
      AssembledCaptures captures{head, base};
      for (int n = 0; !stop; ++n) {
        captures.head.mutable_session()->set_id(
            absl::StrCat("drain-", t, "-", n));  // no retry cache
        CallRecord r;
        r.start = Clock::now();
        absl::StatusOr<v1::AnalyzeResponse> response = AnalyzeRemote(captures, {}, remote);
        r.end = Clock::now();
        r.code = response.status().code();
        r.message = std::string(response.status().message());
        r.report = response.ok() && response->report().recompile().total() == 3;
        std::lock_guard<std::mutex> lock(mu);
        calls.push_back(r);
      }
    });
  }
  // Load first: some calls answered, others in flight.
  while (true) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::lock_guard<std::mutex> lock(mu);
    if (calls.size() >= 12) break;
  }

  const Clock::time_point sigterm = Clock::now();
  server.Signal(SIGTERM);
  // Health goes NOT_SERVING at once, while calls are still being accepted.
  RemoteOptions health = remote;
  health.deadline = absl::Milliseconds(500);
  bool not_serving = false;
  while (!not_serving && Clock::now() < sigterm + kDrainDelay) {
    not_serving = !CheckHealth(health, "").ok();
    if (!not_serving) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(not_serving) << "health still SERVING during the drain delay";

  const int exit_code = server.Wait();
  const Clock::time_point exited = Clock::now();
  // A little more load against the closed port, then stop.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop = true;
  for (std::thread& t : clients) t.join();

  EXPECT_EQ(exit_code, 0);
  EXPECT_LT(exited - sigterm, kDrainDelay + kGrace) << "did not exit within the grace period";
  EXPECT_THAT(server.ReadStderrToEnd(), HasSubstr("drained, exiting"));

  size_t before = 0, after_ok = 0, refused = 0;
  for (const CallRecord& c : calls) {
    if (c.start < sigterm) {
      // In flight or answered before the signal: accepted, so it must end with its report.
      ++before;
      EXPECT_EQ(c.code, absl::StatusCode::kOk) << "a call accepted before SIGTERM was lost";
      EXPECT_TRUE(c.report);
    } else if (c.code == absl::StatusCode::kOk) {
      ++after_ok;  // accepted during the drain delay: answered in full too
      EXPECT_TRUE(c.report);
    } else {
      // Refused, as the server stops accepting: UNAVAILABLE (a closed port, GOAWAY) or CANCELLED
      // (reached the server as it shut down, before any handler saw it). Either is retried by
      // `cl-client upload`, and none may come during the drain delay, while calls are accepted.
      ++refused;
      const std::string when =
          absl::StrCat(std::chrono::duration<double>(c.start - sigterm).count(), " s to ",
                       std::chrono::duration<double>(c.end - sigterm).count(), " s after SIGTERM");
      EXPECT_THAT(c.code, AnyOf(absl::StatusCode::kUnavailable, absl::StatusCode::kCancelled))
          << "a call after SIGTERM ended neither answered nor refused: " << c.message << " ("
          << when << ")";
      EXPECT_TRUE(IsRetryable(absl::Status(c.code, c.message))) << c.message;
      EXPECT_GE(c.start, sigterm + kDrainDelay - std::chrono::milliseconds(250))
          << "refused while the server still accepted calls: " << c.message << " (" << when << ")";
    }
  }
  EXPECT_GE(before, 12u);
  EXPECT_GT(refused, 0u) << "no call was refused after the drain";
  std::cerr << "calls before SIGTERM " << before << ", answered during the drain " << after_ok
            << ", refused " << refused << ", exit after "
            << std::chrono::duration<double>(exited - sigterm).count() << " s\n";
}

}  // namespace
}  // namespace cl

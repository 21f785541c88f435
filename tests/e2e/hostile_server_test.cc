// A real cl-server on a free loopback port against the small requests that once took it down
// (issue 21): each must be answered or refused at once, leave the server serving, and let it drain
// within its grace.
#include <signal.h>

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/analyze_client.h"
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
using ::testing::HasSubstr;

class HostileServerTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags) {
    std::vector<std::string> argv = {kServerBinary, "--listen=127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    server_.emplace(argv);
    absl::StatusOr<std::string> address = server_->ReadAnnounced("cl-server: listening on ");
    ASSERT_TRUE(address.ok()) << address.status();
    remote_.target = *address;
    remote_.deadline = absl::Seconds(20);
  }

  // The server still answers a normal session, in full.
  void ExpectServing() {
    v1::SessionCapture head = LoadHero("head.cls.json");
    head.mutable_session()->set_id(absl::StrCat("normal-", ++normal_));
    absl::StatusOr<v1::AnalyzeResponse> response = AnalyzeRemote({head, std::nullopt}, {}, remote_);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->report().recompile().total(), 3u);
  }

  std::optional<Subprocess> server_;
  RemoteOptions remote_;
  int normal_ = 0;
};

// One kernel of 1 FLOP over 5e-324 bytes (an intensity that overflows to infinity) on a known GPU
// made the roofline chart loop for ever, growing; two such calls took both analysis threads and
// SIGTERM did not end the process. They are answered at once, the kernel named and left off the
// chart, and the server drains within its grace.
TEST_F(HostileServerTest, AnInfiniteIntensityIsAnsweredAndTheServerStillDrains) {
  Start({"--analysis_threads=2", "--drain_delay=0s", "--drain_grace=5s"});
  const auto hostile = [](int n, double flops, double bytes) {
    v1::SessionCapture head = LoadHero("head.cls.json");
    head.mutable_session()->set_id(absl::StrCat("infinite-", n));
    head.mutable_session()->set_gpu("A100-SXM-80GB");
    v1::Kernel* k = head.add_kernels();
    k->set_name("triton_poi_hostile");
    k->set_flops(flops);
    k->set_bytes(bytes);
    return head;
  };
  const std::vector<std::pair<double, double>> figures = {
      {1, 5e-324}, {1e308, 1e-300}, {std::numeric_limits<double>::infinity(), 1}};
  std::vector<std::thread> calls;
  std::vector<absl::StatusOr<v1::AnalyzeResponse>> answers(figures.size(),
                                                           absl::UnknownError("not run"));
  v1::AnalyzeOptions options;
  options.set_render_html(true);
  for (size_t i = 0; i < figures.size(); ++i) {
    calls.emplace_back([&, i] {
      answers[i] = AnalyzeRemote({hostile(i, figures[i].first, figures[i].second), std::nullopt},
                                 options, remote_);
    });
  }
  for (std::thread& t : calls) t.join();
  for (const absl::StatusOr<v1::AnalyzeResponse>& answer : answers) {
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_THAT(answer->report().roofline().note(),
                HasSubstr("not a finite number (or whose intensity overflows), so it is left out: "
                          "triton_poi_hostile"));
    EXPECT_THAT(answer->html(), HasSubstr("<svg class=\"roofline\""));
  }
  ExpectServing();
  const Clock::time_point sigterm = Clock::now();
  server_->Signal(SIGTERM);
  EXPECT_EQ(server_->Wait(), 0);
  EXPECT_LT(Clock::now() - sigterm, std::chrono::seconds(5));
}

}  // namespace
}  // namespace cl

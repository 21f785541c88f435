// A session sent twice (an upload's retry after the server had answered) is analyzed once: the
// second call gets the first call's response, and the fleet metrics count the session once.
#include <memory>
#include <string>

#include "client/analyze_client.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "service/server/recent_sessions.h"
#include "service/server/server.h"
#include "tests/service/metrics_reader.h"
#include "tests/testing/captures.h"

namespace cl {
namespace {

// An upload's retry after the server had already analyzed the session gets the same answer, and
// the fleet metrics count the session once.
TEST(RecentSessionsTest, ASessionSentTwiceIsAnalyzedOnce) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.analysis_threads = 2;
  absl::StatusOr<std::unique_ptr<AnalysisServer>> server = AnalysisServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  RemoteOptions remote;
  remote.target = (*server)->address();
  remote.deadline = absl::Seconds(20);
  const AssembledCaptures hero{testing::LoadHero("head.cls.json"), std::nullopt};
  absl::StatusOr<v1::AnalyzeResponse> first = AnalyzeRemote(hero, {}, remote);
  absl::StatusOr<v1::AnalyzeResponse> again = AnalyzeRemote(hero, {}, remote);
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(first->report(), again->report()));
  ASSERT_EQ(first->timings_size(), again->timings_size());
  for (int i = 0; i < first->timings_size(); ++i) {
    EXPECT_EQ(first->timings(i).seconds(), again->timings(i).seconds());  // the same answer, not a rerun
  }
  const testing::MetricsReader metrics((*server)->metrics().Collect());
  EXPECT_EQ(metrics.Sum("compile_lens_sessions_analyzed_total"), 1.0);
  // Other options are another request: analyzed.
  v1::AnalyzeOptions text;
  text.set_render_text(true);
  ASSERT_TRUE(AnalyzeRemote(hero, text, remote).ok());
  EXPECT_EQ(testing::MetricsReader((*server)->metrics().Collect()).Sum("compile_lens_sessions_analyzed_total"), 2.0);
}

TEST(RecentSessionsTest, RunningDuplicatesAreToldToRetryAndTheCacheIsBounded) {
  RecentSessions recent(/*max_entries=*/2, /*max_bytes=*/1 << 20);
  v1::AnalyzeResponse out;
  EXPECT_EQ(recent.Begin("a", &out), RecentSessions::Claim::kNew);
  EXPECT_EQ(recent.Begin("a", &out), RecentSessions::Claim::kRunning);
  v1::AnalyzeResponse a;
  a.set_text("report a");
  recent.Done("a", a);
  EXPECT_EQ(recent.Begin("a", &out), RecentSessions::Claim::kDone);
  EXPECT_EQ(out.text(), "report a");
  for (const char* k : {"b", "c"}) {
    ASSERT_EQ(recent.Begin(k, &out), RecentSessions::Claim::kNew);
    recent.Done(k, a);
  }
  EXPECT_EQ(recent.Begin("a", &out), RecentSessions::Claim::kNew);  // the oldest went out
  recent.Abandon("a");
  EXPECT_EQ(recent.Begin("a", &out), RecentSessions::Claim::kNew);  // a failed analysis is not kept
}

}  // namespace
}  // namespace cl

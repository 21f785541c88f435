// A session sent twice (an upload's retry after the server had answered) is analyzed once: the
// second call gets the first call's response, and the fleet metrics count the session once.
#include "service/server/recent_sessions.h"

#include <memory>
#include <string>

#include "client/analyze_client.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
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
    EXPECT_EQ(first->timings(i).seconds(),
              again->timings(i).seconds());  // the same answer, not a rerun
  }
  const testing::MetricsReader metrics((*server)->metrics().Collect());
  EXPECT_EQ(metrics.Sum("compile_lens_sessions_analyzed_total"), 1.0);
  // Other options are another request: analyzed.
  v1::AnalyzeOptions text;
  text.set_render_text(true);
  ASSERT_TRUE(AnalyzeRemote(hero, text, remote).ok());
  EXPECT_EQ(testing::MetricsReader((*server)->metrics().Collect())
                .Sum("compile_lens_sessions_analyzed_total"),
            2.0);
  // Another capture under the same session id, of the same size (a frame renamed, one letter): not
  // the first one's answer, which the key once took it for.
  AssembledCaptures edited = hero;
  std::string name = edited.head.frames(0).name();
  ASSERT_FALSE(name.empty());
  name[0] = name[0] == 'X' ? 'Y' : 'X';
  edited.head.mutable_frames(0)->set_name(name);
  ASSERT_EQ(edited.head.ByteSizeLong(), hero.head.ByteSizeLong());
  absl::StatusOr<v1::AnalyzeResponse> renamed = AnalyzeRemote(edited, {}, remote);
  ASSERT_TRUE(renamed.ok()) << renamed.status();
  EXPECT_FALSE(
      google::protobuf::util::MessageDifferencer::Equals(first->report(), renamed->report()));
  EXPECT_EQ(testing::MetricsReader((*server)->metrics().Collect())
                .Sum("compile_lens_sessions_analyzed_total"),
            3.0);
}

grpc::ByteBuffer Bytes(const std::string& text) {
  grpc::Slice slice(text);
  return grpc::ByteBuffer(&slice, 1);
}

std::string Text(const grpc::ByteBuffer& buffer) {
  grpc::Slice whole;
  EXPECT_TRUE(buffer.TrySingleSlice(&whole).ok() || buffer.DumpToSingleSlice(&whole).ok());
  return std::string(reinterpret_cast<const char*>(whole.begin()), whole.size());
}

TEST(RecentSessionsTest, RunningDuplicatesAreToldToRetryAndTheCacheIsBounded) {
  RecentSessions recent(/*max_entries=*/2, /*max_bytes=*/1 << 20);
  grpc::ByteBuffer out;
  EXPECT_EQ(recent.Begin("a", &out), RecentSessions::Claim::kNew);
  EXPECT_EQ(recent.Begin("a", &out), RecentSessions::Claim::kRunning);
  recent.Done("a", Bytes("report a"));
  EXPECT_EQ(recent.Begin("a", &out), RecentSessions::Claim::kDone);
  EXPECT_EQ(Text(out), "report a");
  for (const char* k : {"b", "c"}) {
    ASSERT_EQ(recent.Begin(k, &out), RecentSessions::Claim::kNew);
    recent.Done(k, Bytes(k));
  }
  EXPECT_EQ(recent.Begin("a", &out), RecentSessions::Claim::kNew);  // the oldest went out
  recent.Abandon("a");
  EXPECT_EQ(recent.Begin("a", &out), RecentSessions::Claim::kNew);  // a failed analysis is not kept
  recent.Abandon("a");
  EXPECT_EQ(recent.Begin("c", &out), RecentSessions::Claim::kDone);
  EXPECT_EQ(Text(out), "c");
}

// An answer over the byte bound is not kept: a duplicate of it is analyzed again.
TEST(RecentSessionsTest, AnAnswerOverTheByteBoundIsNotKept) {
  RecentSessions recent(/*max_entries=*/8, /*max_bytes=*/64);
  grpc::ByteBuffer out;
  ASSERT_EQ(recent.Begin("big", &out), RecentSessions::Claim::kNew);
  recent.Done("big", Bytes(std::string(100, 'x')));
  EXPECT_EQ(recent.Begin("big", &out), RecentSessions::Claim::kNew);
}

}  // namespace
}  // namespace cl

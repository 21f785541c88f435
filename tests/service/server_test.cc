// cl-server's service in-process on port 0, over real gRPC on loopback: valid sessions, bad
// streams of well-formed chunks, and the server's options. After each bad call the server must
// still be healthy and serve the next valid request correctly. Broken bytes on the wire are
// server_wire_test.cc's; limits and admission server_limits_test.cc's.
#include "service/server/server.h"

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzers/lint/lint.h"
#include "client/analyze_client.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/service/server_test_fixture.h"
#include "tests/testing/status_matchers.h"

namespace cl::testing {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

TEST_F(ServerTest, RemoteReportEqualsTheInProcessOne) {
  AssembledCaptures hero{Load("head.cls.json"), Load("base.cls.json")};
  v1::AnalyzeOptions options;
  options.set_render_html(true);
  ASSERT_OK_AND_ASSIGN(v1::AnalyzeResponse remote,
                       AnalyzeRemote(hero, options, Remote(server_->address(), absl::Seconds(30))));
  ASSERT_OK_AND_ASSIGN(v1::AnalyzeResponse local, AnalyzeInProcess(hero, options, 2));
  EXPECT_TRUE(MessageDifferencer::Equals(remote.report(), local.report()));
  EXPECT_EQ(remote.html(), local.html());
  EXPECT_THAT(remote.html(), HasSubstr("id=\"recompile\""));
  EXPECT_EQ(remote.report().recompile().status(), v1::OK);
  EXPECT_FALSE(remote.timings().empty());
}

// The upload's progress (cl-client's progress line): after every message sent, the bytes sent so
// far, rising, ending at about the size of the captures (framing adds a little).
TEST_F(ServerTest, AnUploadReportsTheBytesItHasSent) {
  AssembledCaptures hero{Load("head.cls.json"), Load("base.cls.json")};
  RemoteOptions remote = Remote(server_->address(), absl::Seconds(30));
  remote.part_budget = 4096;  // several messages
  std::vector<uint64_t> sent;
  remote.on_sent = [&](uint64_t bytes) { sent.push_back(bytes); };
  ASSERT_THAT(AnalyzeRemote(hero, {}, remote).status(), IsOk());
  ASSERT_GE(sent.size(), 4u);
  EXPECT_TRUE(std::is_sorted(sent.begin(), sent.end()));
  EXPECT_LT(sent.front(), sent.back());
  const uint64_t size = hero.head.ByteSizeLong() + hero.base->ByteSizeLong();
  EXPECT_GE(sent.back(), size);
  EXPECT_LT(sent.back(), size + size / 10);
}

TEST_F(ServerTest, StreamWithoutEndMarkerIsNotAnalyzed) {
  ExpectRefused(Stream(Load("head.cls.json"), /*end=*/false), "without an end marker");
}

TEST_F(ServerTest, TruncatedStreamIsRefused) {
  std::vector<v1::AnalyzeChunk> chunks = Stream(Load("head.cls.json"));
  const uint64_t declared = chunks.back().end().parts();
  chunks.erase(chunks.end() - 3, chunks.end() - 1);  // two parts lost on the way
  ExpectRefused(chunks, absl::StrCat("end marker says ", declared, " parts"));
}

TEST_F(ServerTest, OptionsMustComeFirst) {
  std::vector<v1::AnalyzeChunk> chunks = Stream(Load("head.cls.json"));
  chunks.erase(chunks.begin());
  ExpectRefused(chunks, "first message of Analyze must carry the options");
}

TEST_F(ServerTest, OversizePartIsRefused) {
  std::vector<v1::AnalyzeChunk> chunks = Stream(Load("head.cls.json"));
  v1::AnalyzeChunk big;
  big.mutable_part()->set_side(v1::HEAD);
  big.mutable_part()->mutable_extra()->set_payload(std::string(2 << 20, 'x'));
  chunks.insert(chunks.begin() + 2, big);
  const grpc::Status s = SendRaw(chunks);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  ExpectStillServing();
}

TEST_F(ServerTest, WrongSchemaIsRefusedNamingTheVersions) {
  v1::SessionCapture c = Load("head.cls.json");
  c.set_schema("0.4.0");
  ExpectRefused(
      Stream(c),
      "part 0 (head header): schema: \"0.4.0\" is not supported; this build reads schema 0.5.x");
}

TEST_F(ServerTest, ACaptureNamingAMissingNodeIsRefused) {
  v1::SessionCapture c = Load("head.cls.json");
  v1::Graph* g = c.add_graphs();
  g->set_id("post_grad_0");
  g->set_compile_id("0/0");
  v1::Node* n = g->add_nodes();
  n->set_name("sub");
  n->set_op("call_function");
  n->set_target("aten.sub.Tensor");
  n->add_args()->set_node("mm_5");
  ExpectRefused(Stream(c),
                "head: graphs[12].nodes[0].args[0]: node \"mm_5\" is not defined before it in "
                "graph \"post_grad_0\"");
}

// Parts may come several to a message (PartBatch, what cl-client sends) or one per message, mixed
// in one stream; the end marker counts parts either way.
TEST_F(ServerTest, BatchedAndSinglePartsMixInOneStream) {
  std::vector<v1::AnalyzeChunk> single = Stream(Load("head.cls.json"));
  std::vector<v1::AnalyzeChunk> mixed = {single.front()};
  for (size_t i = 1; i + 1 < single.size(); ++i) {
    if (i % 3 == 0) {
      mixed.push_back(single[i]);
      continue;
    }
    if (!mixed.back().has_parts()) mixed.emplace_back();
    *mixed.back().mutable_parts()->add_parts() = single[i].part();
  }
  mixed.push_back(single.back());
  ASSERT_LT(mixed.size(), single.size());
  v1::AnalyzeResponse batched, one_by_one;
  ASSERT_TRUE(SendRaw(mixed, &batched).ok());
  ASSERT_TRUE(SendRaw(single, &one_by_one).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(batched.report(), one_by_one.report()));
  EXPECT_EQ(batched.report().recompile().total(), 3u);
}

TEST_F(ServerTest, AnEmptyBatchIsRefusedNamingTheMessage) {
  std::vector<v1::AnalyzeChunk> chunks = Stream(Load("head.cls.json"));
  chunks.insert(chunks.begin() + 3, v1::AnalyzeChunk());
  chunks[3].mutable_parts();
  ExpectRefused(chunks, "message 4 is an empty batch of parts");
}

TEST_F(ServerTest, ABadPartInsideABatchIsNamedByItsPartNumber) {
  std::vector<v1::AnalyzeChunk> chunks = Stream(Load("head.cls.json"));
  v1::AnalyzeChunk batch;
  *batch.mutable_parts()->add_parts() = chunks[2].part();
  v1::CapturePart* bad = batch.mutable_parts()->add_parts();
  bad->set_side(v1::HEAD);
  bad->mutable_node_batch()->set_graph_id("no_such_graph");
  chunks[2] = batch;
  ExpectRefused(
      chunks,
      "part 2 (head node_batch): node_batch.graph_id: graph \"no_such_graph\" was not announced");
}

// --lint_cache_files / --lint_cache_mib size the lint pass's cache of parsed files; 0 keeps none,
// and the report is the same either way.
TEST_F(ServerTest, TheLintCacheIsSizedByTheServerOptions) {
  AssembledCaptures hero{Load("head.cls.json"), std::nullopt};
  ASSERT_FALSE(hero.head.sources().empty());
  absl::StatusOr<v1::AnalyzeResponse> cached =
      AnalyzeRemote(hero, {}, Remote(server_->address(), absl::Seconds(30)));
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_GT(LintParseCache().stats().entries, 0u);

  ServerOptions options;
  options.lint_cache_files = 0;
  Start(options);
  EXPECT_EQ(LintParseCache().stats().entries, 0u);
  hero.head.mutable_session()->set_id("another call");  // not answered from the recent sessions
  absl::StatusOr<v1::AnalyzeResponse> uncached =
      AnalyzeRemote(hero, {}, Remote(server_->address(), absl::Seconds(30)));
  ASSERT_TRUE(uncached.ok()) << uncached.status();
  EXPECT_EQ(LintParseCache().stats().entries, 0u);
  EXPECT_TRUE(MessageDifferencer::Equals(cached->report().lint(), uncached->report().lint()));

  Start(ServerOptions{});  // the defaults again, for the tests after this one
  EXPECT_EQ(LintParseCache().stats().entries, 0u);
}

TEST_F(ServerTest, AConnectionAgeBeyondAnIntOfMillisecondsMeansNever) {
  ServerOptions options;
  options.max_connection_age =
      absl::Hours(1000);  // 3.6e9 ms: once wrapped negative, every call got GOAWAY
  Start(options);
  ExpectStillServing();
}

TEST_F(ServerTest, UnknownPassIsInvalidArgument) {
  AssembledCaptures hero{Load("head.cls.json"), std::nullopt};
  v1::AnalyzeOptions options;
  options.add_passes("no-such-pass");
  EXPECT_THAT(
      AnalyzeRemote(hero, options, Remote(server_->address(), absl::Seconds(30))),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown pass \"no-such-pass\"")));
}

TEST_F(ServerTest, DrainFinishesInFlightCallsAndRefusesNewOnes) {
  grpc::ClientContext context;
  v1::AnalyzeResponse response;
  auto writer = stub_->Analyze(&context, &response);
  std::vector<v1::AnalyzeChunk> chunks = Stream(Load("head.cls.json"));
  for (size_t i = 0; i + 1 < chunks.size(); ++i) ASSERT_TRUE(writer->Write(chunks[i]));
  while (server_->inflight() < 1) std::this_thread::yield();

  // Drain while the call is mid-upload; it still completes with its report.
  std::thread drain([this] { server_->Drain(absl::ZeroDuration(), absl::Seconds(20)); });
  ASSERT_TRUE(writer->Write(chunks.back()));
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  drain.join();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.report().recompile().total(), 3u);
  EXPECT_FALSE(CheckHealth(Remote(server_->address(), absl::Seconds(2)), "").ok());
}

}  // namespace
}  // namespace cl::testing

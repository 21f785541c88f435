// cl-server's service in-process on port 0, over real gRPC on loopback: valid sessions, every kind
// of bad stream, and limits. After each bad call the server must still be healthy and serve the
// next valid request correctly.
#include "service/server/server.h"

#include <memory>
#include <string>
#include <thread>

#include "analyzers/lint/lint.h"
#include "capture/capture_io.h"
#include "capture/schema.h"
#include "capture/stream/capture_splitter.h"
#include "client/analyze_client.h"
#include "common/file_io.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/service/held_call.h"
#include "tests/service/metrics_reader.h"
#include "tests/testing/captures.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

RemoteOptions Remote(const std::string& target, absl::Duration deadline) {
  RemoteOptions remote;
  remote.target = target;
  remote.deadline = deadline;
  return remote;
}

using ::cl::testing::IsOk;
using ::cl::testing::StatusIs;
using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

v1::SessionCapture Load(const char* name) { return ::cl::testing::LoadHero(name); }

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(ServerOptions{}); }

  void Start(ServerOptions options) {
    server_.reset();
    options.listen = "127.0.0.1:0";
    options.analysis_threads = 2;
    absl::StatusOr<std::unique_ptr<AnalysisServer>> s = AnalysisServer::Start(options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    stub_ = v1::CompileLens::NewStub(
        grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  }

  // Sends `chunks` as they are (no end marker unless one is among them) and returns the status.
  grpc::Status SendRaw(const std::vector<v1::AnalyzeChunk>& chunks, v1::AnalyzeResponse* response = nullptr) {
    v1::AnalyzeResponse ignored;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto writer = stub_->Analyze(&context, response ? response : &ignored);
    for (const v1::AnalyzeChunk& c : chunks) {
      if (!writer->Write(c)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }

  // The stream for `capture`: options, parts, and (when `end`) the end marker.
  static std::vector<v1::AnalyzeChunk> Stream(const v1::SessionCapture& capture, bool end = true) {
    std::vector<v1::AnalyzeChunk> chunks(1);
    chunks[0].mutable_options()->set_render_html(true);
    uint64_t parts = 0;
    absl::Status s = SplitCapture(capture, v1::HEAD, kDefaultPartBudget, [&](v1::CapturePart&& p) {
      *chunks.emplace_back().mutable_part() = std::move(p);
      ++parts;
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok());
    if (end) chunks.emplace_back().mutable_end()->set_parts(parts);
    return chunks;
  }

  // The server is healthy and analyzes the hero session correctly.
  void ExpectStillServing() {
    EXPECT_THAT(CheckHealth(Remote(server_->address(), absl::Seconds(10)), ""), IsOk());
    AssembledCaptures hero{Load("head.cls.json"), std::nullopt};
    absl::StatusOr<v1::AnalyzeResponse> r = AnalyzeRemote(hero, {}, Remote(server_->address(), absl::Seconds(30)));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->report().recompile().total(), 3u);
  }

  // `chunks` are refused with INVALID_ARGUMENT saying `what`, and the server serves on.
  void ExpectRefused(const std::vector<v1::AnalyzeChunk>& chunks, const std::string& what) {
    const grpc::Status s = SendRaw(chunks);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(what));
    ExpectStillServing();
  }

  std::unique_ptr<AnalysisServer> server_;
  std::unique_ptr<v1::CompileLens::Stub> stub_;
};

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
  ExpectRefused(Stream(c), "part 0 (head header): schema: \"0.4.0\" is not supported; this build reads schema 0.5.x");
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
  ExpectRefused(Stream(c), "head: graphs[12].nodes[0].args[0]: node \"mm_5\" is not defined before it in graph \"post_grad_0\"");
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
  ExpectRefused(chunks, "part 2 (head node_batch): node_batch.graph_id: graph \"no_such_graph\" was not announced");
}

// An Analyze call through the generic API: its messages are whatever bytes the test writes.
class RawCall {
 public:
  explicit RawCall(const std::string& address)
      : generic_(grpc::CreateChannel(address, grpc::InsecureChannelCredentials())) {
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    call_ = generic_.PrepareCall(&context_, "/compile_lens.v1.CompileLens/Analyze", &cq_);
    call_->StartCall(this);
    Wait();
  }
  ~RawCall() {
    cq_.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) {}
  }

  bool Write(const std::string& bytes) {
    grpc::Slice slice(bytes);
    grpc::ByteBuffer buffer(&slice, 1);
    call_->Write(buffer, this);
    return Wait();
  }
  void WritesDone() {
    call_->WritesDone(this);
    Wait();
  }
  // The status the server ended the call with (DEADLINE_EXCEEDED if it never did).
  grpc::Status Finish() {
    grpc::Status status;
    call_->Finish(&status, this);
    Wait();
    return status;
  }

 private:
  bool Wait() {
    void* tag = nullptr;
    bool ok = false;
    return cq_.Next(&tag, &ok) && ok;
  }

  grpc::GenericStub generic_;
  grpc::ClientContext context_;
  grpc::CompletionQueue cq_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
};

TEST_F(ServerTest, GarbageBytesOnTheWire) {
  // A message that is not an AnalyzeChunk at all.
  RawCall call(server_->address());
  call.Write("\xff\xff\xff\xff\x0f garbage");
  call.WritesDone();
  const grpc::Status status = call.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("message 1 is not an AnalyzeChunk"));
  ExpectStillServing();
}

TEST_F(ServerTest, ABrokenFrameIsRefusedWhileTheStreamIsStillOpen) {
  // The server parses parts only after the end marker, but tells a message's kind from its tags on
  // arrival: a batch whose length runs past the message is refused at once, with the client's
  // stream still open (waiting for the end would run into the call's 10-s deadline).
  RawCall call(server_->address());
  v1::AnalyzeChunk options;
  options.mutable_options();
  ASSERT_TRUE(call.Write(options.SerializeAsString()));
  call.Write(std::string("\x22\x05\x0a", 3));
  const grpc::Status status = call.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("message 2 is not an AnalyzeChunk"));
  ExpectStillServing();
}

TEST_F(ServerTest, AMessageBrokenInsideIsNamedOnceTheStreamEnds) {
  // Framed well, but a string in it is not UTF-8: the analysis task's parse refuses it, naming the
  // message, after the end marker.
  std::vector<v1::AnalyzeChunk> chunks = Stream(Load("head.cls.json"));
  RawCall call(server_->address());
  for (size_t i = 0; i < chunks.size(); ++i) {
    std::string bytes = chunks[i].SerializeAsString();
    if (i == 2) {
      v1::AnalyzeChunk bad;
      bad.mutable_part()->set_side(v1::HEAD);
      bad.mutable_part()->mutable_frame()->set_name("forward");
      bytes = bad.SerializeAsString();
      bytes.replace(bytes.find("forward"), 1, "\xff");
    }
    ASSERT_TRUE(call.Write(bytes)) << "message " << i + 1;
  }
  call.WritesDone();
  const grpc::Status status = call.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("message 3 is not an AnalyzeChunk: part.frame.name (byte "));
  EXPECT_THAT(status.error_message(), HasSubstr("): not UTF-8"));
  ExpectStillServing();
}

TEST_F(ServerTest, ALogThatDoesNotReadIsReportedAsSuchNotAsACutShortStream) {
  // A gzip header, then a deflate block of the reserved type: zlib fails on the raw upload. The
  // call is cancelled and the client says why, rather than passing on the server's "no end marker".
  const std::string path = ::testing::TempDir() + "/not-really.log.gz";
  ASSERT_THAT(WriteFile(path, std::string("\x1f\x8b\x08\x00\0\0\0\0\0\x03", 10) + std::string(64, '\xff')), IsOk());
  v1::CaptureHeader header;
  header.set_schema(SchemaVersion());
  absl::StatusOr<v1::AnalyzeResponse> r =
      AnalyzeRemoteTrace(path, header, {}, Remote(server_->address(), absl::Seconds(30)));
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kDataLoss, HasSubstr(path)));
  EXPECT_THAT(r.status().message(), ::testing::Not(HasSubstr("end marker")));
  ExpectStillServing();
}

TEST_F(ServerTest, SessionByteLimit) {
  ServerOptions options;
  options.max_session_bytes = 4096;
  Start(options);
  AssembledCaptures hero{Load("head.cls.json"), std::nullopt};
  EXPECT_THAT(AnalyzeRemote(hero, {}, Remote(server_->address(), absl::Seconds(30))),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("max_session_bytes")));
}

// The limit counts the part-carrying messages' bytes as they came off the wire, and what keeping
// each costs (AnalyzeReactor::kKeptMessageCost): exactly that is enough, one byte less is refused
// at the message that crosses it.
TEST_F(ServerTest, SessionByteLimitCountsTheMessagesOnTheWire) {
  const std::vector<v1::AnalyzeChunk> chunks = Stream(Load("head.cls.json"));
  uint64_t part_bytes = 0, parts = 0;
  for (const v1::AnalyzeChunk& c : chunks) {
    if (c.has_part()) part_bytes += c.ByteSizeLong(), ++parts;
  }
  const uint64_t held = part_bytes + parts * AnalyzeReactor::kKeptMessageCost;
  ServerOptions options;
  options.max_session_bytes = held;
  Start(options);
  v1::AnalyzeResponse response;
  ASSERT_TRUE(SendRaw(chunks, &response).ok());
  EXPECT_EQ(response.report().recompile().total(), 3u);

  options.max_session_bytes = held - 1;
  Start(options);
  const grpc::Status s = SendRaw(chunks);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(),
              HasSubstr(absl::StrCat("message ", chunks.size() - 1, ": ", parts, " part-carrying messages hold ", held,
                                     " bytes with their buffers")));
  EXPECT_THAT(CheckHealth(Remote(server_->address(), absl::Seconds(10)), ""), IsOk());
}

// Messages of next to nothing (an empty part is 2 bytes) each count what keeping them costs, so a
// stream of them is refused long before it holds many times the limit in buffers.
TEST_F(ServerTest, TinyMessagesCountTheBuffersThatHoldThem) {
  ServerOptions options;
  options.max_session_bytes = 64 << 10;
  Start(options);
  RawCall call(server_->address());
  v1::AnalyzeChunk first;
  first.mutable_options();
  ASSERT_TRUE(call.Write(first.SerializeAsString()));
  const std::string empty_part("\x12\x00", 2);
  for (int i = 0; i < 1000 && call.Write(empty_part); ++i) {}
  call.WritesDone();
  const grpc::Status status = call.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  // 128 × (2 + 512) = 65,792 is the first count past 65,536.
  EXPECT_THAT(status.error_message(), HasSubstr("message 129: 128 part-carrying messages hold 65792 bytes"));
  EXPECT_THAT(CheckHealth(Remote(server_->address(), absl::Seconds(10)), ""), IsOk());
}

// An upload that does not end within upload_timeout is ended, DEADLINE_EXCEEDED, and its
// max_inflight slot is free again: here a client that trickles a message at a time never finishes.
TEST_F(ServerTest, AnUploadPastItsTimeoutEndsAndGivesItsSlotBack) {
  ServerOptions options;
  options.max_inflight = 1;
  options.upload_timeout = absl::Milliseconds(400);
  Start(options);
  const std::vector<v1::AnalyzeChunk> chunks = Stream(Load("head.cls.json"), /*end=*/false);
  RawCall call(server_->address());
  int written = 0;
  for (const v1::AnalyzeChunk& c : chunks) {
    if (!call.Write(c.SerializeAsString())) break;
    ++written;
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_LT(written, static_cast<int>(chunks.size()));  // the server ended the call mid-upload
  const grpc::Status status = call.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("the capture did not arrive within 400ms (upload_timeout)"));
  EXPECT_THAT(::cl::testing::MetricsReader(server_->metrics().Collect())
                  .Get("compile_lens_analysis_rejected_total", {{"reason", "upload_timeout"}}),
              ::testing::Optional(1.0));
  while (server_->inflight() > 0) std::this_thread::yield();
  ExpectStillServing();  // within the timeout, the one slot serves
}

TEST(ServerStartTest, LimitsThatWouldRefuseEveryCallStopTheStart) {
  const auto start = [](auto change) {
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    change(options);
    return AnalysisServer::Start(options).status();
  };
  EXPECT_THAT(start([](ServerOptions& o) { o.analysis_queue = 0; }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--analysis_queue=0: must be at least 1")));
  EXPECT_THAT(start([](ServerOptions& o) { o.max_inflight = -3; }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--max_inflight=-3: must be at least 1")));
  EXPECT_THAT(start([](ServerOptions& o) { o.max_message_bytes = 0; }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--max_message_bytes=0")));
  EXPECT_THAT(start([](ServerOptions& o) { o.max_session_bytes = 0; }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--max_session_bytes=0")));
  EXPECT_THAT(start([](ServerOptions& o) { o.upload_timeout = absl::ZeroDuration(); }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--upload_timeout=0: must be above zero")));
  EXPECT_THAT(start([](ServerOptions& o) { o.analysis_queue = 1; }), IsOk());
}

TEST_F(ServerTest, InflightLimitShedsLoad) {
  ServerOptions options;
  options.max_inflight = 1;
  Start(options);
  // Hold one call open (options sent, no end yet), then a second call is refused at once.
  std::unique_ptr<::cl::testing::HeldCall> held = ::cl::testing::HoldCallOpen(*stub_, *server_);
  ASSERT_NE(held, nullptr);

  AssembledCaptures hero{Load("head.cls.json"), std::nullopt};
  EXPECT_THAT(AnalyzeRemote(hero, {}, Remote(server_->address(), absl::Seconds(30))),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("too many sessions in flight")));
  EXPECT_EQ(held->End(), grpc::StatusCode::INVALID_ARGUMENT);
  while (server_->inflight() > 0) std::this_thread::yield();
  ExpectStillServing();
}

// A stand-in for a server that refuses: response headers at once without the `cl-admitted` mark,
// then it reads the stream to its end and refuses it, saying how many messages had arrived.
class RefusingReactor : public grpc::ServerGenericBidiReactor {
 public:
  RefusingReactor() {
    StartSendInitialMetadata();
    StartRead(&in_);
  }
  void OnReadDone(bool ok) override {
    if (ok) {
      ++messages_;
      StartRead(&in_);
      return;
    }
    Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, absl::StrCat("refused after ", messages_, " messages")));
  }
  void OnDone() override { delete this; }

 private:
  grpc::ByteBuffer in_;
  int messages_ = 0;
};

class RefusingService : public grpc::CallbackGenericService {
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
    return new RefusingReactor();
  }
};

// cl-client waits for the admission headers after the options: refused, it sends nothing more.
TEST(ClientAdmissionTest, ARefusedCallSendsOnlyTheOptions) {
  RefusingService service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  AssembledCaptures hero{Load("head.cls.json"), std::nullopt};
  EXPECT_THAT(AnalyzeRemote(hero, {}, Remote(absl::StrCat("127.0.0.1:", port), absl::Seconds(30))),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("refused after 1 messages")));
  server->Shutdown();
}

// --lint_cache_files / --lint_cache_mib size the lint pass's cache of parsed files; 0 keeps none,
// and the report is the same either way.
TEST_F(ServerTest, TheLintCacheIsSizedByTheServerOptions) {
  AssembledCaptures hero{Load("head.cls.json"), std::nullopt};
  ASSERT_FALSE(hero.head.sources().empty());
  absl::StatusOr<v1::AnalyzeResponse> cached = AnalyzeRemote(hero, {}, Remote(server_->address(), absl::Seconds(30)));
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_GT(LintParseCache().stats().entries, 0u);

  ServerOptions options;
  options.lint_cache_files = 0;
  Start(options);
  EXPECT_EQ(LintParseCache().stats().entries, 0u);
  hero.head.mutable_session()->set_id("another call");  // not answered from the recent sessions
  absl::StatusOr<v1::AnalyzeResponse> uncached = AnalyzeRemote(hero, {}, Remote(server_->address(), absl::Seconds(30)));
  ASSERT_TRUE(uncached.ok()) << uncached.status();
  EXPECT_EQ(LintParseCache().stats().entries, 0u);
  EXPECT_TRUE(MessageDifferencer::Equals(cached->report().lint(), uncached->report().lint()));

  Start(ServerOptions{});  // the defaults again, for the tests after this one
  EXPECT_EQ(LintParseCache().stats().entries, 0u);
}

TEST_F(ServerTest, AConnectionAgeBeyondAnIntOfMillisecondsMeansNever) {
  ServerOptions options;
  options.max_connection_age = absl::Hours(1000);  // 3.6e9 ms: once wrapped negative, every call got GOAWAY
  Start(options);
  ExpectStillServing();
}

TEST_F(ServerTest, UnknownPassIsInvalidArgument) {
  AssembledCaptures hero{Load("head.cls.json"), std::nullopt};
  v1::AnalyzeOptions options;
  options.add_passes("no-such-pass");
  EXPECT_THAT(AnalyzeRemote(hero, options, Remote(server_->address(), absl::Seconds(30))),
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
}  // namespace cl

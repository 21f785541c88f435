// cl-server's limits and admission: the session byte limit as counted off the wire, the upload
// timeout, the limits that would refuse every call, max_inflight, and a client that sends nothing
// past the options when it is refused.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/analyze_client.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "gtest/gtest.h"
#include "service/server/server.h"
#include "tests/service/held_call.h"
#include "tests/service/metrics_reader.h"
#include "tests/service/server_test_fixture.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace cl::testing {
namespace {

using ::testing::HasSubstr;

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
  EXPECT_THAT(s.error_message(), HasSubstr(absl::StrCat("message ", chunks.size() - 1, ": ", parts,
                                                        " part-carrying messages hold ", held,
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
  for (int i = 0; i < 1000 && call.Write(empty_part); ++i) {
  }
  call.WritesDone();
  const grpc::Status status = call.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  // 128 × (2 + 512) = 65,792 is the first count past 65,536.
  EXPECT_THAT(status.error_message(),
              HasSubstr("message 129: 128 part-carrying messages hold 65792 bytes"));
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
  EXPECT_THAT(status.error_message(),
              HasSubstr("the capture did not arrive within 400ms (upload_timeout)"));
  EXPECT_THAT(MetricsReader(server_->metrics().Collect())
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
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--analysis_queue=0: must be at least 1")));
  EXPECT_THAT(start([](ServerOptions& o) { o.max_inflight = -3; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--max_inflight=-3: must be at least 1")));
  EXPECT_THAT(start([](ServerOptions& o) { o.max_message_bytes = 0; }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--max_message_bytes=0")));
  EXPECT_THAT(start([](ServerOptions& o) { o.receive_window_bytes = -1; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--receive_window_bytes=-1: must be 0 (gRPC sizes it) or more")));
  EXPECT_THAT(start([](ServerOptions& o) { o.max_session_bytes = 0; }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--max_session_bytes=0")));
  EXPECT_THAT(start([](ServerOptions& o) { o.upload_timeout = absl::ZeroDuration(); }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--upload_timeout=0: must be above zero")));
  EXPECT_THAT(start([](ServerOptions& o) { o.idle_timeout = -absl::Seconds(1); }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--idle_timeout=-1s: must be above zero")));
  EXPECT_THAT(start([](ServerOptions& o) { o.analysis_queue = 1; }), IsOk());
}

TEST_F(ServerTest, InflightLimitShedsLoad) {
  ServerOptions options;
  options.max_inflight = 1;
  Start(options);
  // Hold one call open (options sent, no end yet), then a second call is refused at once.
  std::unique_ptr<HeldCall> held = HoldCallOpen(*stub_, *server_);
  ASSERT_NE(held, nullptr);

  AssembledCaptures hero{Load("head.cls.json"), std::nullopt};
  EXPECT_THAT(
      AnalyzeRemote(hero, {}, Remote(server_->address(), absl::Seconds(30))),
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
    Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        absl::StrCat("refused after ", messages_, " messages")));
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

// A stand-in server on a loopback port serving `service`; `*address` gets its HOST:PORT.
std::unique_ptr<grpc::Server> StartStandIn(grpc::CallbackGenericService* service,
                                           std::string* address) {
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  *address = absl::StrCat("127.0.0.1:", port);
  return server;
}

// cl-client waits for the admission headers after the options: refused, it sends nothing more.
TEST(ClientAdmissionTest, ARefusedCallSendsOnlyTheOptions) {
  RefusingService service;
  std::string address;
  std::unique_ptr<grpc::Server> server = StartStandIn(&service, &address);
  ASSERT_NE(server, nullptr);
  AssembledCaptures hero{Load("head.cls.json"), std::nullopt};
  EXPECT_THAT(
      AnalyzeRemote(hero, {}, Remote(address, absl::Seconds(30))),
      StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("refused after 1 messages")));
  server->Shutdown();
}

// A stand-in for a cl-server from before offered sources: it admits the call without saying it
// takes them, reads the stream, and refuses it as such a server did if a source file follows the
// raw bytes; otherwise it answers with an empty response.
class OlderServerReactor : public grpc::ServerGenericBidiReactor {
 public:
  explicit OlderServerReactor(int* source_parts) : source_parts_(*source_parts) {
    StartSendInitialMetadata();
    StartRead(&in_);
  }
  void OnReadDone(bool ok) override {
    if (ok) {
      v1::AnalyzeChunk chunk;
      grpc::ProtoBufferReader reader(&in_);
      if (chunk.ParseFromZeroCopyStream(&reader)) {
        for (const v1::CapturePart& p : chunk.parts().parts())
          source_parts_ += p.has_source_chunk();
        source_parts_ += chunk.part().has_source_chunk();
      }
      StartRead(&in_);
      return;
    }
    if (source_parts_ > 0) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "a side carries typed parts or raw TORCH_TRACE bytes, not both"));
      return;
    }
    grpc::Slice empty(v1::AnalyzeResponse().SerializeAsString());
    out_ = grpc::ByteBuffer(&empty, 1);
    StartWriteAndFinish(&out_, grpc::WriteOptions(), grpc::Status::OK);
  }
  void OnDone() override { delete this; }

 private:
  int& source_parts_;
  grpc::ByteBuffer in_, out_;
};

class OlderServerService : public grpc::CallbackGenericService {
 public:
  int source_parts = 0;

 private:
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    context->AddInitialMetadata("cl-admitted", "1");
    return new OlderServerReactor(&source_parts);
  }
};

// A raw log with its sources to a server that does not say it takes them: the log goes alone, and
// the upload is answered rather than refused.
TEST(ClientAdmissionTest, AnOlderServerGetsTheLogWithoutTheSources) {
  OlderServerService service;
  std::string address;
  std::unique_ptr<grpc::Server> server = StartStandIn(&service, &address);
  ASSERT_NE(server, nullptr);
  ImportOptions import;
  import.path_map = {{ "/mnt/project", FixturePath("torch_trace/torch-2.6/scenes") }};
  v1::CaptureHeader header;
  header.set_post_grad_nodes_only(true);
  EXPECT_THAT(AnalyzeRemoteTrace(FixturePath("torch_trace/torch-2.6/specialize/trace.log.gz"),
                                 header, {}, Remote(address, absl::Seconds(30)), &import),
              IsOk());
  EXPECT_EQ(service.source_parts, 0);
  server->Shutdown();
}

}  // namespace
}  // namespace cl::testing

// The metrics of a real cl-server on port 0: the RPC metrics the interceptor records for served,
// refused and health calls, what the reactor records per call, and the /metrics endpoint.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "capture/schema.h"
#include "capture/stream/capture_splitter.h"
#include "client/analyze_client.h"
#include "common/file_io.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "service/server/server.h"
#include "tests/service/held_call.h"
#include "tests/service/metrics_reader.h"
#include "tests/testing/binaries.h"
#include "tests/testing/captures.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

using ::cl::testing::IsOk;
using ::cl::testing::MetricsReader;
using ::testing::HasSubstr;
using ::testing::Optional;

const std::map<std::string, std::string> kAnalyze = {
    {"grpc_type", "client_stream"},
    {"grpc_service", "compile_lens.v1.CompileLens"},
    {"grpc_method", "Analyze"}};
const std::map<std::string, std::string> kCheck = {
    {"grpc_type", "unary"}, {"grpc_service", "grpc.health.v1.Health"}, {"grpc_method", "Check"}};

std::map<std::string, std::string> WithCode(std::map<std::string, std::string> labels,
                                            const char* code) {
  labels["grpc_code"] = code;
  return labels;
}

RemoteOptions Remote(const std::string& target) {
  RemoteOptions remote;
  remote.target = target;
  remote.deadline = absl::Seconds(10);
  return remote;
}

// GET http://address/path over a plain socket; the body, or "" when the request fails.
std::string HttpGet(const std::string& address, const std::string& path) {
  const std::vector<std::string> host_port = absl::StrSplit(address, ':');
  int port = 0;
  if (host_port.size() != 2 || !absl::SimpleAtoi(host_port[1], &port)) return "";
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host_port[0].c_str(), &addr.sin_addr);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request =
        absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: ", address, "\r\n\r\n");
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;)
        response.append(buffer, static_cast<size_t>(n));
    }
  }
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

class ServerMetricsTest : public ::testing::Test {
 protected:
  void Start(ServerOptions options) {
    options.listen = "127.0.0.1:0";
    options.analysis_threads = 2;
    absl::StatusOr<std::unique_ptr<AnalysisServer>> s = AnalysisServer::Start(options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    stub_ = v1::CompileLens::NewStub(
        grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  }

  grpc::Status Send(const std::vector<v1::AnalyzeChunk>& chunks) {
    v1::AnalyzeResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto writer = stub_->Analyze(&context, &response);
    for (const v1::AnalyzeChunk& c : chunks) {
      if (!writer->Write(c)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }

  static std::vector<v1::AnalyzeChunk> Stream(const v1::SessionCapture& capture) {
    std::vector<v1::AnalyzeChunk> chunks(1);
    chunks[0].mutable_options();
    uint64_t parts = 0;
    EXPECT_TRUE(SplitCapture(capture, v1::HEAD, kDefaultPartBudget, [&](v1::CapturePart&& p) {
                  *chunks.emplace_back().mutable_part() = std::move(p);
                  ++parts;
                  return absl::OkStatus();
                }).ok());
    chunks.emplace_back().mutable_end()->set_parts(parts);
    return chunks;
  }

  // The handled count of every call that has started, once they are all done (the interceptor
  // records handled as the status goes out; the client can see it first).
  // The metrics once every call has finished counting: a call is counted handled as its status
  // goes out, but its response as counted sent, and its session as out of flight, only after.
  MetricsReader Settled() {
    const absl::Time give_up = absl::Now() + absl::Seconds(20);
    for (;;) {
      MetricsReader m(server_->metrics().Collect());
      const double ok = m.Sum("grpc_server_handled_total", {{"grpc_code", "OK"}});
      if ((m.Sum("grpc_server_handled_total") == m.Sum("grpc_server_started_total") &&
           m.Sum("grpc_server_msg_sent_total") == ok &&
           m.Get("compile_lens_sessions_inflight").value_or(0) == 0) ||
          absl::Now() > give_up) {
        return m;
      }
      std::this_thread::yield();
    }
  }

  std::unique_ptr<AnalysisServer> server_;
  std::unique_ptr<v1::CompileLens::Stub> stub_;
};

TEST_F(ServerMetricsTest, EveryCallIsCountedWithTheCodeItEndedWith) {
  v1::SessionCapture hero = ::cl::testing::LoadHero("head.cls.json");
  (*hero.mutable_session()->mutable_labels())["cluster"] = "ci";
  (*hero.mutable_session()->mutable_labels())["model"] = "hero";
  // A session over the byte limit: the hero with a 1 MiB source file.
  v1::SessionCapture big = hero;
  v1::SourceFile* padding = big.add_sources();
  padding->set_path("padding.py");
  padding->set_text(std::string(1 << 20, '#'));
  ServerOptions options;
  options.max_session_bytes = hero.ByteSizeLong() + (512 << 10);
  Start(options);

  // Too large: RESOURCE_EXHAUSTED from the assembler's byte count.
  EXPECT_EQ(Send(Stream(big)).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  std::vector<v1::AnalyzeChunk> chunks = Stream(hero);
  const size_t messages = chunks.size();
  EXPECT_EQ(Send(chunks).error_code(), grpc::StatusCode::OK);
  // Options not first, and no end marker: INVALID_ARGUMENT twice.
  std::vector<v1::AnalyzeChunk> no_options(chunks.begin() + 1, chunks.end());
  EXPECT_EQ(Send(no_options).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  std::vector<v1::AnalyzeChunk> no_end(chunks.begin(), chunks.end() - 1);
  EXPECT_EQ(Send(no_end).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(CheckHealth(Remote(server_->address()), ""), IsOk());

  MetricsReader m = Settled();
  EXPECT_THAT(m.Get("grpc_server_started_total", kAnalyze), Optional(4.0));
  EXPECT_THAT(m.Get("grpc_server_handled_total", WithCode(kAnalyze, "OK")), Optional(1.0));
  EXPECT_THAT(m.Get("grpc_server_handled_total", WithCode(kAnalyze, "InvalidArgument")),
              Optional(2.0));
  EXPECT_THAT(m.Get("grpc_server_handled_total", WithCode(kAnalyze, "ResourceExhausted")),
              Optional(1.0));
  EXPECT_THAT(m.Get("grpc_server_handling_seconds", kAnalyze), Optional(4.0));
  EXPECT_THAT(m.Get("grpc_server_msg_sent_total", kAnalyze), Optional(1.0));  // one response
  EXPECT_THAT(m.Get("grpc_server_handled_total", WithCode(kCheck, "OK")), Optional(1.0));
  EXPECT_THAT(m.Get("grpc_server_msg_received_total", kCheck), Optional(1.0));
  // The analyzed call's messages, plus those the refused calls got in before their refusal.
  EXPECT_GE(m.Get("grpc_server_msg_received_total", kAnalyze).value_or(0),
            static_cast<double>(messages));

  EXPECT_THAT(m.Get("compile_lens_analysis_rejected_total", {{"reason", "too_large"}}),
              Optional(1.0));
  EXPECT_THAT(m.Get("compile_lens_analysis_rejected_total", {{"reason", "invalid"}}),
              Optional(2.0));
  EXPECT_THAT(m.Get("compile_lens_capture_bytes"), Optional(1.0));
  EXPECT_THAT(m.Get("compile_lens_sessions_analyzed_total",
                    {{"cluster", "ci"}, {"model", "hero"}, {"outcome", "ok"}}),
              Optional(1.0));
  EXPECT_THAT(m.Get("compile_lens_recompiles_total",
                    {{"cluster", "ci"}, {"model", "hero"}, {"category", "size"}}),
              Optional(3.0));
  EXPECT_THAT(m.Get("compile_lens_sessions_inflight"), Optional(0.0));
}

// A raw log that is not a TORCH_TRACE log (empty, text, random bytes) is refused as the client's
// bad input, INVALID_ARGUMENT naming the file, and counted so: never analyzed as an empty session.
TEST_F(ServerMetricsTest, ARawLogThatIsNotATraceIsInvalidArgument) {
  Start(ServerOptions());
  std::string text;
  for (int i = 0; i < 200; ++i) absl::StrAppend(&text, "epoch ", i, " loss 0.1\n");
  const std::vector<std::pair<std::string, std::string>> files = {
      {"empty.log", ""}, {"notes.log", "hello\n"}, {"stdout.log", text}};
  for (const auto& [name, bytes] : files) {
    const std::string path = ::cl::testing::TmpPath(name);
    ASSERT_THAT(WriteFile(path, bytes), IsOk());
    v1::CaptureHeader header;
    header.set_schema(SchemaVersion());
    header.set_source_name(name);
    absl::StatusOr<v1::AnalyzeResponse> r =
        AnalyzeRemoteTrace(path, header, {}, Remote(server_->address()));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(r.status().message(), HasSubstr(name + ": ")) << name;
    EXPECT_THAT(r.status().message(), HasSubstr("not a TORCH_TRACE log")) << name;
  }
  MetricsReader m = Settled();
  EXPECT_THAT(m.Get("grpc_server_handled_total", WithCode(kAnalyze, "InvalidArgument")),
              Optional(3.0));
  EXPECT_THAT(m.Get("grpc_server_handled_total", WithCode(kAnalyze, "OK")).value_or(0), 0.0);
  EXPECT_THAT(m.Get("compile_lens_analysis_rejected_total", {{"reason", "invalid"}}),
              Optional(3.0));
}

TEST_F(ServerMetricsTest, CallsRefusedForLoadAreCounted) {
  ServerOptions options;
  options.max_inflight = 1;
  Start(options);
  std::unique_ptr<::cl::testing::HeldCall> held = ::cl::testing::HoldCallOpen(*stub_, *server_);
  ASSERT_NE(held, nullptr);
  EXPECT_THAT(MetricsReader(server_->metrics().Collect()).Get("compile_lens_sessions_inflight"),
              Optional(1.0));

  EXPECT_EQ(Send(Stream(::cl::testing::LoadHero("head.cls.json"))).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(held->End(), grpc::StatusCode::INVALID_ARGUMENT);

  MetricsReader m = Settled();
  EXPECT_THAT(m.Get("grpc_server_handled_total", WithCode(kAnalyze, "ResourceExhausted")),
              Optional(1.0));
  EXPECT_THAT(m.Get("grpc_server_handled_total", WithCode(kAnalyze, "InvalidArgument")),
              Optional(1.0));
  EXPECT_THAT(m.Get("compile_lens_analysis_rejected_total", {{"reason", "max_inflight"}}),
              Optional(1.0));
  EXPECT_THAT(m.Get("compile_lens_sessions_inflight_limit"), Optional(1.0));
}

TEST_F(ServerMetricsTest, ACallPastItsDeadlineIsDeadlineExceeded) {
  Start(ServerOptions{});
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    v1::AnalyzeResponse response;
    auto writer = stub_->Analyze(&context, &response);
    v1::AnalyzeChunk options_chunk;
    options_chunk.mutable_options();
    writer->Write(options_chunk);  // then nothing until the deadline passes
    EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  MetricsReader m = Settled();
  EXPECT_THAT(m.Get("grpc_server_handled_total", WithCode(kAnalyze, "DeadlineExceeded")),
              Optional(1.0));
  EXPECT_THAT(m.Get("grpc_server_handled_total", WithCode(kAnalyze, "Canceled")), Optional(0.0));
}

TEST_F(ServerMetricsTest, ServesTheTextFormatOnItsOwnPort) {
  ServerOptions options;
  options.metrics_listen = "127.0.0.1:0";
  Start(options);
  ASSERT_THAT(server_->metrics_address(), HasSubstr("127.0.0.1:"));
  EXPECT_NE(server_->metrics_address(), "127.0.0.1:0");
  EXPECT_THAT(CheckHealth(Remote(server_->address()), ""), IsOk());
  Settled();
  const std::string text = HttpGet(server_->metrics_address(), "/metrics");
  EXPECT_THAT(text, HasSubstr("# TYPE grpc_server_handled_total counter"));
  EXPECT_THAT(text, HasSubstr("grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Check\","
                              "grpc_service=\"grpc.health.v1.Health\",grpc_type=\"unary\"} 1"));
  EXPECT_THAT(text, HasSubstr("# TYPE compile_lens_analysis_pass_duration_seconds histogram"));
}

TEST_F(ServerMetricsTest, RefusesABadMetricsSetup) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.metrics.fleet_labels = {"cluster", "session_id"};
  EXPECT_THAT(AnalysisServer::Start(options).status(),
              ::cl::testing::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("session_id")));
  options.metrics.fleet_labels = {"cluster"};
  options.metrics_listen = "not an address";
  EXPECT_THAT(
      AnalysisServer::Start(options).status(),
      ::cl::testing::StatusIs(absl::StatusCode::kUnavailable, HasSubstr("cannot serve metrics")));
}

}  // namespace
}  // namespace cl

// What the tests of cl-server's service share (server_test.cc, server_wire_test.cc,
// server_limits_test.cc, one binary): a server in-process on port 0, the calls that reach it as
// typed chunks or as raw bytes, and the check that it still serves after a bad call.
#ifndef TESTS_SERVICE_SERVER_TEST_FIXTURE_H_
#define TESTS_SERVICE_SERVER_TEST_FIXTURE_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "capture/stream/capture_splitter.h"
#include "client/analyze_client.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "service/server/server.h"
#include "tests/testing/captures.h"
#include "tests/testing/raw_call.h"
#include "tests/testing/status_matchers.h"

namespace cl::testing {

namespace v1 = ::compile_lens::v1;

inline RemoteOptions Remote(const std::string& target, absl::Duration deadline) {
  RemoteOptions remote;
  remote.target = target;
  remote.deadline = deadline;
  return remote;
}

inline v1::SessionCapture Load(const char* name) { return LoadHero(name); }

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
  grpc::Status SendRaw(const std::vector<v1::AnalyzeChunk>& chunks,
                       v1::AnalyzeResponse* response = nullptr) {
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
    absl::StatusOr<v1::AnalyzeResponse> r =
        AnalyzeRemote(hero, {}, Remote(server_->address(), absl::Seconds(30)));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->report().recompile().total(), 3u);
  }

  // `chunks` are refused with INVALID_ARGUMENT saying `what`, and the server serves on.
  void ExpectRefused(const std::vector<v1::AnalyzeChunk>& chunks, const std::string& what) {
    const grpc::Status s = SendRaw(chunks);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_THAT(s.error_message(), ::testing::HasSubstr(what));
    ExpectStillServing();
  }

  std::unique_ptr<AnalysisServer> server_;
  std::unique_ptr<v1::CompileLens::Stub> stub_;
};

}  // namespace cl::testing

#endif  // TESTS_SERVICE_SERVER_TEST_FIXTURE_H_

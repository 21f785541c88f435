// cl-server's service given bytes that are not what a client sends: messages that are not
// AnalyzeChunks at all, framing broken on arrival, a string that is not UTF-8 inside a message that
// frames well, a raw log that does not decompress. Each is refused naming the message, and the
// server serves on.
#include <string>
#include <vector>

#include "capture/schema.h"
#include "client/analyze_client.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/server_test_fixture.h"
#include "tests/testing/status_matchers.h"

namespace cl::testing {
namespace {

using ::testing::HasSubstr;

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
  EXPECT_THAT(status.error_message(),
              HasSubstr("message 3 is not an AnalyzeChunk: part.frame.name (byte "));
  EXPECT_THAT(status.error_message(), HasSubstr("): not UTF-8"));
  ExpectStillServing();
}

TEST_F(ServerTest, ALogThatDoesNotReadIsReportedAsSuchNotAsACutShortStream) {
  // A gzip header, then a deflate block of the reserved type: zlib fails on the raw upload. The
  // call is cancelled and the client says why, rather than passing on the server's "no end marker".
  const std::string path = ::testing::TempDir() + "/not-really.log.gz";
  ASSERT_THAT(
      WriteFile(path, std::string("\x1f\x8b\x08\x00\0\0\0\0\0\x03", 10) + std::string(64, '\xff')),
      IsOk());
  v1::CaptureHeader header;
  header.set_schema(SchemaVersion());
  absl::StatusOr<v1::AnalyzeResponse> r =
      AnalyzeRemoteTrace(path, header, {}, Remote(server_->address(), absl::Seconds(30)));
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kDataLoss, HasSubstr(path)));
  EXPECT_THAT(r.status().message(), ::testing::Not(HasSubstr("end marker")));
  ExpectStillServing();
}

}  // namespace
}  // namespace cl::testing

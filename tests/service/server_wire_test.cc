// cl-server's service given bytes that are not what a client sends: messages that are not
// AnalyzeChunks at all, framing broken on arrival, a string that is not UTF-8 inside a message that
// frames well, a raw log that does not decompress. Each is refused naming the message, and the
// server serves on.
#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capture/schema.h"
#include "capture/stream/raw_trace_chunk.h"
#include "capture/torch_trace/importer.h"
#include "client/analyze_client.h"
#include "common/file_io.h"
#include "common/mapped_log.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "service/render/html_site.h"
#include "tests/service/server_test_fixture.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace cl::testing {
namespace {

using ::google::protobuf::util::MessageDifferencer;
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

TEST_F(ServerTest, ARawLogIsImportedAsItArrives) {
  // The server applies a raw log's messages as they arrive: 150 lines that are not a TORCH_TRACE
  // log are refused at once, the stream still open and no end marker sent (kept for the analysis
  // task, they would wait for one until the call's 10-s deadline).
  RawCall call(server_->address());
  v1::AnalyzeChunk options;
  options.mutable_options();
  ASSERT_TRUE(call.Write(options.SerializeAsString()));
  v1::AnalyzeChunk bytes;
  v1::CapturePart* header = bytes.mutable_parts()->add_parts();
  header->set_side(v1::HEAD);
  header->mutable_header()->set_schema(SchemaVersion());
  v1::CapturePart* raw = bytes.mutable_parts()->add_parts();
  raw->set_side(v1::HEAD);
  for (int i = 0; i < 150; ++i) raw->mutable_torch_trace()->append("hello, world\n");
  ASSERT_TRUE(call.Write(bytes.SerializeAsString()));
  const grpc::Status status = call.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("not a TORCH_TRACE log"));
  ExpectStillServing();
}

// A raw log of several MB (2.9 once inflated), and the header cl-client sends with it.
std::string BreakFamiliesLog() {
  return FixturePath("torch_trace/torch-2.6/break_families/trace.log.gz");
}
v1::CaptureHeader RawLogHeader() {
  v1::CaptureHeader header;
  header.set_schema(SchemaVersion());
  header.set_post_grad_nodes_only(true);
  return header;
}

// An upload of a raw log to a server that takes messages of at most `max_message` bytes: the
// answer, and the size of each message after the first.
struct SentLog {
  v1::AnalyzeResponse answer;
  std::vector<uint64_t> messages;
  uint64_t largest() const {
    return messages.empty() ? 0 : *std::max_element(messages.begin(), messages.end());
  }
};
class RawLogTest : public ServerTest {
 protected:
  absl::StatusOr<SentLog> UploadTo(int max_message, const std::string& log) {
    ServerOptions options;
    options.max_message_bytes = max_message;
    Start(options);
    RemoteOptions remote = Remote(server_->address(), absl::Seconds(60));
    std::vector<uint64_t> sent;
    remote.on_sent = [&](uint64_t bytes) { sent.push_back(bytes); };
    absl::StatusOr<v1::AnalyzeResponse> answer =
        AnalyzeRemoteTrace(log, RawLogHeader(), {}, remote);
    if (!answer.ok()) return answer.status();
    SentLog out{*std::move(answer), {}};
    for (size_t i = 1; i < sent.size(); ++i) out.messages.push_back(sent[i] - sent[i - 1]);
    return out;
  }
};

// A raw log goes in messages that fill the largest one the server says it takes (up to 1 MiB):
// fewer hand-offs for its reading thread, and a server that takes less than the default part
// budget still gets the log. Where the pieces are cut does not change the report.
TEST_F(RawLogTest, ARawLogFillsTheLargestMessageTheServerTakes) {
  std::vector<v1::AnalysisReport> reports;
  for (const int max_message : {48 << 10, 1 << 20}) {
    ASSERT_OK_AND_ASSIGN(const SentLog sent, UploadTo(max_message, BreakFamiliesLog()));
    reports.push_back(sent.answer.report());
    EXPECT_LE(sent.largest(), static_cast<uint64_t>(max_message)) << max_message;
    EXPECT_GT(sent.largest(), static_cast<uint64_t>(max_message) - 64) << max_message;
  }
  EXPECT_TRUE(MessageDifferencer::Equals(reports[0], reports[1]));
  EXPECT_GT(reports[0].recompile().graph_breaks_size(), 0);
}

// A plain log goes from its mapping, uncopied, in pieces of whole pages (each dropped once gRPC has
// sent it) and its tail: the server reads the log its gzip holds, whatever the pieces.
TEST_F(RawLogTest, APlainLogGoesFromItsMappingAsTheLogItsGzipHolds) {
  const std::string gz = BreakFamiliesLog();
  ASSERT_OK_AND_ASSIGN(const std::string text, ReadFixture(gz));
  ASSERT_NE(text.size() % MappedLog::PageBytes(), 0u);  // a tail shorter than a page, too
  const std::string plain = ::testing::TempDir() + "/break_families.log";
  ASSERT_TRUE(WriteFile(plain, text).ok());
  ASSERT_OK_AND_ASSIGN(const SentLog from_gz, UploadTo(1 << 20, gz));
  for (const int max_message : {48 << 10, 1 << 20}) {
    ASSERT_OK_AND_ASSIGN(const SentLog sent, UploadTo(max_message, plain));
    EXPECT_TRUE(MessageDifferencer::Equals(sent.answer.report(), from_gz.answer.report()))
        << max_message;
    const uint64_t page = MappedLog::PageBytes();
    uint64_t whole_pages = 0;  // messages carrying whole pages: a piece's few bytes before them
    for (const uint64_t message : sent.messages)
      if (message > page && message % page <= kMaxRawTraceChunkHeader) ++whole_pages;
    EXPECT_LE(sent.largest(), static_cast<uint64_t>(max_message)) << max_message;
    EXPECT_GT(sent.largest(), max_message - page - 64) << max_message;
    EXPECT_GE(whole_pages, text.size() / static_cast<uint64_t>(max_message)) << max_message;
  }
  EXPECT_GT(from_gz.answer.report().recompile().graph_breaks_size(), 0);
}

// A receive window far under one message (64 KiB against 1 MiB) still takes a raw log whole, as
// does gRPC's own sizing (0): gRPC credits the window as the import reads, and the report is the
// default server's. (How much each holds is measured in bench/, not here.)
TEST_F(ServerTest, EveryReceiveWindowTakesTheLogWhole) {
  const std::string log = BreakFamiliesLog();
  const v1::CaptureHeader header = RawLogHeader();
  ASSERT_OK_AND_ASSIGN(
      v1::AnalyzeResponse by_default,
      AnalyzeRemoteTrace(log, header, {}, Remote(server_->address(), absl::Seconds(60))));
  for (const int window : {64 << 10, 0}) {
    ServerOptions options;
    options.receive_window_bytes = window;
    Start(options);
    ASSERT_OK_AND_ASSIGN(
        v1::AnalyzeResponse answer,
        AnalyzeRemoteTrace(log, header, {}, Remote(server_->address(), absl::Seconds(60))));
    EXPECT_TRUE(MessageDifferencer::Equals(answer.report(), by_default.report())) << window;
    ExpectStillServing();
  }
}

// Raw logs uploaded at once share the server's import threads (one per core), taking turns: every
// upload gets the report one alone gets.
TEST_F(ServerTest, RawLogsUploadedAtOnceShareTheImportThreads) {
  const std::string log = BreakFamiliesLog();
  const v1::CaptureHeader header = RawLogHeader();
  const RemoteOptions remote = Remote(server_->address(), absl::Seconds(60));
  ASSERT_OK_AND_ASSIGN(v1::AnalyzeResponse alone, AnalyzeRemoteTrace(log, header, {}, remote));
  constexpr int kUploads = 6;
  std::vector<absl::StatusOr<v1::AnalyzeResponse>> answers(kUploads);
  std::vector<std::thread> uploads;
  for (int i = 0; i < kUploads; ++i) {
    v1::CaptureHeader own = header;
    own.mutable_session()->set_id(absl::StrCat("upload-", i));  // not one recent session
    uploads.emplace_back([&, i, own] { answers[i] = AnalyzeRemoteTrace(log, own, {}, remote); });
  }
  for (std::thread& t : uploads) t.join();
  for (int i = 0; i < kUploads; ++i) {
    ASSERT_TRUE(answers[i].ok()) << i << ": " << answers[i].status();
    v1::AnalysisReport report = answers[i]->report();
    report.mutable_metadata()->set_session_id(alone.report().metadata().session_id());
    EXPECT_TRUE(MessageDifferencer::Equals(report, alone.report())) << i;
  }
  ExpectStillServing();
}

// Once a raw log streams, its reads are imported in order on an import thread (read_ahead.h):
// the end of the stream is one of them, so a log the client stops sending without the end marker
// is still refused as such, after its bytes, and a message after the marker too.
TEST_F(ServerTest, ARawLogsStreamEndsInOrderBehindItsBytes) {
  const auto raw_stream = [&](bool end, bool after_end) {
    RawCall call(server_->address());
    v1::AnalyzeChunk options;
    options.mutable_options();
    EXPECT_TRUE(call.Write(options.SerializeAsString()));
    absl::StatusOr<std::string> bytes =
        ReadFixture(FixturePath("torch_trace/torch-2.6/specialize/trace.log.gz"));
    EXPECT_TRUE(bytes.ok());
    uint64_t parts = 0;
    for (size_t at = 0; at < bytes->size(); at += 16 << 10, ++parts) {
      v1::AnalyzeChunk piece;
      piece.mutable_part()->set_side(v1::HEAD);
      piece.mutable_part()->set_torch_trace(bytes->substr(at, 16 << 10));
      EXPECT_TRUE(call.Write(piece.SerializeAsString()));
    }
    if (end) {
      v1::AnalyzeChunk marker;
      marker.mutable_end()->set_parts(parts);
      EXPECT_TRUE(call.Write(marker.SerializeAsString()));
    }
    if (after_end) {
      v1::AnalyzeChunk late;
      late.mutable_part()->set_side(v1::HEAD);
      late.mutable_part()->set_torch_trace("\n");
      call.Write(late.SerializeAsString());  // may find the call ended already
    }
    call.WritesDone();
    std::string answer;  // read, if there is one, or the status would wait for it
    call.Read(&answer);
    return std::make_pair(call.Finish(), parts);
  };
  const auto [unended, parts] = raw_stream(/*end=*/false, /*after_end=*/false);
  ASSERT_GT(parts, 3u);
  EXPECT_EQ(unended.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(unended.error_message(),
              HasSubstr(absl::StrCat("the stream ended after message ", parts + 1,
                                     " without an end marker")));
  const grpc::Status late = raw_stream(/*end=*/true, /*after_end=*/true).first;
  EXPECT_EQ(late.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(late.error_message(),
              HasSubstr(absl::StrCat("message ", parts + 3, " came after the end marker")));
  const grpc::Status whole = raw_stream(/*end=*/true, /*after_end=*/false).first;
  EXPECT_TRUE(whole.ok()) << whole.error_message();
  ExpectStillServing();
}

// A log streamed with the user files it names (read here through the path map) gets the report an
// in-process analysis of the same log gives; without them, what the sources add is missing.
TEST_F(ServerTest, ARawLogWithItsSourcesGetsTheInProcessReport) {
  const std::string log = FixturePath("torch_trace/torch-2.6/specialize/trace.log.gz");
  ImportOptions import;
  import.path_map = {{ "/mnt/project", FixturePath("torch_trace/torch-2.6/scenes") }};
  import.graph_nodes = GraphNodes::kLoweredOnly;
  ASSERT_OK_AND_ASSIGN(v1::SessionCapture capture, ImportTraceFile(log, import));
  ASSERT_EQ(capture.sources_size(), 1);
  ASSERT_OK_AND_ASSIGN(v1::AnalyzeResponse local, AnalyzeInProcess({capture, std::nullopt}, {}, 2));

  v1::CaptureHeader header;
  header.set_schema(SchemaVersion());
  header.set_source_name("trace.log.gz");
  header.set_post_grad_nodes_only(true);
  const RemoteOptions remote = Remote(server_->address(), absl::Seconds(60));
  ASSERT_OK_AND_ASSIGN(v1::AnalyzeResponse with_sources,
                       AnalyzeRemoteTrace(log, header, {}, remote, &import));
  EXPECT_TRUE(MessageDifferencer::Equals(with_sources.report(), local.report()));
  ASSERT_OK_AND_ASSIGN(v1::AnalyzeResponse without, AnalyzeRemoteTrace(log, header, {}, remote));
  EXPECT_FALSE(MessageDifferencer::Equals(without.report(), local.report()));
}

// AnalyzeOptions.render_site on a raw log: the server imports it keeping the record texts and
// returns the site, file by file, the same files cl-client renders in-process from the log.
TEST_F(ServerTest, ARawLogComesBackAsTheSameSiteTheClientRenders) {
  const std::string log = FixturePath("torch_trace/torch-2.6/specialize/trace.log");
  v1::CaptureHeader header;
  header.set_schema(SchemaVersion());
  header.set_source_name("trace.log.gz");
  v1::AnalyzeOptions options;
  options.set_render_site(true);
  ASSERT_OK_AND_ASSIGN(
      v1::AnalyzeResponse remote,
      AnalyzeRemoteTrace(log, header, options, Remote(server_->address(), absl::Seconds(60))));
  EXPECT_TRUE(remote.site_error().empty()) << remote.site_error();
  ASSERT_FALSE(remote.site().empty());
  EXPECT_EQ(remote.site(0).path(), "index.html");
  std::map<std::string, std::string> files;
  for (const v1::SiteFile& f : remote.site()) files[f.path()] = f.content();
  ASSERT_TRUE(files.contains("compiles/0_0_0.html"));
  EXPECT_THAT(files["compiles/0_0_0.html"], HasSubstr("specialize.py:44</code> in <code>decode"));
  // The log itself is there: its first compile's output code, as a file.
  bool output_code = false;
  for (const auto& [path, content] : files)
    output_code |= absl::StrContains(path, "inductor_output_code") && !content.empty();
  EXPECT_TRUE(output_code);
  // What cl-client renders in-process from the same log: the same files, the same compile pages.
  ImportOptions import;
  import.keep_record_texts = true;
  ASSERT_OK_AND_ASSIGN(v1::SessionCapture capture, ImportTraceFile(log, import));
  ASSERT_OK_AND_ASSIGN(v1::AnalyzeResponse local, AnalyzeInProcess({capture, std::nullopt}, {}, 2));
  struct Collect : SiteSink {
    absl::Status Write(const std::string& path, absl::string_view content) override {
      files[path] = std::string(content);
      return absl::OkStatus();
    }
    std::map<std::string, std::string> files;
  } here;
  ASSERT_THAT(RenderHtmlSite(capture, local.report(), here), IsOk());
  ASSERT_EQ(here.files.size(), files.size());
  for (const auto& [path, content] : here.files) {
    ASSERT_TRUE(files.contains(path)) << path;
    if (absl::StartsWith(path, "compiles/")) {
      const std::string& there = files[path];
      const size_t at =
          std::mismatch(there.begin(), there.end(), content.begin(), content.end()).first -
          there.begin();
      EXPECT_EQ(there, content) << path << " differs at " << at << ": \""
                                << there.substr(at > 80 ? at - 80 : 0, 200) << "\" here \""
                                << content.substr(at > 80 ? at - 80 : 0, 200) << "\"";
    }
  }
  ExpectStillServing();
}

}  // namespace
}  // namespace cl::testing

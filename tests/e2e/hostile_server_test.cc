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
#include "capture/schema.h"
#include "client/analyze_client.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/binaries.h"
#include "tests/testing/captures.h"
#include "tests/testing/hostile_inputs.h"
#include "tests/testing/proc_stats.h"
#include "tests/testing/raw_call.h"
#include "tests/testing/subprocess.h"

namespace cl {
namespace {

using Clock = std::chrono::steady_clock;
using ::cl::testing::kServerBinary;
using ::cl::testing::LoadHero;
using ::cl::testing::OptionsOnlyMessage;
using ::cl::testing::RawCall;
using ::cl::testing::ReadProc;
using ::cl::testing::StrTableAmplifier;
using ::cl::testing::Subprocess;
using ::cl::testing::TmpPath;
using ::testing::HasSubstr;
using ::testing::Not;

// The report's diagnostics, one message a line.
std::string DiagnosticMessages(const v1::AnalyzeResponse& answer) {
  std::string out;
  for (const v1::Diagnostic& d : answer.report().diagnostics())
    absl::StrAppend(&out, d.message(), "\n");
  return out;
}

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

// One 1 MiB file name in the str table, named by 1,000 frames: 1.1 MB on the wire once took the
// server past 2 GB. The name is clipped to what a path can be (and the clipping counted), so the
// session is answered and the server stays small.
TEST_F(HostileServerTest, AStrTableNameNamedByEveryFrameIsCopiedOnlyAsAPath) {
  Start({});
  const std::string log = TmpPath("str_table_amplifier.log");
  ASSERT_TRUE(WriteFile(log, StrTableAmplifier(1 << 20, 1000)).ok());
  v1::CaptureHeader header;
  header.set_schema(SchemaVersion());
  header.set_source_name("amplifier.log");
  absl::StatusOr<v1::AnalyzeResponse> answer = AnalyzeRemoteTrace(log, header, {}, remote_);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_THAT(DiagnosticMessages(*answer),
              HasSubstr("import: 1 str table name longer than a path can be (clipped "
                        "to 4096 bytes)"));
  const double peak_mib = ReadProc(server_->pid()).hwm_mib;
  ASSERT_GT(peak_mib, 0) << "no VmHWM in /proc/" << server_->pid() << "/status";
  EXPECT_LT(peak_mib, 400);  // 2.1 GB before the clip
  ExpectServing();
}

// What the str table copies counts against --max_session_memory as it is copied: the import stops
// there, RESOURCE_EXHAUSTED naming the limit, and the server serves on.
TEST_F(HostileServerTest, AnImportPastItsMemoryBudgetIsRefusedNamingTheLimit) {
  Start({"--max_session_memory=2000000"});
  const std::string log = TmpPath("str_table_budget.log");
  ASSERT_TRUE(WriteFile(log, StrTableAmplifier(4000, 1000)).ok());  // 4 MB of copies, 0.1 MB read
  v1::CaptureHeader header;
  header.set_schema(SchemaVersion());
  header.set_source_name("budget.log");
  absl::StatusOr<v1::AnalyzeResponse> answer = AnalyzeRemoteTrace(log, header, {}, remote_);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kResourceExhausted) << answer.status();
  EXPECT_THAT(answer.status().message(),
              HasSubstr("budget.log: the log takes more than its memory budget of 2000000 bytes"));
  EXPECT_THAT(answer.status().message(), HasSubstr("(max_session_memory)"));
  ExpectServing();
}

// Typed parts expand too: an empty frame is 2 bytes on the wire and a message on the arena. A
// session whose parts parse past --max_session_memory is refused at the message that crossed it.
TEST_F(HostileServerTest, PartsThatParsePastTheMemoryLimitAreRefused) {
  Start({"--max_session_memory=16000000"});
  v1::SessionCapture head = LoadHero("head.cls.json");
  head.mutable_session()->set_id("empty-frames");
  for (int i = 0; i < 1000000; ++i) head.add_frames();
  absl::StatusOr<v1::AnalyzeResponse> answer = AnalyzeRemote({head, std::nullopt}, {}, remote_);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kResourceExhausted) << answer.status();
  EXPECT_THAT(answer.status().message(), HasSubstr("bytes in memory once parsed, over the limit of "
                                                   "16000000 bytes (max_session_memory)"));
  ExpectServing();
}

// The same once a raw log has put the call in applying its messages as they arrive: a typed base
// beside a raw head is held to the limit too.
TEST_F(HostileServerTest, TypedPartsAfterARawLogAreHeldToTheMemoryLimit) {
  Start({"--max_session_memory=16000000"});
  absl::StatusOr<std::string> log = ReadFile(CL_SOURCE_DIR "/examples/hero/traces/head.log");
  ASSERT_TRUE(log.ok());
  std::vector<v1::AnalyzeChunk> chunks(5);
  chunks[0].mutable_options();
  chunks[1].mutable_part()->set_side(v1::HEAD);
  chunks[1].mutable_part()->set_torch_trace(log->substr(0, 200000));
  v1::CapturePart* base = chunks[2].mutable_part();
  base->set_side(v1::BASE);
  base->mutable_header()->set_schema(SchemaVersion());
  base->mutable_header()->mutable_session()->set_id("base");
  chunks[3].mutable_part()->set_side(v1::BASE);
  chunks[3].mutable_part()->mutable_graph_header()->set_id("g");
  // 2 bytes on the wire each, a message on the arena: some 40 MB parsed from under 1 MB.
  chunks[4].mutable_part()->set_side(v1::BASE);
  v1::NodeBatch* nodes = chunks[4].mutable_part()->mutable_node_batch();
  nodes->set_graph_id("g");
  for (int i = 0; i < 400000; ++i) nodes->add_nodes();
  RawCall call(remote_.target);
  for (const v1::AnalyzeChunk& chunk : chunks) {
    if (!call.Write(chunk.SerializeAsString())) break;
  }
  const grpc::Status status = call.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("message 5: the session takes "));
  EXPECT_THAT(status.error_message(), HasSubstr("(max_session_memory)"));
  ExpectServing();
}

// A 16 MiB frame name once came back as a 50 MB response, a 12 MiB recompile reason as a 94 MB one:
// the report echoed them whole, several times over, and the HTML again. Every string the report
// holds is clipped to kMaxReportStringBytes, and says how long it was.
TEST_F(HostileServerTest, LongStringsComeBackClippedWithTheirLength) {
  Start({});
  v1::SessionCapture head = LoadHero("head.cls.json");
  head.mutable_session()->set_id("long-strings");
  ASSERT_GT(head.frames_size(), 0);
  const std::string frame(16 << 20, 'f');
  head.mutable_frames(0)->set_name(frame);
  for (v1::Compile& compile : *head.mutable_compiles()) {
    if (compile.recompile_reasons().empty()) continue;
    compile.set_recompile_reasons(
        0, absl::StrCat(compile.recompile_reasons(0), " ", std::string(12 << 20, 'r')));
    break;
  }
  v1::AnalyzeOptions options;
  options.set_render_html(true);
  options.set_render_text(true);
  absl::StatusOr<v1::AnalyzeResponse> answer =
      AnalyzeRemote({head, std::nullopt}, options, remote_);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_LT(answer->ByteSizeLong(), size_t{4} << 20);
  EXPECT_THAT(answer->html(), HasSubstr("[clipped: 16777216 bytes in all]"));
  EXPECT_THAT(DiagnosticMessages(*answer), HasSubstr("longer than 16 KiB are clipped here"));
  ExpectServing();
}

// Reflection answers without the token (it shows the public schema, never a session, and the
// README and --help say so). A token without TLS is warned about at start.
TEST_F(HostileServerTest, ReflectionIsExemptFromTheTokenAndATokenInClearTextIsWarnedAbout) {
  const std::string token = TmpPath("reflection.token");
  ASSERT_TRUE(WriteFile(token, "s3cret\n").ok());
  // ServerReflectionRequest{list_services: ""}: field 7, length 0.
  const std::string list_services("\x3a\x00", 2);
  constexpr char kReflection[] = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

  Start({absl::StrCat("--token_file=", token)});
  EXPECT_THAT(server_->ReadStderrLine(),
              HasSubstr("warning: --token_file without --tls_cert: the bearer token crosses the "
                        "network in clear text"));
  {
    RawCall call(remote_.target, kReflection);
    ASSERT_TRUE(call.Write(list_services));
    std::string answer;
    ASSERT_TRUE(call.Read(&answer));
    EXPECT_THAT(answer, HasSubstr("compile_lens.v1.CompileLens"));
    // ServerReflectionRequest{file_containing_symbol: the service}: field 4. The answer is the
    // schema itself, found by name in protobuf's generated pool, where the server registered it
    // (proto/register_files.h), not an error_response.
    const std::string symbol = "compile_lens.v1.CompileLens";
    ASSERT_TRUE(
        call.Write(absl::StrCat("\x22", std::string(1, static_cast<char>(symbol.size())), symbol)));
    ASSERT_TRUE(call.Read(&answer));
    EXPECT_THAT(answer, HasSubstr("compile_lens/v1/service.proto"));
    EXPECT_THAT(answer, Not(HasSubstr("not found")));
    call.WritesDone();
    EXPECT_TRUE(call.Finish().ok());
  }
  // And the Analyze call itself still needs the token.
  RawCall analyze(remote_.target);
  analyze.Write(OptionsOnlyMessage());
  analyze.WritesDone();
  EXPECT_EQ(analyze.Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

// As many streams as --max_inflight that send the options and then nothing once held every slot
// for the whole 60 s upload timeout, and every real session got RESOURCE_EXHAUSTED. Now a session
// that arrives while they sit idle takes the slot of the idlest at once (after its first second of
// silence), and the rest are ended at --idle_timeout.
TEST_F(HostileServerTest, IdleStreamsDoNotStarveARealSession) {
  Start({"--max_inflight=4", "--idle_timeout=3s"});
  std::vector<std::unique_ptr<RawCall>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<RawCall>(remote_.target));
    ASSERT_TRUE(idle.back()->Write(OptionsOnlyMessage()));
  }
  absl::SleepFor(absl::Milliseconds(1200));  // each has been silent for over a second
  const Clock::time_point asked = Clock::now();
  ExpectServing();
  EXPECT_LT(Clock::now() - asked, std::chrono::seconds(2));  // not at the idle timeout (3 s)

  int evicted = 0, timed_out = 0;
  for (std::unique_ptr<RawCall>& call : idle) {
    const grpc::Status status = call->Finish();
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++evicted;
      EXPECT_THAT(status.error_message(),
                  HasSubstr("(after 1 message) while every max_inflight slot (4) was taken, so "
                            "the call's slot went to a call ready to send"));
    } else {
      ++timed_out;
      EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
      EXPECT_THAT(status.error_message(),
                  HasSubstr("nothing arrived for 3s (idle_timeout) after 1 message"));
    }
  }
  EXPECT_EQ(evicted, 1);
  EXPECT_EQ(timed_out, 3);
  ExpectServing();
}

// A stream that opens and sends nothing at all is ended at --idle_timeout, long before the upload
// timeout.
TEST_F(HostileServerTest, AStreamThatSendsNothingEndsAtTheIdleTimeout) {
  Start({"--idle_timeout=500ms", "--upload_timeout=60s"});
  RawCall call(remote_.target);
  const Clock::time_point opened = Clock::now();
  const grpc::Status status = call.Finish();
  EXPECT_LT(Clock::now() - opened, std::chrono::seconds(3));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  EXPECT_THAT(status.error_message(),
              HasSubstr("nothing arrived for 500ms (idle_timeout) after 0 messages"));
  ExpectServing();
}

// The end marker is the stream's last message: one after it is refused (it was ignored), and a
// stream left open after it is ended at the idle timeout rather than analyzed.
TEST_F(HostileServerTest, NothingMayFollowTheEndMarker) {
  Start({"--idle_timeout=1s"});
  v1::AnalyzeChunk end;
  end.mutable_end()->set_parts(0);
  {
    RawCall call(remote_.target);
    ASSERT_TRUE(call.Write(OptionsOnlyMessage()));
    ASSERT_TRUE(call.Write(end.SerializeAsString()));
    call.Write(OptionsOnlyMessage());
    call.WritesDone();
    const grpc::Status status = call.Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_THAT(status.error_message(),
                HasSubstr("message 3 came after the end marker (message 2), which must be the "
                          "stream's last"));
  }
  {
    RawCall call(remote_.target);
    ASSERT_TRUE(call.Write(OptionsOnlyMessage()));
    ASSERT_TRUE(call.Write(end.SerializeAsString()));
    const grpc::Status status = call.Finish();  // never half-closed
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
    EXPECT_THAT(status.error_message(),
                HasSubstr("the end marker came, but the stream stayed open for 1s (idle_timeout)"));
  }
  ExpectServing();
}

}  // namespace
}  // namespace cl

// cl-client upload and spool against the real cl-server binary: a session is never lost. With the
// server down it is spooled within the deadline; `spool flush` delivers it once the server is back
// and empties the spool; a server that comes back (or is restarted mid-stream) while the upload is
// still retrying gets the session directly.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/binaries.h"
#include "tests/testing/subprocess.h"

namespace cl {
namespace {

using ::cl::testing::kClientBinary;
using ::cl::testing::kHeroHead;
using ::cl::testing::kServerBinary;
using ::cl::testing::RunCommand;
using ::cl::testing::RunResult;
using ::cl::testing::Subprocess;
using ::testing::HasSubstr;

constexpr char kHeroSessionFile[] = "230d13f4-f0c9-e0eb-6861-702558272f32.cls.pb";

// A loopback port nothing listens on (bound, then released).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

// With `metrics`, the server also serves /metrics and `metrics` gets its HOST:PORT.
std::unique_ptr<Subprocess> StartServer(int port, std::string* metrics = nullptr) {
  std::vector<std::string> argv = {kServerBinary, absl::StrCat("--listen=127.0.0.1:", port),
                                   "--drain_delay=0s", "--analysis_threads=2"};
  if (metrics != nullptr) argv.push_back("--metrics_listen=127.0.0.1:0");
  auto server = std::make_unique<Subprocess>(argv);
  const absl::StatusOr<std::string> address = server->ReadAnnounced("cl-server: listening on ");
  EXPECT_TRUE(address.ok()) << address.status();
  if (metrics != nullptr) {
    const absl::StatusOr<std::string> metrics_address =
        server->ReadAnnounced("cl-server: metrics on ");
    EXPECT_TRUE(metrics_address.ok()) << metrics_address.status();
    *metrics = metrics_address.value_or("");
  }
  return server;
}

// The body of http://HOST:PORT/metrics ("" when it cannot be read).
std::string Scrape(const std::string& host_port) {
  const size_t colon = host_port.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(host_port.substr(colon + 1), &port))
    return "";
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string body;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;)
        body.append(buffer, static_cast<size_t>(n));
    }
  }
  close(fd);
  return body;
}

class UploadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spool_ = absl::StrCat(::testing::TempDir(), "/spool-",
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(spool_);
    port_ = FreePort();
    target_ = absl::StrCat("127.0.0.1:", port_);
  }

  int SpooledCount() const {
    if (!std::filesystem::exists(spool_)) return 0;
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(spool_))
      n += absl::EndsWith(e.path().string(), ".cls.pb");
    return n;
  }

  std::string spool_;
  int port_ = 0;
  std::string target_;
};

TEST_F(UploadTest, ServerDownSpoolsTheSessionWithinTheDeadline) {
  const absl::Time start = absl::Now();
  const RunResult r = RunCommand({kClientBinary, "upload", kHeroHead, "--server", target_,
                                  "--deadline=2s", "--spool", spool_});
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(r.exit_code, 4) << r.stderr_text;
  EXPECT_LT(took, absl::Seconds(
                      7));  // the 2 s deadline plus start-up and loading, on a loaded CI machine
  EXPECT_THAT(r.stderr_text, HasSubstr("spooled to"));
  // The hint is a command that works as it is: it names the spool that was used.
  EXPECT_THAT(r.stderr_text,
              HasSubstr("cl-client spool flush --server " + target_ + " --spool " + spool_));
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(spool_) / kHeroSessionFile));
  // Spooling the same session again is still one file.
  RunCommand({kClientBinary, "upload", kHeroHead, "--server", target_, "--deadline=1s", "--spool",
              spool_});
  EXPECT_EQ(SpooledCount(), 1);
}

TEST_F(UploadTest, FlushDeliversOnceTheServerIsBackAndEmptiesTheSpool) {
  ASSERT_EQ(RunCommand({kClientBinary, "upload", kHeroHead, "--server", target_, "--deadline=1s",
                        "--spool", spool_})
                .exit_code,
            4);
  ASSERT_EQ(SpooledCount(), 1);
  // Still down: flush keeps it.
  RunResult r = RunCommand(
      {kClientBinary, "spool", "flush", "--server", target_, "--deadline=1s", "--spool", spool_});
  EXPECT_EQ(r.exit_code, 4) << r.stderr_text;
  EXPECT_EQ(SpooledCount(), 1);

  std::unique_ptr<Subprocess> server = StartServer(port_);
  r = RunCommand(
      {kClientBinary, "spool", "flush", "--server", target_, "--deadline=20s", "--spool", spool_});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(r.stdout_text, HasSubstr("1 session delivered, 0 left"));
  EXPECT_EQ(SpooledCount(), 0);
  r = RunCommand({kClientBinary, "spool", "list", "--spool", spool_});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_text, "");
}

TEST_F(UploadTest, AServerThatComesBackWhileRetryingGetsTheSessionDirectly) {
  std::unique_ptr<Subprocess> server;
  std::thread later([&] {
    absl::SleepFor(absl::Milliseconds(1500));
    server = StartServer(port_);
  });
  const RunResult r = RunCommand({kClientBinary, "upload", kHeroHead, "--server", target_,
                                  "--deadline=20s", "--spool", spool_});
  later.join();
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(r.stdout_text, HasSubstr("uploaded session 230d13f4"));
  EXPECT_EQ(SpooledCount(), 0);
}

// A TORCH_TRACE log is streamed as it is and imported by the server, with the user files it names
// read here (the path map): the server's answer is the report `analyze` gives in-process. With the
// server down, the log is imported here after all and spooled, and `spool flush` delivers it.
TEST_F(UploadTest, ALogGoesUpAsItIsAndIsSpooledWhenItCannot) {
  const std::string log =
      CL_SOURCE_DIR "/tests/fixtures/torch_trace/torch-2.6/specialize/trace.log.gz";
  const std::string path_map =
      "--path-map=/mnt/project=" CL_SOURCE_DIR "/tests/fixtures/torch_trace/torch-2.6/scenes";
  const auto report = [](const std::vector<std::string>& argv) {
    const std::string json = absl::StrCat(::testing::TempDir(), "/upload-report.json");
    std::vector<std::string> command = argv;
    command.insert(command.end(), {"--json", json, "--quiet"});
    const RunResult r = RunCommand(command);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    return ReadFile(json).value_or("");
  };
  const std::string local = report({kClientBinary, "analyze", log, path_map});
  ASSERT_FALSE(local.empty());

  RunResult r = RunCommand({kClientBinary, "upload", log, path_map, "--server", target_,
                            "--deadline=1s", "--spool", spool_});
  EXPECT_EQ(r.exit_code, 4) << r.stderr_text;
  EXPECT_EQ(SpooledCount(), 1);

  std::unique_ptr<Subprocess> server = StartServer(port_);
  r = RunCommand({kClientBinary, "upload", log, path_map, "--server", target_, "--deadline=20s",
                  "--spool", spool_});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(r.stdout_text, HasSubstr("cl-client: uploaded session "));
  // The server's report of the raw log, asked for the way an upload sends it (analyze --raw):
  // the in-process one, the sources' findings included; without them it is not.
  EXPECT_EQ(report({kClientBinary, "analyze", log, path_map, "--server", target_, "--raw"}), local);
  EXPECT_NE(report({kClientBinary, "analyze", log, "--server", target_, "--raw", "--no-sources"}),
            local);

  r = RunCommand(
      {kClientBinary, "spool", "flush", "--server", target_, "--deadline=20s", "--spool", spool_});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(SpooledCount(), 0);
}

// A log that does not open is the user's mistake, said at once (exit 3), with no server asked and
// nothing spooled.
TEST_F(UploadTest, ALogThatDoesNotOpenFailsBeforeAnyServerIsAsked) {
  const RunResult r = RunCommand({kClientBinary, "upload", "/nonexistent/run.log", "--server",
                                  target_, "--deadline=20s", "--spool", spool_});
  EXPECT_EQ(r.exit_code, 3) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr("/nonexistent/run.log: cannot open"));
  EXPECT_EQ(SpooledCount(), 0);
}

TEST_F(UploadTest, AServerKilledMidStreamLosesNothing) {
  // A capture big enough that the upload is still streaming when the server dies.
  const std::string big = absl::StrCat(::testing::TempDir(), "/big.cls.pb");
  ASSERT_EQ(RunCommand({CL_BINARY_DIR "/tests/testing/make_big_capture", big, "600000"}).exit_code,
            0);
  std::string metrics;
  std::unique_ptr<Subprocess> server = StartServer(port_, &metrics);
  const std::string out = absl::StrCat(::testing::TempDir(), "/upload.out");
  std::unique_ptr<Subprocess> upload = std::make_unique<Subprocess>(
      std::vector<std::string>{kClientBinary, "upload", big, "--server", target_, "--deadline=60s",
                               "--spool", spool_},
      out);
  // Killed once the session is streaming (in flight on the server), however long loading took.
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (!absl::StrContains(Scrape(metrics), "\ncompile_lens_sessions_inflight 1") &&
         absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  server->Signal(SIGKILL);
  server->Wait();
  server = StartServer(port_);
  const int code = upload->Wait();
  // Delivered on a retry, or (only if time ran out) spooled: never neither.
  EXPECT_TRUE(code == 0 || (code == 4 && SpooledCount() == 1))
      << code << ": " << upload->ReadStderrToEnd();
  if (code == 0) {
    // The first attempt died with the server; a later one delivered it.
    EXPECT_THAT(ReadFile(out).value_or(""),
                ::testing::ContainsRegex("\\(([2-9]|[1-9][0-9]+) attempts\\)"));
  }
}

}  // namespace
}  // namespace cl

// The malformed-capture corpus (make_corpus.py) against one real cl-server process on port 0.
//
// Every case goes the way a client would send it: a .cls.json / .cls.pb is read with the client
// library (what cl-client says about it) and, when it parses at all, its unvalidated capture is
// streamed to the server (what the server says about it); a TORCH_TRACE log is streamed raw and
// imported server-side; a .chunks file is a sequence of raw gRPC messages sent as they are. Each
// must come back as the manifest says: INVALID_ARGUMENT naming what is wrong, or a report (with
// diagnostics where asked), never a crash, a hang or a vague error. After every case the server
// must be healthy, and every few cases it must answer the hero session exactly as it did first.
// Reports that come back are compared with the in-process analysis of the same input. The corpus
// is run twice: the server's RSS must not grow on the second run (checked in the release build),
// and the server must drain and exit 0 at the end (under ASan/LSan a leak makes that exit
// non-zero).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "capture/capture_io.h"
#include "capture/schema.h"
#include "capture/torch_trace/importer.h"
#include "capture/validate.h"
#include "client/analyze_client.h"
#include "common/file_io.h"
#include "common/grpc_status.h"
#include "common/proto_json.h"
#include "compile_lens/v1/service.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/binaries.h"
#include "tests/testing/proc_stats.h"
#include "tests/testing/subprocess.h"

namespace cl {
namespace {

using ::cl::testing::kHeroHead;
using ::cl::testing::kServerBinary;
using ::cl::testing::Subprocess;

const std::string kCorpusDir = CL_MALFORMED_CORPUS_DIR;
constexpr uint64_t kMaxSessionBytes = 48ull << 20;            // the 64 MiB case is over it
constexpr absl::Duration kCallDeadline = absl::Seconds(120);  // a hang fails the case
constexpr absl::Duration kCaseLimit = absl::Seconds(300);  // the watchdog's, for in-process hangs
constexpr int kReferenceEvery = 10;
// The second run of the same corpus may not leave the server holding more than this on top.
constexpr int64_t kMaxRssGrowthKb = 96 << 10;

struct Case {
  std::string name, category, format, file, expected, diagnostics, note;
  std::vector<std::string> expect, expect_server;
  std::string label() const { return absl::StrCat(category, "/", name, " (", file, ")"); }
};

std::vector<std::string> Strings(const google::protobuf::Struct& s, const std::string& key) {
  std::vector<std::string> out;
  auto it = s.fields().find(key);
  if (it == s.fields().end()) return out;
  for (const auto& v : it->second.list_value().values()) out.push_back(v.string_value());
  return out;
}

std::string String(const google::protobuf::Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? "" : it->second.string_value();
}

std::vector<Case> ReadManifest() {
  std::vector<Case> cases;
  std::ifstream in(kCorpusDir + "/manifest.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    google::protobuf::Struct s;
    if (!google::protobuf::util::JsonStringToMessage(line, &s).ok()) {
      ADD_FAILURE() << "manifest line is not JSON: " << line;
      continue;
    }
    Case c;
    c.name = String(s, "name");
    c.category = String(s, "category");
    c.format = String(s, "format");
    c.file = String(s, "file");
    c.expected = String(s, "expected");
    c.diagnostics = String(s, "diagnostics");
    c.note = String(s, "note");
    c.expect = Strings(s, "expect");
    c.expect_server = s.fields().contains("expect_server") ? Strings(s, "expect_server") : c.expect;
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string Serialized(const google::protobuf::Message& m) { return DeterministicBytes(m); }

// Aborts the test binary, naming the case, when one case runs far past any deadline: a hang in
// the in-process half of a case (parsing, importing, analyzing here) must fail, not stall ctest.
class Watchdog {
 public:
  Watchdog() : thread_([this] { Run(); }) {}
  ~Watchdog() {
    stop_ = true;
    thread_.join();
  }
  void Start(const std::string& name) {
    absl::MutexLock lock(&mu_);
    name_ = name;
    started_ = absl::Now();
  }

 private:
  void Run() {
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      absl::MutexLock lock(&mu_);
      if (!name_.empty() && absl::Now() - started_ > kCaseLimit) {
        std::fprintf(stderr, "malformed corpus: case %s hung for %s\n", name_.c_str(),
                     absl::FormatDuration(kCaseLimit).c_str());
        std::abort();
      }
    }
  }
  absl::Mutex mu_;
  std::string name_ ABSL_GUARDED_BY(mu_);
  absl::Time started_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// What one side (client library or server) made of a case.
struct Outcome {
  absl::Status status;
  std::optional<v1::AnalyzeResponse> response;
};

class MalformedCorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<Subprocess>(std::vector<std::string>{
        kServerBinary, "--listen=127.0.0.1:0", "--drain_delay=0s", "--analysis_threads=2",
        absl::StrCat("--max_session_bytes=", kMaxSessionBytes), "--recent_sessions=0"});
    absl::StatusOr<std::string> address = server_->ReadAnnounced("cl-server: listening on ");
    ASSERT_TRUE(address.ok()) << address.status();
    remote_.target = *address;
    remote_.deadline = kCallDeadline;
    // Drain the server's stderr as it comes, so that a chatty server never blocks on a full pipe.
    stderr_thread_ = std::thread([this] { server_stderr_ = server_->ReadStderrToEnd(); });
  }

  void TearDown() override {
    if (stderr_thread_.joinable()) {
      if (server_) server_->Signal(SIGKILL);
      stderr_thread_.join();
    }
  }

  int64_t RssKb() const {
    std::ifstream in(absl::StrCat("/proc/", server_->pid(), "/status"));
    std::string line;
    while (std::getline(in, line)) {
      int64_t kb = 0;
      absl::string_view rest = line;
      if (absl::ConsumePrefix(&rest, "VmRSS:") &&
          absl::SimpleAtoi(absl::StripSuffix(absl::StripAsciiWhitespace(rest), " kB"), &kb)) {
        return kb;
      }
    }
    return -1;
  }

  bool Alive() const {
    if (kill(server_->pid(), 0) != 0) return false;
    std::ifstream in(absl::StrCat("/proc/", server_->pid(), "/stat"));
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
  }

  void ExpectServing(const std::string& after) {
    ASSERT_TRUE(Alive()) << "cl-server died after " << after << "\n" << server_stderr_;
    RemoteOptions remote = remote_;
    remote.deadline = absl::Seconds(30);
    const absl::Status health = CheckHealth(remote, "");
    EXPECT_TRUE(health.ok()) << "after " << after << ": " << health;
  }

  // The hero session, which must be answered the same way every time.
  void ExpectReference(const std::string& after) {
    absl::StatusOr<v1::AnalyzeResponse> r = AnalyzeRemote(reference_, {}, remote_);
    ASSERT_TRUE(r.ok()) << "the reference request after " << after << ": " << r.status();
    EXPECT_TRUE(Serialized(r->report()) == reference_report_)
        << "the reference report changed after " << after;
    ++references_;
  }

  Outcome SendStream(const std::string& bytes) {
    grpc::GenericStub generic(
        grpc::CreateChannel(remote_.target, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kCallDeadline));
    grpc::CompletionQueue cq;
    auto call = generic.PrepareCall(&context, "/compile_lens.v1.CompileLens/Analyze", &cq);
    void* tag = nullptr;
    bool ok = false;
    call->StartCall(reinterpret_cast<void*>(1));
    cq.Next(&tag, &ok);
    bool open = ok;
    size_t at = 0;
    while (open && at + 4 <= bytes.size()) {
      uint32_t n = 0;
      for (int i = 3; i >= 0; --i) n = n << 8 | static_cast<uint8_t>(bytes[at + i]);
      grpc::Slice slice(bytes.data() + at + 4, n);
      grpc::ByteBuffer buffer(&slice, 1);
      at += 4 + n;
      call->Write(buffer, reinterpret_cast<void*>(2));
      cq.Next(&tag, &ok);
      open = ok;
    }
    if (open) {
      call->WritesDone(reinterpret_cast<void*>(3));
      cq.Next(&tag, &ok);
    }
    grpc::ByteBuffer reply;
    call->Read(&reply, reinterpret_cast<void*>(4));
    cq.Next(&tag, &ok);
    const bool got_reply = ok;
    grpc::Status status;
    call->Finish(&status, reinterpret_cast<void*>(5));
    cq.Next(&tag, &ok);
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    Outcome out{FromGrpcStatus(status), std::nullopt};
    if (out.status.ok()) {
      v1::AnalyzeResponse response;
      std::vector<grpc::Slice> slices;
      std::string text;
      if (got_reply && reply.Dump(&slices).ok()) {
        for (const grpc::Slice& s : slices)
          text.append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
      if (!response.ParseFromString(text)) {
        out.status = absl::DataLossError("the server's reply is not an AnalyzeResponse");
      } else {
        out.response = std::move(response);
      }
    }
    return out;
  }

  // Checks one side's outcome against the case's expectation.
  void Expect(const Case& c, const Outcome& o, const std::vector<std::string>& expect,
              absl::string_view who) {
    const absl::Status& s = o.status;
    const std::string got = s.ok() ? "a report" : s.ToString();
    // Never these, whatever the input: they mean a crash, a hang, a bug or a vague answer.
    for (absl::StatusCode bad :
         {absl::StatusCode::kInternal, absl::StatusCode::kUnknown,
          absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kUnavailable,
          absl::StatusCode::kDataLoss, absl::StatusCode::kCancelled}) {
      if (bad == absl::StatusCode::kDataLoss && c.expected == "data_loss") continue;
      EXPECT_NE(s.code(), bad) << who << ": " << got;
    }
    if (!s.ok()) {
      EXPECT_FALSE(s.message().empty()) << who;
    }
    auto has_all = [&] {
      for (const std::string& sub : expect) {
        if (!absl::StrContains(s.message(), sub)) return false;
      }
      return true;
    };
    if (c.expected == "report" || (c.expected == "resource_exhausted" && who == "client")) {
      EXPECT_TRUE(s.ok()) << who << " refused it: " << s;
      if (s.ok() && o.response && c.diagnostics == "more") {
        EXPECT_GT(o.response->report().diagnostics_size(), baseline_diagnostics_[c.format])
            << who << ": the report should carry diagnostics about the damage";
      }
    } else if (c.expected == "invalid_argument") {
      EXPECT_TRUE(s.code() == absl::StatusCode::kInvalidArgument && has_all())
          << who << ": expected INVALID_ARGUMENT with [" << absl::StrJoin(expect, " | ")
          << "], got " << got;
    } else if (c.expected == "resource_exhausted") {
      EXPECT_TRUE(s.code() == absl::StatusCode::kResourceExhausted && has_all())
          << who << ": expected RESOURCE_EXHAUSTED with [" << absl::StrJoin(expect, " | ")
          << "], got " << got;
    } else if (c.expected == "data_loss") {  // a file the client cannot read (a broken .gz)
      EXPECT_TRUE(s.code() == absl::StatusCode::kDataLoss && has_all())
          << who << ": expected DATA_LOSS with [" << absl::StrJoin(expect, " | ") << "], got "
          << got;
    } else if (c.expected == "either") {
      EXPECT_TRUE(s.ok() || (s.code() == absl::StatusCode::kInvalidArgument && has_all()))
          << who << ": expected a report or INVALID_ARGUMENT with [" << absl::StrJoin(expect, " | ")
          << "], got " << got;
    } else {
      ADD_FAILURE() << "unknown expectation " << c.expected;
    }
    outcomes_[c.category][s.ok() ? "report" : absl::StatusCodeToString(s.code())]++;
    if (std::getenv("CL_MALFORMED_VERBOSE") != nullptr) {
      std::printf("%s %s: %s\n", c.label().c_str(), std::string(who).c_str(),
                  got.substr(0, 300).c_str());
    }
  }

  // The in-process analysis of what the server analyzed must give the same report.
  void ExpectSameAsInProcess(const AssembledCaptures& captures, const v1::AnalyzeResponse& remote) {
    absl::StatusOr<v1::AnalyzeResponse> local = AnalyzeInProcess(captures, {}, 2);
    ASSERT_TRUE(local.ok()) << "in-process: " << local.status();
    EXPECT_TRUE(Serialized(local->report()) == Serialized(remote.report()))
        << "the server's report differs from the in-process one";
  }

  void RunCase(const Case& c, bool in_process) {
    const std::string path = kCorpusDir + "/" + c.file;
    if (c.format == "json" || c.format == "pb") {
      absl::StatusOr<std::string> bytes = ReadFile(path);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      const CaptureFormat format =
          c.format == "json" ? CaptureFormat::kJson : CaptureFormat::kBinary;
      // What cl-client says (it loads before it sends anything)...
      absl::StatusOr<v1::SessionCapture> loaded = LoadCapture(*bytes, format, c.file);
      Expect(c, Outcome{loaded.status(), std::nullopt}, c.expect, "client");
      // ...and what the server says about the same capture unvalidated, when it parses at all.
      absl::StatusOr<v1::SessionCapture> parsed =
          format == CaptureFormat::kJson ? ParseCaptureJson(*bytes) : ParseCaptureBinary(*bytes);
      bytes->clear();
      if (!parsed.ok()) {
        EXPECT_FALSE(loaded.ok()) << "parses unloaded but not loaded";
        return;
      }
      AssembledCaptures captures{*std::move(parsed), std::nullopt};
      absl::StatusOr<v1::AnalyzeResponse> r = AnalyzeRemote(captures, {}, remote_);
      Outcome server{r.status(),
                     r.ok() ? std::optional<v1::AnalyzeResponse>(*std::move(r)) : std::nullopt};
      Expect(c, server, c.expect_server, "server");
      if (c.expected != "resource_exhausted") {
        EXPECT_EQ(loaded.ok(), server.status.ok())
            << "the client and the server disagree: client " << loaded.status() << ", server "
            << server.status;
      }
      if (in_process && loaded.ok() && server.response) {
        ExpectSameAsInProcess({*std::move(loaded), std::nullopt}, *server.response);
      }
      if (server.response && c.category == "control")
        baseline_diagnostics_[c.format] = server.response->report().diagnostics_size();
    } else if (c.format == "trace") {
      v1::CaptureHeader header;
      header.set_schema(SchemaVersion());
      header.set_source_name(c.file);
      absl::StatusOr<v1::AnalyzeResponse> r = AnalyzeRemoteTrace(path, header, {}, remote_);
      Outcome server{r.status(),
                     r.ok() ? std::optional<v1::AnalyzeResponse>(*std::move(r)) : std::nullopt};
      Expect(c, server, c.expect_server, "server");
      if (server.response && c.category == "control") {
        baseline_diagnostics_[c.format] = server.response->report().diagnostics_size();
      }
      if (in_process && server.response) {
        // The same log imported here: a capture that validates, and the same report.
        ImportOptions options;
        options.read_sources = false;
        absl::StatusOr<v1::SessionCapture> imported = ImportTraceFile(path, options);
        ASSERT_TRUE(imported.ok()) << "in-process import: " << imported.status();
        EXPECT_TRUE(ValidateCapture(*imported).ok()) << ValidateCapture(*imported);
        ExpectSameAsInProcess({*std::move(imported), std::nullopt}, *server.response);
      }
    } else if (c.format == "stream") {
      absl::StatusOr<std::string> bytes = ReadFile(path);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      Expect(c, SendStream(*bytes), c.expect_server, "server");
    } else {
      ADD_FAILURE() << "unknown format " << c.format;
    }
  }

  // One run over the corpus; returns how long it took.
  absl::Duration RunCorpus(const std::vector<Case>& cases, bool in_process, Watchdog& watchdog) {
    const absl::Time start = absl::Now();
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      SCOPED_TRACE(c.label() + (c.note.empty() ? "" : ": " + c.note));
      watchdog.Start(c.label());
      const absl::Time case_start = absl::Now();
      RunCase(c, in_process);
      slowest_[c.label()] = std::max(slowest_[c.label()], absl::Now() - case_start);
      ExpectServing(c.label());
      if ((i + 1) % kReferenceEvery == 0) ExpectReference(c.label());
      if (!Alive()) return absl::Now() - start;
    }
    return absl::Now() - start;
  }

  std::unique_ptr<Subprocess> server_;
  std::thread stderr_thread_;
  std::string server_stderr_;
  RemoteOptions remote_;
  AssembledCaptures reference_;
  std::string reference_report_;
  int references_ = 0;
  std::map<std::string, int> baseline_diagnostics_;
  std::map<std::string, std::map<std::string, int>> outcomes_;
  std::map<std::string, absl::Duration> slowest_;
};

TEST_F(MalformedCorpusTest, EveryCaseIsRefusedPreciselyOrAnalyzed) {
  const std::vector<Case> cases = ReadManifest();
  ASSERT_GE(cases.size(), 200u) << "regenerate the corpus: " << kCorpusDir;
  std::map<std::string, int> per_category;
  for (const Case& c : cases) per_category[c.category]++;
  for (const char* category : {"truncation", "type_confusion", "huge_string", "deep_nesting",
                               "duplicate_id", "dangling_ref", "cycle", "nan_inf", "invalid_utf8",
                               "schema_version", "broken_trace", "stream", "control"}) {
    EXPECT_GT(per_category[category], 0) << "no case of category " << category;
  }

  absl::StatusOr<v1::SessionCapture> hero = ReadCaptureFile(kHeroHead);
  ASSERT_TRUE(hero.ok()) << hero.status();
  reference_.head = *std::move(hero);
  absl::StatusOr<v1::AnalyzeResponse> first = AnalyzeRemote(reference_, {}, remote_);
  ASSERT_TRUE(first.ok()) << first.status();
  reference_report_ = Serialized(first->report());
  const int64_t rss_start = RssKb();

  Watchdog watchdog;
  const absl::Duration first_run = RunCorpus(cases, /*in_process=*/true, watchdog);
  const int64_t rss_first = RssKb();
  // The second run sends the same cases again: whatever the first run's cases leaked, the second
  // leaks again, so the server's RSS grows; a server that only keeps allocator caches does not.
  const absl::Duration second_run = RunCorpus(cases, /*in_process=*/false, watchdog);
  const int64_t rss_second = RssKb();
  watchdog.Start("");

  ExpectServing("the corpus");
  ExpectReference("the corpus");
  // Under ASan the server's RSS is ASan's allocator (testing::kAsan says why): LeakSanitizer
  // checks the server's exit there, and the release suite checks the growth.
  if (!testing::kAsan) {
    EXPECT_LT(rss_second - rss_first, kMaxRssGrowthKb)
        << "RSS " << rss_start << " kB at the start, " << rss_first << " kB after one run, "
        << rss_second << " kB after two";
  }

  std::string summary =
      absl::StrCat(cases.size(), " cases, ", references_, " reference requests; run 1 ",
                   absl::FormatDuration(first_run), ", run 2 ", absl::FormatDuration(second_run),
                   "; server RSS ", rss_start, " → ", rss_first, " → ", rss_second, " kB\n");
  for (const auto& [category, by_outcome] : outcomes_) {
    absl::StrAppend(&summary, "  ", category, ":");
    for (const auto& [outcome, n] : by_outcome) absl::StrAppend(&summary, " ", outcome, " ", n);
    absl::StrAppend(&summary, "\n");
  }
  std::vector<std::pair<absl::Duration, std::string>> slow;
  for (const auto& [name, d] : slowest_) slow.emplace_back(d, name);
  std::sort(slow.rbegin(), slow.rend());
  for (size_t i = 0; i < slow.size() && i < 5; ++i) {
    absl::StrAppend(&summary, "  slowest: ", slow[i].second, " ",
                    absl::FormatDuration(slow[i].first), "\n");
  }
  std::printf("%s", summary.c_str());

  // SIGTERM drains and exits 0; under the sanitizers a leak or a report makes the exit non-zero.
  server_->Signal(SIGTERM);
  EXPECT_EQ(server_->Wait(), 0);
  stderr_thread_.join();
  EXPECT_FALSE(absl::StrContains(server_stderr_, "Sanitizer")) << server_stderr_;
  EXPECT_FALSE(absl::StrContains(server_stderr_, "runtime error")) << server_stderr_;
  server_.reset();
}

}  // namespace
}  // namespace cl

// cl-load: load, overload and soak runs of one cl-server, and the same load against a bare gRPC
// streaming echo of the same bytes, in one run (bench/load/README.md has the figures).
//
// Each of --streams client threads loops: stream the session (AnalyzeChunk messages, serialized
// once) over its own channel, wait for the answer, record the latency and the status code. Every
// call carries its own session id, so the server's retry cache never answers in place of an
// analysis. Both servers are child processes of this one (the echo is this binary with
// --serve_echo), so their CPU time and memory are read from /proc: the cost per session is the
// server's CPU seconds over the sessions it answered.
//
// Phases (--phases, comma-separated, in this order):
//   echo      the echo server under the load
//   analyze   cl-server under the load; RSS idle before, peak, idle after
//   overload  cl-server with a small --max_inflight under --overload_streams: refusals must be
//             RESOURCE_EXHAUSTED, and quick
//   soak      cl-server under the load for --soak; RSS sampled every --soak_sample
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage_config.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "capture/capture_io.h"
#include "capture/stream/capture_splitter.h"
#include "capture/stream/part_packer.h"
#include "common/status_macros.h"
#include "compile_lens/v1/service.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/proto_buffer_writer.h"
#include "grpcpp/support/byte_buffer.h"
#include "tests/testing/subprocess.h"

ABSL_FLAG(std::string, server, CL_BINARY_DIR "/service/cl-server", "the cl-server binary");
ABSL_FLAG(std::string, head, CL_SOURCE_DIR "/examples/hero/head.cls.json", "the session's head capture");
ABSL_FLAG(std::string, base, CL_SOURCE_DIR "/examples/hero/base.cls.json", "its base capture (\"\": none)");
ABSL_FLAG(bool, html, false, "ask for the HTML report too (cl-client does with --html)");
ABSL_FLAG(bool, batch_parts, true,
          "pack consecutive parts into messages up to the part budget, as cl-client does; false: one "
          "part per message, as clients did before PartBatch");
ABSL_FLAG(int, streams, 16, "concurrent client streams");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(20), "measured time per phase");
ABSL_FLAG(absl::Duration, warmup, absl::Seconds(3), "unmeasured load before each phase");
ABSL_FLAG(absl::Duration, settle, absl::Seconds(5), "idle time before the 'after' RSS is read");
ABSL_FLAG(absl::Duration, prime, absl::Seconds(8),
          "load before the 'before' RSS is read: long enough to fill the server's recent-sessions cache");
ABSL_FLAG(std::string, phases, "echo,analyze,overload", "echo, analyze, overload, soak");
ABSL_FLAG(int, server_threads, 0, "cl-server --analysis_threads (0: one per hardware thread)");
ABSL_FLAG(int, max_inflight, 32, "cl-server --max_inflight for the echo/analyze/soak phases");
ABSL_FLAG(int, overload_inflight, 4, "cl-server --max_inflight in the overload phase");
ABSL_FLAG(int, overload_streams, 64, "client streams in the overload phase");
ABSL_FLAG(absl::Duration, admission_wait, absl::Seconds(1),
          "after the options, how long to wait for the server's admission headers before sending anyway");
ABSL_FLAG(absl::Duration, backoff, absl::Milliseconds(50),
          "mean pause (jittered 0.5x-1.5x) after RESOURCE_EXHAUSTED, as the refusal asks and cl-client does");
ABSL_FLAG(absl::Duration, soak, absl::Minutes(5), "length of the soak phase");
ABSL_FLAG(absl::Duration, soak_sample, absl::Seconds(10), "RSS sampling period in the soak phase");
ABSL_FLAG(std::string, json, "", "also write the results here as JSON");
ABSL_FLAG(bool, serve_echo, false, "(internal) serve the echo on --echo_listen and print the address");
ABSL_FLAG(std::string, echo_listen, "127.0.0.1:0", "(internal) the echo server's address");

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using Clock = std::chrono::steady_clock;
constexpr const char* kMethod = "/compile_lens.v1.CompileLens/Analyze";

// ---- The echo server -----------------------------------------------------------------------

// Reads every message of the stream and answers with all of their bytes in one message: what a
// server that only receives the session, and returns as much, costs in gRPC alone.
class EchoReactor : public grpc::ServerGenericBidiReactor {
 public:
  // Admits every call the way cl-server does: response headers, marked, at once.
  explicit EchoReactor(grpc::GenericCallbackServerContext* context) {
    context->AddInitialMetadata("cl-admitted", "1");
    StartSendInitialMetadata();
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (ok) {
      std::vector<grpc::Slice> slices;
      if (in_.Dump(&slices).ok()) {
        for (const grpc::Slice& s : slices) received_.append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
      StartRead(&in_);
      return;
    }
    grpc::Slice slice(received_);
    out_ = grpc::ByteBuffer(&slice, 1);
    StartWrite(&out_);
  }
  void OnWriteDone(bool ok) override { Finish(ok ? grpc::Status::OK : grpc::Status(grpc::StatusCode::UNAVAILABLE, "write")); }
  void OnDone() override { delete this; }

 private:
  grpc::ByteBuffer in_, out_;
  std::string received_;
};

class EchoService : public grpc::CallbackGenericService {
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override {
    return new EchoReactor(context);
  }
};

int ServeEcho() {
  EchoService service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::GetFlag(FLAGS_echo_listen), grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(&service);
  builder.SetMaxReceiveMessageSize(1 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    std::cerr << "cl-load: the echo server cannot listen on " << absl::GetFlag(FLAGS_echo_listen) << "\n";
    return 1;
  }
  const std::string listen = absl::GetFlag(FLAGS_echo_listen);
  const std::string host = listen.substr(0, listen.rfind(':'));
  // The line cl-server prints, so that one reader starts either server.
  std::cerr << "cl-server: listening on " << host << ":" << port << std::endl;
  server->Wait();
  return 0;
}

// ---- The load --------------------------------------------------------------------------------

grpc::ByteBuffer Serialize(const v1::AnalyzeChunk& chunk) {
  grpc::ByteBuffer buffer;
  bool own = false;
  (void)grpc::SerializationTraits<v1::AnalyzeChunk>::Serialize(chunk, &buffer, &own);
  return buffer;
}

// The session's stream, cut once: the header part of the head capture is rewritten per call (its
// session id), everything else is sent as serialized here.
struct Session {
  std::vector<v1::AnalyzeChunk> chunks;
  std::vector<grpc::ByteBuffer> serialized;
  size_t header = 0;  // the index of the head capture's header chunk
  size_t bytes = 0;   // the stream's size

  grpc::ByteBuffer HeaderFor(const std::string& id) const {
    v1::AnalyzeChunk chunk = chunks[header];
    chunk.mutable_part()->mutable_header()->mutable_session()->set_id(id);
    return Serialize(chunk);
  }
};

absl::StatusOr<Session> LoadSession() {
  absl::StatusOr<v1::SessionCapture> head = ReadCaptureFile(absl::GetFlag(FLAGS_head));
  if (!head.ok()) return head.status();
  std::optional<v1::SessionCapture> base;
  if (!absl::GetFlag(FLAGS_base).empty()) {
    absl::StatusOr<v1::SessionCapture> b = ReadCaptureFile(absl::GetFlag(FLAGS_base));
    if (!b.ok()) return b.status();
    base = std::move(*b);
  }
  Session s;
  v1::AnalyzeChunk options;
  options.mutable_options()->set_render_html(absl::GetFlag(FLAGS_html));
  s.chunks.push_back(options);
  // The head's header goes alone, in its own message, so that HeaderFor rewrites a small one.
  PartPacker packer(absl::GetFlag(FLAGS_batch_parts) ? kDefaultPartBudget : 0);
  const auto push = [&](v1::AnalyzeChunk&& chunk) {
    s.chunks.push_back(std::move(chunk));
    return absl::OkStatus();
  };
  auto emit = [&](v1::CapturePart&& part) -> absl::Status {
    if (!part.has_header() || part.side() != v1::HEAD) return packer.Add(std::move(part), push);
    CL_RETURN_IF_ERROR(packer.Flush(push));
    s.header = s.chunks.size();
    CL_RETURN_IF_ERROR(packer.Add(std::move(part), push));
    return packer.Flush(push);
  };
  if (absl::Status st = SplitCapture(*head, v1::HEAD, kDefaultPartBudget, emit); !st.ok()) return st;
  if (base) {
    if (absl::Status st = SplitCapture(*base, v1::BASE, kDefaultPartBudget, emit); !st.ok()) return st;
  }
  if (absl::Status st = packer.Flush(push); !st.ok()) return st;
  s.chunks.emplace_back().mutable_end()->set_parts(packer.parts());
  for (const v1::AnalyzeChunk& c : s.chunks) {
    s.serialized.push_back(Serialize(c));
    s.bytes += c.ByteSizeLong();
  }
  return s;
}

struct CallResult {
  double seconds = 0;
  grpc::StatusCode code = grpc::StatusCode::OK;
  bool report = false;  // an AnalyzeResponse with a report came back (cl-server), or the echo
};

// One call, start to answer, on this thread's completion queue. After the options the client
// waits (up to --admission_wait) for the server's response headers: marked `cl-admitted`, the call
// was admitted and the session follows; without the mark (a trailers-only answer) it was refused,
// and nothing more is sent. The headers are also watched for during the writes, for a server that
// ends the call early.
CallResult Call(grpc::GenericStub& stub, grpc::CompletionQueue& cq, const Session& session,
                const std::string& id, bool echo) {
  void* const kOp = reinterpret_cast<void*>(1);
  void* const kMetadata = reinterpret_cast<void*>(2);
  const auto start = Clock::now();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call = stub.PrepareCall(&context, kMethod, &cq);
  void* tag = nullptr;
  bool ok = false;
  bool metadata_pending = false, answered = false, admitted = false;
  // Headers with a live call, marked by cl-server: admitted. A refusal ends the call with its
  // headers (trailers only).
  auto on_metadata = [&](bool live) {
    metadata_pending = false;
    answered = true;
    admitted = live && context.GetServerInitialMetadata().count("cl-admitted") > 0;
  };
  // Waits for the one pending operation, noting the metadata if it arrives first.
  auto step = [&] {
    while (cq.Next(&tag, &ok)) {
      if (tag != kMetadata) return ok;
      on_metadata(ok);
    }
    return false;
  };
  call->StartCall(kOp);
  bool sent = step();
  if (sent) {
    call->ReadInitialMetadata(kMetadata);
    metadata_pending = true;
  }
  size_t i = 0;
  for (; sent && !(answered && !admitted) && i < session.serialized.size(); ++i) {
    call->Write(i == session.header ? session.HeaderFor(id) : session.serialized[i], kOp);
    sent = step();
    if (i == 0 && sent && metadata_pending) {
      // The options are out: cl-server answers admission with its response headers (or refuses,
      // trailers only). A server that sends none within the wait gets the session anyway.
      const auto wait_until = std::chrono::system_clock::now() + absl::ToChronoNanoseconds(absl::GetFlag(FLAGS_admission_wait));
      if (cq.AsyncNext(&tag, &ok, wait_until) == grpc::CompletionQueue::GOT_EVENT) on_metadata(ok);
    }
  }
  if (sent && !(answered && !admitted)) {
    call->WritesDone(kOp);
    step();
  }
  grpc::ByteBuffer answer;
  call->Read(&answer, kOp);
  const bool read = step();
  grpc::Status status;
  call->Finish(&status, kOp);
  step();
  while (metadata_pending && cq.Next(&tag, &ok)) metadata_pending = tag != kMetadata;
  CallResult r;
  r.code = status.error_code();
  if (!status.ok() && std::getenv("CL_LOAD_DEBUG") != nullptr) {
    std::cerr << status.error_message() << " answered=" << answered << " sent=" << sent << " writes=" << i << "\n";
  }
  if (status.ok() && read) {
    if (echo) {
      r.report = answer.Length() == session.bytes;
    } else {
      v1::AnalyzeResponse response;
      r.report = grpc::SerializationTraits<v1::AnalyzeResponse>::Deserialize(&answer, &response).ok() &&
                 response.has_report();
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

struct ProcStats {
  double cpu_seconds = 0;
  double rss_mib = 0;
  double hwm_mib = 0;
};

ProcStats ReadProc(pid_t pid) {
  ProcStats p;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Fields after the command (which may hold spaces) start after the last ')'.
  const size_t close = text.rfind(')');
  if (close != std::string::npos) {
    std::vector<std::string> f = absl::StrSplit(text.substr(close + 2), ' ');
    double utime = 0, stime = 0;
    if (f.size() > 12 && absl::SimpleAtod(f[11], &utime) && absl::SimpleAtod(f[12], &stime)) {
      p.cpu_seconds = (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
  }
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(status, line);) {
    double kib = 0;
    absl::string_view v = line;
    if (absl::ConsumePrefix(&v, "VmRSS:") && absl::SimpleAtod(absl::StripSuffix(absl::StripAsciiWhitespace(v), " kB"), &kib)) {
      p.rss_mib = kib / 1024;
    } else if (absl::ConsumePrefix(&v, "VmHWM:") &&
               absl::SimpleAtod(absl::StripSuffix(absl::StripAsciiWhitespace(v), " kB"), &kib)) {
      p.hwm_mib = kib / 1024;
    }
  }
  return p;
}

double SelfCpuSeconds() { return ReadProc(getpid()).cpu_seconds; }

struct LoadResult {
  size_t calls = 0;
  std::map<grpc::StatusCode, size_t> codes;
  size_t reports = 0;
  std::vector<double> ok_latencies, refused_latencies;
  double seconds = 0;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// `streams` threads calling `address` until `stop`; calls that end after `measure_from` count.
LoadResult RunLoad(const std::string& address, const Session& session, int streams, bool echo,
                   Clock::time_point measure_from, Clock::time_point stop, const std::string& tag) {
  std::vector<LoadResult> per(static_cast<size_t>(streams));
  std::vector<std::thread> threads;
  for (int t = 0; t < streams; ++t) {
    threads.emplace_back([&, t] {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection per stream, as per job
      args.SetMaxSendMessageSize(1 << 20);
      grpc::GenericStub stub(grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
      grpc::CompletionQueue cq;
      LoadResult& r = per[static_cast<size_t>(t)];
      std::mt19937 jitter(static_cast<uint32_t>(t));
      const double backoff = absl::ToDoubleSeconds(absl::GetFlag(FLAGS_backoff));
      for (uint64_t n = 0; Clock::now() < stop; ++n) {
        const CallResult c = Call(stub, cq, session, absl::StrCat(tag, "-", t, "-", n), echo);
        if (c.code == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          std::this_thread::sleep_for(std::chrono::duration<double>(
              backoff * std::uniform_real_distribution<double>(0.5, 1.5)(jitter)));
        }
        if (Clock::now() < measure_from) continue;
        ++r.calls;
        ++r.codes[c.code];
        r.reports += c.report;
        (c.code == grpc::StatusCode::OK ? r.ok_latencies : r.refused_latencies).push_back(c.seconds);
      }
      cq.Shutdown();
      void* tag_ = nullptr;
      bool ok = false;
      while (cq.Next(&tag_, &ok)) {
      }
    });
  }
  for (std::thread& t : threads) t.join();
  LoadResult all;
  for (LoadResult& r : per) {
    all.calls += r.calls;
    all.reports += r.reports;
    for (auto [code, n] : r.codes) all.codes[code] += n;
    all.ok_latencies.insert(all.ok_latencies.end(), r.ok_latencies.begin(), r.ok_latencies.end());
    all.refused_latencies.insert(all.refused_latencies.end(), r.refused_latencies.begin(), r.refused_latencies.end());
  }
  all.seconds = std::chrono::duration<double>(stop - measure_from).count();
  return all;
}

std::string CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    default: return absl::StrCat("code_", static_cast<int>(code));
  }
}

std::chrono::nanoseconds ToChrono(absl::Duration d) { return absl::ToChronoNanoseconds(d); }

// A server child: cl-server, or this binary serving the echo.
struct Server {
  std::unique_ptr<testing::Subprocess> process;
  std::string address;
  pid_t pid = -1;
};

absl::StatusOr<Server> StartServer(std::vector<std::string> argv) {
  Server s;
  s.process = std::make_unique<testing::Subprocess>(argv);
  absl::StatusOr<std::string> address = s.process->ReadAnnounced("cl-server: listening on ");
  if (!address.ok()) return absl::UnavailableError(absl::StrCat(argv[0], " did not start: ", address.status().message()));
  s.address = *std::move(address);
  s.pid = s.process->pid();
  return s;
}

std::vector<std::string> ServerArgv(int max_inflight) {
  return {absl::GetFlag(FLAGS_server), "--listen=127.0.0.1:0", "--drain_delay=0s",
          absl::StrCat("--analysis_threads=", absl::GetFlag(FLAGS_server_threads)),
          absl::StrCat("--max_inflight=", max_inflight)};
}

// ---- Reporting ---------------------------------------------------------------------------------

struct PhaseReport {
  std::string name;
  int streams = 0;
  LoadResult load;
  double server_cpu = 0, client_cpu = 0;
  std::vector<std::pair<std::string, double>> extra;  // named figures (RSS, ...)
  std::vector<double> rss_samples_mib;                 // the soak's, in order
};

std::string Json(const std::vector<PhaseReport>& phases, const Session& session) {
  std::ostringstream o;
  o << "{\n  \"session_bytes\": " << session.bytes << ",\n  \"stream_messages\": " << session.chunks.size()
    << ",\n  \"html\": " << (absl::GetFlag(FLAGS_html) ? "true" : "false") << ",\n  \"phases\": [";
  for (size_t i = 0; i < phases.size(); ++i) {
    const PhaseReport& p = phases[i];
    const double ok = static_cast<double>(p.load.codes.count(grpc::StatusCode::OK) ? p.load.codes.at(grpc::StatusCode::OK) : 0);
    o << (i ? "," : "") << "\n    {\"phase\": \"" << p.name << "\", \"streams\": " << p.streams
      << ", \"seconds\": " << p.load.seconds << ", \"calls\": " << p.load.calls << ", \"reports\": " << p.load.reports
      << ", \"ok_per_second\": " << ok / p.load.seconds
      << ", \"ok_p50_ms\": " << 1e3 * Percentile(p.load.ok_latencies, 0.5)
      << ", \"ok_p99_ms\": " << 1e3 * Percentile(p.load.ok_latencies, 0.99)
      << ", \"refused_p99_ms\": " << 1e3 * Percentile(p.load.refused_latencies, 0.99)
      << ", \"server_cpu_ms_per_ok\": " << (ok > 0 ? 1e3 * p.server_cpu / ok : 0)
      << ", \"client_cpu_ms_per_call\": " << (p.load.calls ? 1e3 * p.client_cpu / static_cast<double>(p.load.calls) : 0)
      << ", \"codes\": {";
    bool first = true;
    for (auto [code, n] : p.load.codes) {
      o << (first ? "" : ", ") << "\"" << CodeName(code) << "\": " << n;
      first = false;
    }
    o << "}";
    for (const auto& [k, v] : p.extra) o << ", \"" << k << "\": " << v;
    if (!p.rss_samples_mib.empty()) {
      o << ", \"rss_samples_mib\": [";
      for (size_t s = 0; s < p.rss_samples_mib.size(); ++s) o << (s ? ", " : "") << p.rss_samples_mib[s];
      o << "]";
    }
    o << "}";
  }
  o << "\n  ]\n}\n";
  return o.str();
}

void Print(const PhaseReport& p) {
  const size_t ok = p.load.codes.count(grpc::StatusCode::OK) ? p.load.codes.at(grpc::StatusCode::OK) : 0;
  std::cout << absl::StrFormat(
      "%-9s %3d streams  %8.1f ok/s  p50 %7.2f ms  p99 %7.2f ms  server %6.3f ms CPU/session  client %6.3f ms CPU/call",
      p.name, p.streams, static_cast<double>(ok) / p.load.seconds, 1e3 * Percentile(p.load.ok_latencies, 0.5),
      1e3 * Percentile(p.load.ok_latencies, 0.99), ok ? 1e3 * p.server_cpu / static_cast<double>(ok) : 0.0,
      p.load.calls ? 1e3 * p.client_cpu / static_cast<double>(p.load.calls) : 0.0);
  std::cout << "\n          codes:";
  for (auto [code, n] : p.load.codes) std::cout << " " << CodeName(code) << "=" << n;
  if (!p.load.refused_latencies.empty()) {
    std::cout << absl::StrFormat("  refused p50 %.2f ms p99 %.2f ms", 1e3 * Percentile(p.load.refused_latencies, 0.5),
                                 1e3 * Percentile(p.load.refused_latencies, 0.99));
  }
  for (const auto& [k, v] : p.extra) std::cout << absl::StrFormat("  %s=%.1f", k, v);
  if (!p.rss_samples_mib.empty()) {
    std::cout << "\n          RSS every sample (MiB):";
    for (double mib : p.rss_samples_mib) std::cout << absl::StrFormat(" %.1f", mib);
  }
  std::cout << std::endl;
}

// Loads `server` for warmup + duration with `streams`; fills the phase's figures.
PhaseReport Measure(const std::string& name, const Server& server, const Session& session, int streams, bool echo,
                    absl::Duration duration) {
  const auto measure_from = Clock::now() + ToChrono(absl::GetFlag(FLAGS_warmup));
  const auto stop = measure_from + ToChrono(duration);
  // CPU counters are read at the start of the measured window, from a thread that waits for it.
  ProcStats server_before;
  double client_before = 0;
  std::thread sampler([&] {
    std::this_thread::sleep_until(measure_from);
    server_before = ReadProc(server.pid);
    client_before = SelfCpuSeconds();
  });
  PhaseReport p;
  p.name = name;
  p.streams = streams;
  p.load = RunLoad(server.address, session, streams, echo, measure_from, stop, name);
  sampler.join();
  p.server_cpu = ReadProc(server.pid).cpu_seconds - server_before.cpu_seconds;
  p.client_cpu = SelfCpuSeconds() - client_before;
  return p;
}

int Run() {
  absl::StatusOr<Session> session = LoadSession();
  if (!session.ok()) {
    std::cerr << "cl-load: " << session.status().message() << "\n";
    return 2;
  }
  std::cout << "session: " << session->bytes << " bytes in " << session->chunks.size() << " messages, html "
            << (absl::GetFlag(FLAGS_html) ? "on" : "off") << "; " << std::thread::hardware_concurrency()
            << " hardware threads\n";
  const int streams = absl::GetFlag(FLAGS_streams);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  std::vector<PhaseReport> reports;
  for (absl::string_view phase : absl::StrSplit(absl::GetFlag(FLAGS_phases), ',', absl::SkipEmpty())) {
    if (phase == "echo") {
      char self[4096];
      const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
      if (n <= 0) return 2;
      absl::StatusOr<Server> echo = StartServer({std::string(self, static_cast<size_t>(n)), "--serve_echo"});
      if (!echo.ok()) {
        std::cerr << "cl-load: " << echo.status().message() << "\n";
        return 2;
      }
      reports.push_back(Measure("echo", *echo, *session, streams, /*echo=*/true, duration));
      reports.back().extra.push_back({"server_peak_rss_mib", ReadProc(echo->pid).hwm_mib});
    } else if (phase == "analyze" || phase == "soak") {
      absl::StatusOr<Server> server = StartServer(ServerArgv(absl::GetFlag(FLAGS_max_inflight)));
      if (!server.ok()) {
        std::cerr << "cl-load: " << server.status().message() << "\n";
        return 2;
      }
      // The baseline: after a short load has warmed every pool and cache, then idle.
      const LoadResult prime = RunLoad(server->address, *session, streams, false, Clock::now(),
                                       Clock::now() + ToChrono(absl::GetFlag(FLAGS_prime)), "prime");
      std::this_thread::sleep_for(ToChrono(absl::GetFlag(FLAGS_settle)));
      const double before = ReadProc(server->pid).rss_mib;
      std::vector<double> samples;
      std::atomic<bool> done{false};
      std::thread sampler([&] {
        while (!done) {
          std::this_thread::sleep_for(ToChrono(absl::GetFlag(FLAGS_soak_sample)));
          if (!done) samples.push_back(ReadProc(server->pid).rss_mib);
        }
      });
      const bool soak = phase == "soak";
      PhaseReport p = Measure(std::string(phase), *server, *session, streams, false, soak ? absl::GetFlag(FLAGS_soak) : duration);
      done = true;
      sampler.join();
      const double peak = ReadProc(server->pid).hwm_mib;
      std::this_thread::sleep_for(ToChrono(absl::GetFlag(FLAGS_settle)));
      const double after = ReadProc(server->pid).rss_mib;
      p.extra = {{"prime_calls", static_cast<double>(prime.calls)}, {"rss_before_mib", before}, {"rss_peak_mib", peak}, {"rss_after_mib", after},
                 {"rss_growth_pct", 100 * (after - before) / before}};
      if (soak && samples.size() >= 2) {
        p.extra.push_back({"rss_first_sample_mib", samples.front()});
        p.extra.push_back({"rss_last_sample_mib", samples.back()});
        p.extra.push_back({"rss_max_sample_mib", *std::max_element(samples.begin(), samples.end())});
        p.rss_samples_mib = samples;
      }
      reports.push_back(std::move(p));
    } else if (phase == "overload") {
      absl::StatusOr<Server> server = StartServer(ServerArgv(absl::GetFlag(FLAGS_overload_inflight)));
      if (!server.ok()) {
        std::cerr << "cl-load: " << server.status().message() << "\n";
        return 2;
      }
      PhaseReport p = Measure("overload", *server, *session, absl::GetFlag(FLAGS_overload_streams), false, duration);
      p.extra.push_back({"max_inflight", absl::GetFlag(FLAGS_overload_inflight)});
      p.extra.push_back({"server_peak_rss_mib", ReadProc(server->pid).hwm_mib});
      reports.push_back(std::move(p));
    } else {
      std::cerr << "cl-load: unknown phase \"" << phase << "\" (echo, analyze, overload, soak)\n";
      return 2;
    }
    Print(reports.back());
  }
  const PhaseReport* echo = nullptr;
  const PhaseReport* analyze = nullptr;
  for (const PhaseReport& p : reports) {
    if (p.name == "echo") echo = &p;
    if (p.name == "analyze") analyze = &p;
  }
  if (echo != nullptr && analyze != nullptr) {
    const auto per_ok = [](const PhaseReport& p) {
      const auto it = p.load.codes.find(grpc::StatusCode::OK);
      return it == p.load.codes.end() ? 0.0 : p.server_cpu / static_cast<double>(it->second);
    };
    std::cout << absl::StrFormat("analysis / echo server CPU per session: %.2fx\n", per_ok(*analyze) / per_ok(*echo));
  }
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::ofstream(path) << Json(reports, *session);
  }
  return 0;
}

}  // namespace
}  // namespace cl

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "cl-load [--streams=16] [--duration=20s] [--phases=echo,analyze,overload[,soak]] [--json=OUT]\n"
      "Loads a cl-server it starts with the hero session over gRPC (and a bare gRPC echo of the same\n"
      "bytes), reporting throughput, p50/p99 latency, status codes, server CPU per session and RSS.");
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) { return absl::EndsWith(file, "load/cl_load.cc"); };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  absl::ParseCommandLine(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  if (absl::GetFlag(FLAGS_serve_echo)) return cl::ServeEcho();
  return cl::Run();
}

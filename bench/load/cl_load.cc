// cl-load: load, overload and soak runs of one cl-server, and the same load against a bare gRPC
// streaming echo of the same bytes, in one run (bench/load/README.md has the figures).
//
// Each of --streams client threads loops: stream the session (AnalyzeChunk messages, serialized
// once) over its own channel, wait for the answer, record the latency and the status code
// (load.h). Both servers are child processes of this one (the echo, echo_server.h, is this binary
// with --serve_echo), so their CPU time and memory are read from /proc
// (tests/testing/proc_stats.h): the cost per session is the server's CPU seconds over the sessions
// it answered. This file is the run: the flags, the servers it starts, the phases and their report.
//
// Phases (--phases, comma-separated, in this order):
//   echo      the echo server under the load
//   analyze   cl-server under the load; RSS idle before, peak, idle after
//   overload  cl-server with a small --max_inflight under --overload_streams: refusals must be
//             RESOURCE_EXHAUSTED, and quick
//   soak      cl-server under the load for --soak; RSS sampled every --soak_sample
//   amplify   one str-table amplifier log (hostile.h), then the time until a normal session is
//             answered again, and the server's peak RSS
//   idle      --max_inflight streams that send the options and nothing more, the same figures
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/load/echo_server.h"
#include "bench/load/hostile.h"
#include "bench/load/load.h"
#include "grpcpp/grpcpp.h"
#include "tests/testing/proc_stats.h"
#include "tests/testing/subprocess.h"

ABSL_FLAG(std::string, server, CL_BINARY_DIR "/service/cl-server", "the cl-server binary");
ABSL_FLAG(std::string, head, CL_SOURCE_DIR "/examples/hero/head.cls.json",
          "the session's head capture");
ABSL_FLAG(std::string, base, CL_SOURCE_DIR "/examples/hero/base.cls.json",
          "its base capture (\"\": none)");
ABSL_FLAG(bool, html, false, "ask for the HTML report too (cl-client does with --html)");
ABSL_FLAG(
    bool, batch_parts, true,
    "pack consecutive parts into messages up to the part budget, as cl-client does; false: one "
    "part per message, as clients did before PartBatch");
ABSL_FLAG(int, streams, 16, "concurrent client streams");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(20), "measured time per phase");
ABSL_FLAG(absl::Duration, warmup, absl::Seconds(3), "unmeasured load before each phase");
ABSL_FLAG(absl::Duration, settle, absl::Seconds(5), "idle time before the 'after' RSS is read");
ABSL_FLAG(
    absl::Duration, prime, absl::Seconds(8),
    "load before the 'before' RSS is read: long enough to fill the server's recent-sessions cache");
ABSL_FLAG(std::string, phases, "echo,analyze,overload",
          "echo, analyze, overload, soak, amplify, idle");
ABSL_FLAG(int, amplify_name_bytes, 1 << 20, "amplify: the str table's file name, in bytes");
ABSL_FLAG(int, amplify_frames, 1000, "amplify: the frames that name it");
ABSL_FLAG(int, server_threads, 0, "cl-server --analysis_threads (0: one per hardware thread)");
ABSL_FLAG(int, max_inflight, 32, "cl-server --max_inflight for the echo/analyze/soak phases");
ABSL_FLAG(int, overload_inflight, 4, "cl-server --max_inflight in the overload phase");
ABSL_FLAG(int, overload_streams, 64, "client streams in the overload phase");
ABSL_FLAG(
    absl::Duration, admission_wait, absl::Seconds(1),
    "after the options, how long to wait for the server's admission headers before sending anyway");
ABSL_FLAG(absl::Duration, backoff, absl::Milliseconds(50),
          "mean pause (jittered 0.5x-1.5x) after RESOURCE_EXHAUSTED, as the refusal asks and "
          "cl-client does");
ABSL_FLAG(absl::Duration, soak, absl::Minutes(5), "length of the soak phase");
ABSL_FLAG(absl::Duration, soak_sample, absl::Seconds(10), "RSS sampling period in the soak phase");
ABSL_FLAG(std::string, json, "", "also write the results here as JSON");
ABSL_FLAG(bool, serve_echo, false,
          "(internal) serve the echo on --echo_listen and print the address");
ABSL_FLAG(std::string, echo_listen, "127.0.0.1:0", "(internal) the echo server's address");

namespace cl::load {
namespace {

using ::cl::testing::ProcStats;
using ::cl::testing::ReadProc;
using ::cl::testing::SelfCpuSeconds;

SessionOptions SessionFlags() {
  return {absl::GetFlag(FLAGS_head), absl::GetFlag(FLAGS_base), absl::GetFlag(FLAGS_html),
          absl::GetFlag(FLAGS_batch_parts)};
}

Pacing PacingFlags() { return {absl::GetFlag(FLAGS_admission_wait), absl::GetFlag(FLAGS_backoff)}; }

std::string CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    default:
      return absl::StrCat("code_", static_cast<int>(code));
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
  if (!address.ok())
    return absl::UnavailableError(
        absl::StrCat(argv[0], " did not start: ", address.status().message()));
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
  std::vector<double> rss_samples_mib;                // the soak's, in order
};

std::string Json(const std::vector<PhaseReport>& phases, const Session& session) {
  std::ostringstream o;
  o << "{\n  \"session_bytes\": " << session.bytes
    << ",\n  \"stream_messages\": " << session.chunks.size()
    << ",\n  \"html\": " << (absl::GetFlag(FLAGS_html) ? "true" : "false") << ",\n  \"phases\": [";
  for (size_t i = 0; i < phases.size(); ++i) {
    const PhaseReport& p = phases[i];
    const double ok = static_cast<double>(
        p.load.codes.count(grpc::StatusCode::OK) ? p.load.codes.at(grpc::StatusCode::OK) : 0);
    if (p.load.calls == 0) {  // a hostile phase: its figures only
      o << (i ? "," : "") << "\n    {\"phase\": \"" << p.name << "\", \"streams\": " << p.streams;
      for (const auto& [k, v] : p.extra) o << ", \"" << k << "\": " << v;
      o << "}";
      continue;
    }
    o << (i ? "," : "") << "\n    {\"phase\": \"" << p.name << "\", \"streams\": " << p.streams
      << ", \"seconds\": " << p.load.seconds << ", \"calls\": " << p.load.calls
      << ", \"reports\": " << p.load.reports << ", \"ok_per_second\": " << ok / p.load.seconds
      << ", \"ok_p50_ms\": " << 1e3 * Percentile(p.load.ok_latencies, 0.5)
      << ", \"ok_p99_ms\": " << 1e3 * Percentile(p.load.ok_latencies, 0.99)
      << ", \"refused_p99_ms\": " << 1e3 * Percentile(p.load.refused_latencies, 0.99)
      << ", \"server_cpu_ms_per_ok\": " << (ok > 0 ? 1e3 * p.server_cpu / ok : 0)
      << ", \"client_cpu_ms_per_call\": "
      << (p.load.calls ? 1e3 * p.client_cpu / static_cast<double>(p.load.calls) : 0)
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
      for (size_t s = 0; s < p.rss_samples_mib.size(); ++s)
        o << (s ? ", " : "") << p.rss_samples_mib[s];
      o << "]";
    }
    o << "}";
  }
  o << "\n  ]\n}\n";
  return o.str();
}

void Print(const PhaseReport& p) {
  if (p.load.calls == 0) {  // a hostile phase: its figures only
    std::cout << absl::StrFormat("%-9s %3d streams ", p.name, p.streams);
    for (const auto& [k, v] : p.extra) std::cout << absl::StrFormat("  %s=%.2f", k, v);
    std::cout << std::endl;
    return;
  }
  const size_t ok =
      p.load.codes.count(grpc::StatusCode::OK) ? p.load.codes.at(grpc::StatusCode::OK) : 0;
  std::cout << absl::StrFormat(
      "%-9s %3d streams  %8.1f ok/s  p50 %7.2f ms  p99 %7.2f ms  server %6.3f ms CPU/session  "
      "client %6.3f ms CPU/call",
      p.name, p.streams, static_cast<double>(ok) / p.load.seconds,
      1e3 * Percentile(p.load.ok_latencies, 0.5), 1e3 * Percentile(p.load.ok_latencies, 0.99),
      ok ? 1e3 * p.server_cpu / static_cast<double>(ok) : 0.0,
      p.load.calls ? 1e3 * p.client_cpu / static_cast<double>(p.load.calls) : 0.0);
  std::cout << "\n          codes:";
  for (auto [code, n] : p.load.codes) std::cout << " " << CodeName(code) << "=" << n;
  if (!p.load.refused_latencies.empty()) {
    std::cout << absl::StrFormat("  refused p50 %.2f ms p99 %.2f ms",
                                 1e3 * Percentile(p.load.refused_latencies, 0.5),
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
PhaseReport Measure(const std::string& name, const Server& server, const Session& session,
                    int streams, bool echo, absl::Duration duration) {
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
  p.load = RunLoad(server.address, session, streams, echo, measure_from, stop, name, PacingFlags());
  sampler.join();
  p.server_cpu = ReadProc(server.pid).cpu_seconds - server_before.cpu_seconds;
  p.client_cpu = SelfCpuSeconds() - client_before;
  return p;
}

int Run() {
  absl::StatusOr<Session> session = LoadSession(SessionFlags());
  if (!session.ok()) {
    std::cerr << "cl-load: " << session.status().message() << "\n";
    return 2;
  }
  std::cout << "session: " << session->bytes << " bytes in " << session->chunks.size()
            << " messages, html " << (absl::GetFlag(FLAGS_html) ? "on" : "off") << "; "
            << std::thread::hardware_concurrency() << " hardware threads\n";
  const int streams = absl::GetFlag(FLAGS_streams);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  std::vector<PhaseReport> reports;
  for (absl::string_view phase :
       absl::StrSplit(absl::GetFlag(FLAGS_phases), ',', absl::SkipEmpty())) {
    if (phase == "echo") {
      char self[4096];
      const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
      if (n <= 0) return 2;
      absl::StatusOr<Server> echo =
          StartServer({std::string(self, static_cast<size_t>(n)), "--serve_echo"});
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
      const LoadResult prime =
          RunLoad(server->address, *session, streams, false, Clock::now(),
                  Clock::now() + ToChrono(absl::GetFlag(FLAGS_prime)), "prime", PacingFlags());
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
      PhaseReport p = Measure(std::string(phase), *server, *session, streams, false,
                              soak ? absl::GetFlag(FLAGS_soak) : duration);
      done = true;
      sampler.join();
      const double peak = ReadProc(server->pid).hwm_mib;
      std::this_thread::sleep_for(ToChrono(absl::GetFlag(FLAGS_settle)));
      const double after = ReadProc(server->pid).rss_mib;
      p.extra = {{"prime_calls", static_cast<double>(prime.calls)},
                 {"rss_before_mib", before},
                 {"rss_peak_mib", peak},
                 {"rss_after_mib", after},
                 {"rss_growth_pct", 100 * (after - before) / before}};
      if (soak && samples.size() >= 2) {
        p.extra.push_back({"rss_first_sample_mib", samples.front()});
        p.extra.push_back({"rss_last_sample_mib", samples.back()});
        p.extra.push_back(
            {"rss_max_sample_mib", *std::max_element(samples.begin(), samples.end())});
        p.rss_samples_mib = samples;
      }
      reports.push_back(std::move(p));
    } else if (phase == "overload") {
      absl::StatusOr<Server> server =
          StartServer(ServerArgv(absl::GetFlag(FLAGS_overload_inflight)));
      if (!server.ok()) {
        std::cerr << "cl-load: " << server.status().message() << "\n";
        return 2;
      }
      PhaseReport p = Measure("overload", *server, *session, absl::GetFlag(FLAGS_overload_streams),
                              false, duration);
      p.extra.push_back({"max_inflight", absl::GetFlag(FLAGS_overload_inflight)});
      p.extra.push_back({"server_peak_rss_mib", ReadProc(server->pid).hwm_mib});
      reports.push_back(std::move(p));
    } else if (phase == "amplify" || phase == "idle") {
      const int inflight = absl::GetFlag(FLAGS_max_inflight);
      absl::StatusOr<Server> server = StartServer(ServerArgv(inflight));
      if (!server.ok()) {
        std::cerr << "cl-load: " << server.status().message() << "\n";
        return 2;
      }
      const HostileFigures f =
          phase == "amplify"
              ? RunAmplify(server->address, server->pid, *session,
                           static_cast<size_t>(absl::GetFlag(FLAGS_amplify_name_bytes)),
                           absl::GetFlag(FLAGS_amplify_frames))
              : RunIdle(server->address, server->pid, *session, inflight, PacingFlags());
      PhaseReport p;
      p.name = std::string(phase);
      p.streams = phase == "amplify" ? 1 : inflight;
      std::cout << p.name << ": the hostile call(s) ended " << f.code << "\n";
      p.extra = {{"hostile_seconds", f.hostile_seconds},
                 {"normal_answered_after_seconds", f.normal_seconds},
                 {"normal_attempts", static_cast<double>(f.normal_attempts)},
                 {"rss_before_mib", f.rss_before_mib},
                 {"server_peak_rss_mib", f.peak_rss_mib}};
      reports.push_back(std::move(p));
    } else {
      std::cerr << "cl-load: unknown phase \"" << phase
                << "\" (echo, analyze, overload, soak, amplify, idle)\n";
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
    std::cout << absl::StrFormat("analysis / echo server CPU per session: %.2fx\n",
                                 per_ok(*analyze) / per_ok(*echo));
  }
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::ofstream(path) << Json(reports, *session);
  }
  return 0;
}

}  // namespace
}  // namespace cl::load

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "cl-load [--streams=16] [--duration=20s] "
      "[--phases=echo,analyze,overload[,soak][,amplify][,idle]] "
      "[--json=OUT]\n"
      "Loads a cl-server it starts with the hero session over gRPC (and a bare gRPC echo of the "
      "same\n"
      "bytes), reporting throughput, p50/p99 latency, status codes, server CPU per session and "
      "RSS.");
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "load/cl_load.cc");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  absl::ParseCommandLine(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  if (absl::GetFlag(FLAGS_serve_echo)) return cl::load::ServeEcho(absl::GetFlag(FLAGS_echo_listen));
  return cl::load::Run();
}

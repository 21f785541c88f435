// cl-server: the compile-lens analysis service. Flags are read here and nowhere else.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "analyzers/lint/lint.h"
#include "analyzers/registry.h"
#include "common/file_io.h"
#include "common/number_format.h"
#include "service/analysis.h"
#include "service/server/server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "gRPC listen address HOST:PORT; port 0 picks a free port (the bound address is printed "
          "on stderr's first line)");
ABSL_FLAG(int, analysis_threads, 0,
          "analysis pool threads, which parse, check and analyze each session; 0 = one per "
          "hardware thread");
ABSL_FLAG(int, analysis_queue, 64,
          "analysis tasks that may wait for a pool thread; past it calls get RESOURCE_EXHAUSTED");
ABSL_FLAG(
    int, analysis_nice, 10,
    "niceness of the analysis threads (0-19): uploads, refusals and health checks preempt them");
ABSL_FLAG(int, max_inflight, 32,
          "Analyze calls served at once (uploading or analyzing); past it RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_session_bytes, int64_t{256} << 20,
          "largest upload one call may make (the bytes of its part-carrying messages as they "
          "arrive, and 512 "
          "more for each message's buffer); past it RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_session_memory, int64_t{2} << 30,
          "memory one session may take once read: its parts parsed, or a raw TORCH_TRACE log's "
          "import (its records, plus the file names its stacks copy from the log's str table, each "
          "name clipped to 4096 bytes); past it RESOURCE_EXHAUSTED. Sessions are read on the "
          "analysis threads, so at most analysis_threads x this is held at once, besides "
          "max_inflight x max_session_bytes of uploads");
ABSL_FLAG(int, max_message_bytes, 1 << 20,
          "largest single gRPC message accepted; said to each admitted client, and cl-client sends "
          "a raw log in pieces that fill it (up to 1 MiB)");
ABSL_FLAG(int, receive_window_bytes, 4 << 20,
          "each call's HTTP/2 receive window: the bytes of an upload gRPC may hold before the "
          "import reads them. An upload goes at most this many bytes per round trip (4 MiB: 4 GB/s "
          "at 1 ms, 80 MB/s at 50 ms); raise it for clients far away. 0 = sized by gRPC from the "
          "measured bandwidth (about 17 MiB for an upload over loopback)");
ABSL_FLAG(
    absl::Duration, upload_timeout, absl::Seconds(60),
    "time an admitted Analyze call gets to send its whole capture (options to end marker); past it "
    "DEADLINE_EXCEEDED, and its max_inflight slot is free again; inf: no limit (idle_timeout "
    "still applies)");
ABSL_FLAG(absl::Duration, idle_timeout, absl::Seconds(10),
          "an admitted Analyze call that reads no message for this long is ended "
          "(DEADLINE_EXCEEDED); while every max_inflight slot is taken, a new call takes the slot "
          "of one that has read nothing for 1s. Size it above the longest pause between two "
          "messages of the slowest client (one max_message_bytes message on its link)");
ABSL_FLAG(int, recent_sessions, 256,
          "responses kept so that a session sent again (an upload's retry) is answered without a "
          "second analysis; a copy that arrives while the first is still analyzed is told ABORTED "
          "(retry after a backoff: the retry gets the first analysis's answer); 0 = analyze every "
          "call");
ABSL_FLAG(int, lint_cache_files, static_cast<int>(cl::kLintCacheFiles),
          "parsed source files the lint pass keeps across sessions (0: none); their trees take "
          "about 13x their text");
ABSL_FLAG(int64_t, lint_cache_mib, int64_t{cl::kLintCacheBytes >> 20},
          "MiB of source text the lint pass's cache of parsed files holds at most");
ABSL_FLAG(absl::Duration, drain_delay, absl::Seconds(2),
          "on SIGTERM: time between health going NOT_SERVING and refusing new calls");
ABSL_FLAG(absl::Duration, drain_grace, absl::Seconds(25),
          "on SIGTERM: time calls in flight get to finish before they are cancelled");
ABSL_FLAG(absl::Duration, max_connection_age, absl::Minutes(5),
          "close client connections after this age so load spreads over new replicas");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM roots: require client certificates they sign (mTLS; needs --tls_cert/--tls_key)");
ABSL_FLAG(
    std::string, token_file, "",
    "a file holding the bearer token every Analyze call must carry (`authorization: Bearer ...`, "
    "compared in constant time); gRPC health, server reflection (it shows only the service's "
    "schema, the public compile_lens/v1 protos) and the metrics port are exempt. Without "
    "--tls_cert the token crosses in clear text, and the server says so at start");
ABSL_FLAG(std::string, correctness_db, "",
          "a correctness.toml (e.g. lint/correctness.toml) that rates lint findings for requests "
          "that carry "
          "no DB of their own (a request's DB wins); read and validated at startup");
ABSL_FLAG(
    std::string, metrics_listen, "",
    "serve Prometheus metrics at http://HOST:PORT/metrics; port 0 picks a free port (the bound "
    "address is printed on stderr as \"cl-server: metrics on ADDR\"); empty: no metrics endpoint");
ABSL_FLAG(
    std::vector<std::string>, metrics_labels, std::vector<std::string>({"cluster", "model"}),
    "session.labels keys that become labels of the fleet metrics (comma-separated); keys that "
    "name ids, paths or hosts are refused");
ABSL_FLAG(int, metrics_label_values, 16,
          "distinct values kept per metrics label, first come first kept, for a label "
          "--metrics_label_allow gives no values; later values are reported as \"other\" and "
          "counted in compile_lens_fleet_label_folded_total");
ABSL_FLAG(std::vector<std::string>, metrics_label_allow, {},
          "the only values some metrics labels keep, KEY=V1|V2|... per label, comma-separated "
          "(--metrics_label_allow 'cluster=us-east|us-west,model=gpt|llama'); any other value of "
          "such a label is reported as \"other\", whoever sends first");

namespace {

// How long past drain_delay + drain_grace the process waits for cancelled work before exiting.
constexpr absl::Duration kDrainSlack = absl::Seconds(5);

constexpr char kUsage[] = R"(compile-lens analysis server.

Serves compile_lens.v1.CompileLens/Analyze (client-streaming session captures in, a report out),
grpc.health.v1.Health and server reflection. SIGTERM drains: health goes NOT_SERVING, new calls
are refused after --drain_delay, calls in flight finish (up to --drain_grace; the rest are
cancelled), then it exits 0. The grace is a hard bound: work still running 5s past it is cut off
and the process exits 1.
Every request is bounded: an upload by --max_session_bytes on the wire and --max_session_memory
once parsed, a silent stream by --idle_timeout, a slow one by --upload_timeout; and what a report
echoes, as the next paragraph says.
With --metrics_listen it serves Prometheus metrics (go-grpc-prometheus RPC metrics and
compile_lens_*; see README "Metrics") on their own port.
)";
// After the limits (AnalysisLimitsText, made from the limits themselves).
constexpr char kUsageExamples[] = R"(
Examples:
  cl-server --listen 0.0.0.0:50051
  cl-server --listen 127.0.0.1:0 --analysis_threads 4 --max_inflight 16
  cl-server --listen 0.0.0.0:50051 --metrics_listen 0.0.0.0:9464 --metrics_labels cluster,model,team
  cl-server --listen 0.0.0.0:50051 --correctness_db=lint/correctness.toml
  cl-server --listen 0.0.0.0:50051 --tls_cert server.pem --tls_key server.key --token_file /etc/cl/token
  cl-client analyze examples/hero/head.cls.json --server 127.0.0.1:50051

Flags:)";

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      absl::StrCat(kUsage, "\n", cl::AnalysisLimitsText(), "\n", kUsageExamples));
  // --help lists this file's flags: absl's default looks for <program>.cc, and ours is main.cc.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "service/main.cc");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  absl::ParseCommandLine(argc, argv);
  // Debian's abseil checks every Mutex acquisition against a global lock-order graph (a debugging
  // aid, under a global lock of its own): a server takes fresh mutexes on every call. The
  // thread-safety annotations are checked at compile time instead (clang -Wthread-safety).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  // Block the stop signals in every thread (gRPC's included) so only sigwait below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  cl::ServerOptions options;
  // The server's own options for what requests leave unset, prepared by the passes as a
  // request's are: an unreadable or invalid correctness DB stops the start, naming the line.
  if (const std::string db = absl::GetFlag(FLAGS_correctness_db); !db.empty()) {
    absl::StatusOr<std::string> text = cl::ReadFile(db);
    cl::v1::AnalyzeOptions server_options;
    if (text.ok()) server_options.set_correctness_db(*text);
    absl::StatusOr<cl::PassOptions> prepared =
        text.ok() ? cl::PrepareOptions(cl::RegisteredPasses(), server_options) : text.status();
    if (!prepared.ok()) {
      std::cerr << "cl-server: --correctness_db=" << db << ": " << prepared.status().message()
                << "\n";
      return 1;
    }
    options.pass_defaults = *std::move(prepared);
  }
  options.listen = absl::GetFlag(FLAGS_listen);
  options.analysis_threads = absl::GetFlag(FLAGS_analysis_threads);
  options.analysis_queue = static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_analysis_queue)));
  options.max_inflight = absl::GetFlag(FLAGS_max_inflight);
  options.analysis_nice = std::clamp(absl::GetFlag(FLAGS_analysis_nice), 0, 19);
  options.max_session_bytes =
      static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_max_session_bytes)));
  options.max_session_memory =
      static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_max_session_memory)));
  options.lint_cache_files =
      static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_lint_cache_files)));
  options.lint_cache_bytes =
      static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_lint_cache_mib))) << 20;
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.receive_window_bytes = absl::GetFlag(FLAGS_receive_window_bytes);
  options.upload_timeout = absl::GetFlag(FLAGS_upload_timeout);
  options.idle_timeout = absl::GetFlag(FLAGS_idle_timeout);
  options.recent_sessions = static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_recent_sessions)));
  options.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  options.max_connection_age_grace = absl::GetFlag(FLAGS_drain_grace) + absl::Seconds(5);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.security = {absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
                      absl::GetFlag(FLAGS_tls_client_ca), absl::GetFlag(FLAGS_token_file)};
  options.metrics.fleet_labels = absl::GetFlag(FLAGS_metrics_labels);
  options.metrics.max_label_values = absl::GetFlag(FLAGS_metrics_label_values);
  options.metrics.label_allowlist = absl::GetFlag(FLAGS_metrics_label_allow);

  absl::StatusOr<std::unique_ptr<cl::AnalysisServer>> server = cl::AnalysisServer::Start(options);
  if (!server.ok()) {
    std::cerr << "cl-server: " << server.status().message() << "\n";
    return 1;
  }
  std::cerr << "cl-server: listening on " << (*server)->address() << std::endl;
  if (!(*server)->metrics_address().empty()) {
    std::cerr << "cl-server: metrics on " << (*server)->metrics_address() << std::endl;
  }
  // After the addresses, which scripts read first.
  if (!options.security.token_file.empty() && options.security.cert_file.empty()) {
    std::cerr << "cl-server: warning: --token_file without --tls_cert: the bearer token crosses "
                 "the network in clear text; serve TLS, or keep the port on a trusted network"
              << std::endl;
  }

  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::cerr << "cl-server: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT") << ", draining ("
            << cl::FormatCount((*server)->inflight(), "call", "calls") << " in flight)"
            << std::endl;
  // The grace is a hard bound: calls still running past it were cancelled, and a pass that does
  // not stop for that (a bug) must not keep the process, and its pod, alive. Destructors would
  // wait for those threads, so the watchdog ends the process without them.
  const absl::Duration bound =
      absl::GetFlag(FLAGS_drain_delay) + absl::GetFlag(FLAGS_drain_grace) + kDrainSlack;
  std::thread([bound] {
    absl::SleepFor(bound);
    std::cerr << "cl-server: work still running " << absl::FormatDuration(bound)
              << " after SIGTERM (drain_delay + drain_grace + " << absl::FormatDuration(kDrainSlack)
              << "); exiting without it" << std::endl;
    std::_Exit(1);
  }).detach();
  (*server)->Drain(absl::GetFlag(FLAGS_drain_delay), absl::GetFlag(FLAGS_drain_grace));
  std::cerr << "cl-server: drained, exiting" << std::endl;
  return 0;
}

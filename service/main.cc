// cl-server: the compile-lens analysis service. Flags are read here and nowhere else.
#include <csignal>
#include <cstdio>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "service/server/server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "gRPC listen address HOST:PORT; port 0 picks a free port (the bound address is printed "
          "on stderr's first line)");
ABSL_FLAG(int, analysis_threads, 0, "analysis pool threads; 0 = one per hardware thread");
ABSL_FLAG(int, analysis_queue, 64,
          "analysis tasks that may wait for a pool thread; past it calls get RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_inflight, 32,
          "Analyze calls served at once (uploading or analyzing); past it RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_session_bytes, int64_t{256} << 20,
          "largest capture (all parts together) one call may upload; past it RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_message_bytes, 1 << 20, "largest single gRPC message accepted");
ABSL_FLAG(absl::Duration, drain_delay, absl::Seconds(2),
          "on SIGTERM: time between health going NOT_SERVING and refusing new calls");
ABSL_FLAG(absl::Duration, drain_grace, absl::Seconds(25),
          "on SIGTERM: time calls in flight get to finish before they are cancelled");
ABSL_FLAG(absl::Duration, max_connection_age, absl::Minutes(5),
          "close client connections after this age so load spreads over new replicas");

namespace {

constexpr char kUsage[] = R"(compile-lens analysis server.

Serves compile_lens.v1.CompileLens/Analyze (client-streaming session captures in, a report out),
grpc.health.v1.Health and server reflection. SIGTERM drains: health goes NOT_SERVING, new calls
are refused after --drain_delay, calls in flight finish (up to --drain_grace), then it exits 0.

Examples:
  cl-server --listen 0.0.0.0:50051
  cl-server --listen 127.0.0.1:0 --analysis_threads 4 --max_inflight 16
  cl-client analyze examples/hero/head.cls.json --server 127.0.0.1:50051

Flags:)";

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  absl::ParseCommandLine(argc, argv);

  // Block the stop signals in every thread (gRPC's included) so only sigwait below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  cl::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.analysis_threads = absl::GetFlag(FLAGS_analysis_threads);
  options.analysis_queue = static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_analysis_queue)));
  options.max_inflight = absl::GetFlag(FLAGS_max_inflight);
  options.max_session_bytes = static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_max_session_bytes)));
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  options.max_connection_age_grace = absl::GetFlag(FLAGS_drain_grace) + absl::Seconds(5);

  absl::StatusOr<std::unique_ptr<cl::AnalysisServer>> server = cl::AnalysisServer::Start(options);
  if (!server.ok()) {
    std::cerr << "cl-server: " << server.status().message() << "\n";
    return 1;
  }
  std::cerr << "cl-server: listening on " << (*server)->address() << std::endl;

  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::cerr << "cl-server: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT") << ", draining ("
            << (*server)->inflight() << " call(s) in flight)" << std::endl;
  (*server)->Drain(absl::GetFlag(FLAGS_drain_delay), absl::GetFlag(FLAGS_drain_grace));
  std::cerr << "cl-server: drained, exiting" << std::endl;
  return 0;
}

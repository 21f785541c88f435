// cl-server's core: the CompileLens service, gRPC health and reflection, limits, drain, and the
// Prometheus metrics endpoint.
//
// Owns the analysis pool, the engine and the metrics (service/metrics.h). main.cc only parses
// flags into ServerOptions, starts an AnalysisServer and waits for SIGTERM; tests start one
// in-process on port 0.
#ifndef SERVICE_SERVER_SERVER_H_
#define SERVICE_SERVER_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "analyzers/lint/lint.h"
#include "grpcpp/grpcpp.h"
#include "prometheus/exposer.h"
#include "service/engine.h"
#include "service/metrics.h"
#include "service/server/analyze_reactor.h"
#include "service/server/read_ahead.h"
#include "service/server/security.h"
#include "service/thread_pool.h"

namespace cl {

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // port 0 picks a free port
  int analysis_threads = 0;                // 0: one per hardware thread
  size_t analysis_queue = 64;              // queued pool tasks before RESOURCE_EXHAUSTED
  int analysis_nice = 10;                  // the analysis threads' niceness (ThreadPool)
  int max_inflight = 32;                   // concurrent Analyze calls before RESOURCE_EXHAUSTED
  uint64_t max_session_bytes = 256ull << 20;
  // What one session may take in memory once read: its parsed parts, or a raw log's import (its
  // records plus what its str table's names expand into). Past it RESOURCE_EXHAUSTED.
  uint64_t max_session_memory = 2ull << 30;
  // Per gRPC message; said to each admitted client, which fills it with a raw log's pieces.
  int max_message_bytes = 1 << 20;
  // Each call's HTTP/2 receive window: how many bytes of an upload gRPC may hold that the import
  // has not read yet. Fixed, so that what a call holds of its upload is bounded (about this plus
  // ReadAhead's 2 MiB): gRPC's own sizing from the bandwidth it measures (0) let one upload hold
  // about 17 MiB over loopback. An upload then goes at most this many bytes per round trip: 4 MiB
  // is 4 GB/s at a 1 ms round trip, 80 MB/s at 50 ms (bench/README.md has the measured trade).
  int receive_window_bytes = 4 << 20;
  // From admission to the end marker; past it DEADLINE_EXCEEDED, and the max_inflight slot is free
  // again. Infinite: no limit (a stalled client then holds its slot until its connection ages out).
  absl::Duration upload_timeout = absl::Seconds(60);
  // A call that reads no message for this long is ended (DEADLINE_EXCEEDED); and while every
  // max_inflight slot is taken, a new call takes the slot of one that has read nothing for a second
  // (or idle_timeout, when shorter). Size it above the longest pause a client makes between two
  // messages: one message (at most max_message_bytes) on the slowest link it uploads over.
  absl::Duration idle_timeout = absl::Seconds(10);
  absl::Duration max_connection_age =
      absl::Minutes(5);  // so long-lived HTTP/2 connections rebalance
  absl::Duration max_connection_age_grace = absl::Minutes(10);
  // Where Prometheus scrapes /metrics (HOST:PORT, port 0 picks a free port); empty: no endpoint
  // (the metrics are still kept, for metrics()).
  std::string metrics_listen;
  MetricsOptions metrics;
  ServerSecurity security;  // TLS / mTLS / bearer token; all empty: plaintext, no token
  // What the passes made of the server's own options (PrepareOptions; main.cc gives them
  // --correctness_db's text), for the requests that leave those options unset.
  PassOptions pass_defaults;
  // Responses kept so that a session sent again (an upload's retry) is answered, not re-analyzed.
  size_t recent_sessions = 256;
  size_t recent_session_bytes = 256ull << 20;
  // Parsed source files the lint pass keeps across sessions (analyzers/lint/lint.h). The cache is
  // the process's: the last server started sets it. 0 files: keep none.
  size_t lint_cache_files = kLintCacheFiles;
  size_t lint_cache_bytes = kLintCacheBytes;  // of source text; trees take many times that
};

class AnalysisServer {
 public:
  // Binds and starts serving; health is SERVING once this returns. INVALID_ARGUMENT for a limit
  // that would refuse every call (a queue, max_inflight or a byte limit under 1, a timeout not
  // above zero) and for metrics options FleetLabels refuses; UNAVAILABLE when an address cannot
  // be bound.
  static absl::StatusOr<std::unique_ptr<AnalysisServer>> Start(const ServerOptions& options);
  ~AnalysisServer();

  // The bound address, with the real port when the options asked for port 0.
  const std::string& address() const { return address_; }
  int port() const { return port_; }
  // The bound metrics address (real port), or "" without --metrics_listen.
  const std::string& metrics_address() const { return metrics_address_; }
  const ServiceMetrics& metrics() const { return *metrics_; }

  // Drains: health NOT_SERVING, then `delay` for load balancers to notice, then new calls are
  // refused while calls in flight run to completion until `grace` has passed (the rest are
  // cancelled), then the pool finishes. Safe to call once; Wait() returns after it.
  void Drain(absl::Duration delay, absl::Duration grace);
  void Wait();

  int inflight() const { return state_.inflight.load(); }

 private:
  class Service;
  AnalysisServer(const ServerOptions& options, std::shared_ptr<ServiceMetrics> metrics);

  absl::Status StartMetricsEndpoint(const std::string& listen);

  ThreadPool pool_;
  // Import raw logs as they stream in (read_ahead.h). Not niced, as the transport's threads that
  // did it before were not.
  ImportThreads import_threads_;
  Engine engine_;
  RecentSessions recent_;
  std::shared_ptr<ServiceMetrics> metrics_;  // shared: the Exposer holds a weak_ptr to it
  UploadWatch watch_;                        // outlives server_: every call is done before it stops
  AnalyzeServiceState state_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  int port_ = 0;
  // Last, so that it stops before what its scrapes read (the pool, state_, metrics_) goes away.
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string metrics_address_;
};

}  // namespace cl

#endif  // SERVICE_SERVER_SERVER_H_

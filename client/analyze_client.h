// The client library behind cl-client: analyze a capture in-process or on a cl-server.
//
// Both ways produce the same AnalyzeResponse for the same captures: the in-process way runs the
// same engine and renderers the server runs (service/analysis.h).
#ifndef CLIENT_ANALYZE_CLIENT_H_
#define CLIENT_ANALYZE_CLIENT_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "capture/stream/capture_assembler.h"
#include "capture/torch_trace/importer.h"
#include "compile_lens/v1/service.pb.h"

namespace cl {

// How many threads an in-process analysis of `captures` runs on, `requested` by the user (0:
// choose): one for a small session (under 20,000 graph nodes and 200 compiles on each side), where
// the passes take about a millisecond and starting and coordinating workers would cost more
// (bench/README.md, "Every log of the corpus"); else one per hardware thread.
// The head's `lowered` facts count as the nodes they were made of.
int InProcessThreads(const AssembledCaptures& captures, int requested,
                     const LoweredFacts* lowered = nullptr);

// Runs the analysis here, on `threads` threads, the calling one among them (0: InProcessThreads
// chooses; 0 from it, one per hardware thread). `head_lowered`: what the passes read of the
// head's lowered graphs, where its import kept that instead of their nodes.
absl::StatusOr<v1::AnalyzeResponse> AnalyzeInProcess(const AssembledCaptures& captures,
                                                     const v1::AnalyzeOptions& options, int threads,
                                                     const LoweredFacts* head_lowered = nullptr);

// Transport security toward a cl-server. No CA: plaintext (loopback, or a mesh that adds TLS).
struct ChannelSecurity {
  std::string ca_file;    // PEM roots that sign the server's certificate: TLS
  std::string cert_file;  // with key_file: this client's certificate, for servers that require mTLS
  std::string key_file;
  std::string token_file;  // a bearer token sent as `authorization: Bearer <token>` on every call
};

struct RemoteOptions {
  std::string target;  // HOST:PORT, or any gRPC target ("dns:///svc:50051")
  absl::Duration deadline = absl::Seconds(120);
  size_t part_budget = 0;  // 0: the splitter's default
  ChannelSecurity security;
  // Called after each message the call sends, with the bytes sent so far in this call (a retry
  // starts again from 0); for a progress line.
  std::function<void(uint64_t sent)> on_sent;
};

// Streams the captures to a cl-server's Analyze and returns its answer; the server's status
// (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...) comes back as is.
absl::StatusOr<v1::AnalyzeResponse> AnalyzeRemote(const AssembledCaptures& captures,
                                                  const v1::AnalyzeOptions& options,
                                                  const RemoteOptions& remote);

// The most source text AnalyzeRemoteTrace offers with a log, all files together.
inline constexpr uint64_t kMaxOfferedSourceBytes = 32 << 20;

// Streams a TORCH_TRACE log's bytes (decompressed when .gz) to a cl-server, which imports it
// server-side as they arrive, in pieces that fill the largest message the server says it takes
// (`cl-max-message-bytes`, up to 1 MiB; the part budget where it does not say or one is set), each
// written straight into its message (raw_trace_chunk.h); `header` goes first: its session fields
// override what the log says, its source_name names the log in the import's diagnostics, and
// post_grad_nodes_only keeps what a single session's analysis reads. With `sources`, the user files
// whose paths the log spells (SourceNameScanner) follow, read here (ReadSourceFile: its path_map,
// max_source_bytes each) up to kMaxOfferedSourceBytes in all: the server keeps those the session
// names, which only this machine has. They are offered only to a server that admits the call saying
// it takes them (`cl-offered-sources`); an older one gets the log alone.
absl::StatusOr<v1::AnalyzeResponse> AnalyzeRemoteTrace(const std::string& log_path,
                                                       const v1::CaptureHeader& header,
                                                       const v1::AnalyzeOptions& options,
                                                       const RemoteOptions& remote,
                                                       const ImportOptions* sources = nullptr);

// grpc.health.v1.Health/Check for `service` ("" = the whole server): OK when SERVING.
absl::Status CheckHealth(const RemoteOptions& remote, const std::string& service);

}  // namespace cl

#endif  // CLIENT_ANALYZE_CLIENT_H_

// cl-load's client side: the session's stream, cut and serialized once; one call of it, paced as
// cl-client paces its calls; and `streams` threads calling a server in a loop.
//
// Every call carries its own session id, so the server's retry cache never answers in place of an
// analysis.
#ifndef BENCH_LOAD_LOAD_H_
#define BENCH_LOAD_LOAD_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compile_lens/v1/service.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/byte_buffer.h"

namespace cl::load {

namespace v1 = ::compile_lens::v1;
using Clock = std::chrono::steady_clock;

struct SessionOptions {
  std::string head;         // the head capture's file
  std::string base;         // the base capture's, or "": none
  bool html = false;        // ask for the HTML report too
  bool batch_parts = true;  // pack parts into messages as cl-client does; false: one a message
};

// The session's stream, cut once: the header part of the head capture is rewritten per call (its
// session id), everything else is sent as serialized here.
struct Session {
  std::vector<v1::AnalyzeChunk> chunks;
  std::vector<grpc::ByteBuffer> serialized;
  size_t header = 0;  // the index of the head capture's header chunk
  size_t bytes = 0;   // the stream's size

  // The head's header message, with the session id `id`.
  grpc::ByteBuffer HeaderFor(const std::string& id) const;
};

absl::StatusOr<Session> LoadSession(const SessionOptions& options);

// How a client paces its calls, as cl-client does.
struct Pacing {
  absl::Duration admission_wait;  // after the options, the wait for the admission headers
  absl::Duration backoff;         // the mean pause (jittered 0.5x-1.5x) after RESOURCE_EXHAUSTED
};

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
                const std::string& id, bool echo, const Pacing& pacing);

struct LoadResult {
  size_t calls = 0;
  std::map<grpc::StatusCode, size_t> codes;
  size_t reports = 0;
  std::vector<double> ok_latencies, refused_latencies;
  double seconds = 0;
};

double Percentile(std::vector<double> v, double p);

// `streams` threads calling `address` until `stop`; calls that end after `measure_from` count.
LoadResult RunLoad(const std::string& address, const Session& session, int streams, bool echo,
                   Clock::time_point measure_from, Clock::time_point stop, const std::string& tag,
                   const Pacing& pacing);

}  // namespace cl::load

#endif  // BENCH_LOAD_LOAD_H_

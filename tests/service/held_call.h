// An Analyze call held open: the options sent, no end marker, so the server counts it in flight
// until the test ends it (WritesDone → INVALID_ARGUMENT, the capture was never complete).
#ifndef TESTS_SERVICE_HELD_CALL_H_
#define TESTS_SERVICE_HELD_CALL_H_

#include <memory>
#include <thread>

#include "compile_lens/v1/service.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "service/server/server.h"

namespace cl::testing {

struct HeldCall {
  grpc::ClientContext context;
  compile_lens::v1::AnalyzeResponse response;
  std::unique_ptr<grpc::ClientWriter<compile_lens::v1::AnalyzeChunk>> writer;

  // Ends the call; returns the code the server ended it with.
  grpc::StatusCode End() {
    writer->WritesDone();
    return writer->Finish().error_code();
  }
};

// Opens the call and waits until `server` has admitted it; null if the options could not be sent.
inline std::unique_ptr<HeldCall> HoldCallOpen(compile_lens::v1::CompileLens::Stub& stub,
                                              const AnalysisServer& server) {
  auto held = std::make_unique<HeldCall>();
  const int before = server.inflight();
  held->writer = stub.Analyze(&held->context, &held->response);
  compile_lens::v1::AnalyzeChunk options;
  options.mutable_options();
  if (!held->writer->Write(options)) return nullptr;
  while (server.inflight() <= before) std::this_thread::yield();
  return held;
}

}  // namespace cl::testing

#endif  // TESTS_SERVICE_HELD_CALL_H_

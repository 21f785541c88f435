#include "client/analyze_client.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "capture/stream/capture_splitter.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "service/analysis.h"
#include "service/engine.h"
#include "service/thread_pool.h"

namespace cl {
namespace {

// Reports and rendered HTML can be large; the client accepts them whole.
constexpr int kMaxResponseBytes = 512 << 20;

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxResponseBytes);
  // Spread calls over every address the target resolves to (a headless Service, say).
  args.SetServiceConfigJSON(R"({"loadBalancingConfig":[{"round_robin":{}}]})");
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

}  // namespace

absl::StatusOr<v1::AnalyzeResponse> AnalyzeInProcess(const AssembledCaptures& captures,
                                                     const v1::AnalyzeOptions& options, int threads) {
  ThreadPool pool(threads, /*max_queue=*/64);
  Engine engine(&pool);
  return RunAnalysis(engine, captures, options, /*cancelled=*/nullptr);
}

absl::StatusOr<v1::AnalyzeResponse> AnalyzeRemote(const AssembledCaptures& captures,
                                                  const v1::AnalyzeOptions& options,
                                                  const RemoteOptions& remote) {
  auto stub = v1::CompileLens::NewStub(MakeChannel(remote.target));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + remote.deadline));
  v1::AnalyzeResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::AnalyzeChunk>> writer = stub->Analyze(&context, &response);

  // A failed Write means the server has already finished the call (with an error, say): stop
  // sending and let Finish() tell why.
  bool open = true;
  auto write = [&](v1::AnalyzeChunk&& chunk) {
    if (open) open = writer->Write(chunk);
  };
  v1::AnalyzeChunk first;
  *first.mutable_options() = options;
  write(std::move(first));

  uint64_t parts = 0;
  auto emit = [&](v1::CapturePart&& part) -> absl::Status {
    v1::AnalyzeChunk chunk;
    *chunk.mutable_part() = std::move(part);
    write(std::move(chunk));
    ++parts;
    return open ? absl::OkStatus() : absl::AbortedError("the server closed the stream");
  };
  const size_t budget = remote.part_budget == 0 ? kDefaultPartBudget : remote.part_budget;
  absl::Status split = SplitCapture(captures.head, v1::HEAD, budget, emit);
  if (split.ok() && captures.base) split = SplitCapture(*captures.base, v1::BASE, budget, emit);
  if (split.ok()) {
    v1::AnalyzeChunk end;
    end.mutable_end()->set_parts(parts);
    write(std::move(end));
  }
  if (open) writer->WritesDone();
  const grpc::Status status = writer->Finish();
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat(remote.target, ": ", status.error_message()));
  }
  if (!split.ok() && !absl::IsAborted(split)) return split;
  return response;
}

absl::Status CheckHealth(const std::string& target, const std::string& service, absl::Duration deadline) {
  auto stub = grpc::health::v1::Health::NewStub(MakeChannel(target));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  CL_RETURN_IF_ERROR(FromGrpcStatus(stub->Check(&context, request, &response)));
  if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    return absl::UnavailableError(absl::StrCat(
        target, " is ", grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())));
  }
  return absl::OkStatus();
}

}  // namespace cl

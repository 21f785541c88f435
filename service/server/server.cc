#include "service/server/server.h"

#include "absl/time/clock.h"

#include "absl/strings/str_cat.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"

namespace cl {

class AnalysisServer::Service final : public v1::CompileLens::CallbackService {
 public:
  explicit Service(AnalyzeServiceState* state) : state_(state) {}

  grpc::ServerReadReactor<v1::AnalyzeChunk>* Analyze(grpc::CallbackServerContext* context,
                                                     v1::AnalyzeResponse* response) override {
    return new AnalyzeReactor(state_, context, response);  // deletes itself in OnDone
  }

 private:
  AnalyzeServiceState* const state_;
};

AnalysisServer::AnalysisServer(const ServerOptions& options)
    : pool_(options.analysis_threads, options.analysis_queue), engine_(&pool_) {
  state_.engine = &engine_;
  state_.pool = &pool_;
  state_.max_session_bytes = options.max_session_bytes;
  state_.max_inflight = options.max_inflight;
  service_ = std::make_unique<Service>(&state_);
}

absl::StatusOr<std::unique_ptr<AnalysisServer>> AnalysisServer::Start(const ServerOptions& options) {
  std::unique_ptr<AnalysisServer> s(new AnalysisServer(options));
  grpc::EnableDefaultHealthCheckService(true);  // before the builder is made
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &s->port_);
  builder.RegisterService(s->service_.get());
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(-1);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                             static_cast<int>(absl::ToInt64Milliseconds(options.max_connection_age)));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                             static_cast<int>(absl::ToInt64Milliseconds(options.max_connection_age_grace)));
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen,
                                               " (address in use, or not an address)"));
  }
  const size_t colon = options.listen.rfind(':');
  s->address_ = absl::StrCat(options.listen.substr(0, colon), ":", s->port_);
  s->server_->GetHealthCheckService()->SetServingStatus(true);
  return s;
}

AnalysisServer::~AnalysisServer() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
  pool_.Shutdown();
}

void AnalysisServer::Drain(absl::Duration delay, absl::Duration grace) {
  server_->GetHealthCheckService()->SetServingStatus(false);
  absl::SleepFor(delay);
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  pool_.Shutdown();
}

void AnalysisServer::Wait() { server_->Wait(); }

}  // namespace cl

#include "service/server/server.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "analyzers/lint/lint.h"
#include "common/status_macros.h"
#include "compile_lens/v1/service.grpc.pb.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "proto/register_files.h"
#include "service/server/rpc_metrics_interceptor.h"

namespace cl {

// Analyze is a raw callback method: the reactor reads each message as bytes, and its analysis task
// parses them (AnalyzeReactor).
class AnalysisServer::Service final
    : public v1::CompileLens::WithRawCallbackMethod_Analyze<v1::CompileLens::Service> {
 public:
  explicit Service(AnalyzeServiceState* state) : state_(state) {}

  grpc::ServerReadReactor<grpc::ByteBuffer>* Analyze(grpc::CallbackServerContext* context,
                                                     grpc::ByteBuffer* response) override {
    return new AnalyzeReactor(state_, context, response);  // deletes itself in OnDone
  }

 private:
  AnalyzeServiceState* const state_;
};

namespace {

// A duration as a millisecond channel argument: an int, where INT_MAX means "never" (a longer
// duration cast to int wraps negative, and gRPC then closes every connection at once).
int ChannelArgMillis(absl::Duration d) {
  return static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(d), 0, std::numeric_limits<int>::max()));
}

// "HOST:PORT" with the port replaced by the one actually bound.
std::string BoundAddress(const std::string& listen, int port) {
  return absl::StrCat(listen.substr(0, listen.rfind(':')), ":", port);
}

// Limits under which the server would refuse every call, named as their flags are.
absl::Status CheckLimits(const ServerOptions& options) {
  const auto at_least_one = [](absl::string_view name, int64_t value) {
    return value >= 1 ? absl::OkStatus()
                      : absl::InvalidArgumentError(
                            absl::StrCat("--", name, "=", value, ": must be at least 1"));
  };
  CL_RETURN_IF_ERROR(at_least_one("analysis_queue", static_cast<int64_t>(options.analysis_queue)));
  CL_RETURN_IF_ERROR(at_least_one("max_inflight", options.max_inflight));
  CL_RETURN_IF_ERROR(
      at_least_one("max_session_bytes", static_cast<int64_t>(options.max_session_bytes)));
  CL_RETURN_IF_ERROR(
      at_least_one("max_session_memory", static_cast<int64_t>(options.max_session_memory)));
  CL_RETURN_IF_ERROR(at_least_one("max_message_bytes", options.max_message_bytes));
  if (options.receive_window_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--receive_window_bytes=", options.receive_window_bytes,
                     ": must be 0 (gRPC sizes it) or more"));
  }
  for (const auto& [name, timeout] :
       {std::pair<absl::string_view, absl::Duration>{"upload_timeout", options.upload_timeout},
        {"idle_timeout", options.idle_timeout}}) {
    if (timeout <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, "=", absl::FormatDuration(timeout), ": must be above zero"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

AnalysisServer::AnalysisServer(const ServerOptions& options,
                               std::shared_ptr<ServiceMetrics> metrics)
    : pool_(options.analysis_threads, options.analysis_queue, options.analysis_nice),
      import_threads_(/*max_queue=*/2 * static_cast<size_t>(options.max_inflight) + 16),
      engine_(&pool_),
      recent_(options.recent_sessions, options.recent_session_bytes),
      metrics_(std::move(metrics)),
      watch_({options.idle_timeout, options.upload_timeout, absl::Seconds(1)}) {
  state_.engine = &engine_;
  state_.pool = &pool_;
  state_.import_threads = &import_threads_;
  state_.metrics = metrics_.get();
  state_.recent = &recent_;
  state_.max_session_bytes = options.max_session_bytes;
  state_.max_session_memory = options.max_session_memory;
  state_.max_inflight = options.max_inflight;
  state_.max_message_bytes = options.max_message_bytes;
  state_.watch = &watch_;
  service_ = std::make_unique<Service>(&state_);
}

absl::StatusOr<std::unique_ptr<AnalysisServer>> AnalysisServer::Start(
    const ServerOptions& options) {
  CL_RETURN_IF_ERROR(CheckLimits(options));
  absl::StatusOr<std::shared_ptr<ServiceMetrics>> metrics = ServiceMetrics::Create(options.metrics);
  if (!metrics.ok()) return metrics.status();
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(options.security);
  if (!credentials.ok()) return credentials.status();
  absl::StatusOr<TokenAuth> auth = TokenAuth::FromFile(options.security.token_file);
  if (!auth.ok()) return auth.status();
  std::unique_ptr<AnalysisServer> s(new AnalysisServer(options, std::move(*metrics)));
  s->state_.auth = *std::move(auth);
  s->engine_.SetPassDefaults(options.pass_defaults);
  LintParseCache().SetLimits(options.lint_cache_files, options.lint_cache_bytes);
  s->metrics_->SetLoadProbe(
      [server = s.get(), queue = options.analysis_queue, limit = options.max_inflight] {
        return ServiceLoad{static_cast<double>(server->pool_.queued()), static_cast<double>(queue),
                           static_cast<double>(server->state_.inflight.load()),
                           static_cast<double>(limit)};
      });
  if (!options.metrics_listen.empty()) {
    if (absl::Status status = s->StartMetricsEndpoint(options.metrics_listen); !status.ok())
      return status;
  }
  grpc::EnableDefaultHealthCheckService(true);  // before the builder is made
  // Reflection (grpcurl, grpc_cli) answers without the bearer token: it shows the service's schema,
  // the public compile_lens/v1 protos, never a session. Linking the plugin registers it for every
  // builder, so it is on in every server. It finds the schema by name in protobuf's generated
  // pool, where a file is otherwise registered only once a message of it is used.
  RegisterProtoFiles();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, *credentials, &s->port_);
  builder.RegisterService(s->service_.get());
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(-1);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<RpcMetricsInterceptorFactory>(s->metrics_.get()));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                             ChannelArgMillis(options.max_connection_age));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                             ChannelArgMillis(options.max_connection_age_grace));
  if (options.receive_window_bytes > 0) {
    builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, options.receive_window_bytes);
  }
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen, " (address in use, or not an address)"));
  }
  s->address_ = BoundAddress(options.listen, s->port_);
  s->server_->GetHealthCheckService()->SetServingStatus(true);
  // Liveness probes ask for "liveness": SERVING for as long as the process runs, drain included
  // (a draining server is alive, just not ready; restarting it would cut the calls in flight).
  s->server_->GetHealthCheckService()->SetServingStatus("liveness", true);
  return s;
}

absl::Status AnalysisServer::StartMetricsEndpoint(const std::string& listen) {
  // prometheus-cpp reports a bind failure by throwing (civetweb's CivetException): converted here.
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen, /*num_threads=*/2);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen, ": ", e.what()));
  }
  exposer_->RegisterCollectable(metrics_);
  const std::vector<int> ports = exposer_->GetListeningPorts();
  if (ports.empty() || ports[0] == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", listen, ": no port was bound"));
  }
  metrics_address_ = BoundAddress(listen, ports[0]);
  return absl::OkStatus();
}

AnalysisServer::~AnalysisServer() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
  import_threads_.Shutdown();
  pool_.Shutdown();
}

void AnalysisServer::Drain(absl::Duration delay, absl::Duration grace) {
  server_->GetHealthCheckService()->SetServingStatus("", false);  // readiness only, not liveness
  absl::SleepFor(delay);
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  import_threads_.Shutdown();
  pool_.Shutdown();
}

void AnalysisServer::Wait() { server_->Wait(); }

}  // namespace cl

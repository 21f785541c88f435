#include "service/server/rpc_metrics_interceptor.h"

#include <atomic>
#include <chrono>

namespace cl {
namespace {

using ::grpc::experimental::InterceptionHookPoints;

class RpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit RpcMetricsInterceptor(const RpcSeries* series)
      : series_(series), start_(std::chrono::steady_clock::now()) {
    series_->started->Increment();
  }

  ~RpcMetricsInterceptor() override { Handled(grpc::StatusCode::CANCELLED); }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    // A null message is the end of the client's stream, not a message.
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() != nullptr) {
      series_->msg_received->Increment();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_SEND_MESSAGE) &&
        methods->GetSendMessageStatus()) {
      series_->msg_sent->Increment();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      Handled(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  // Once per call, whichever comes first: the status sent, or the call's end without one.
  void Handled(grpc::StatusCode code) {
    if (handled_.exchange(true)) return;
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    const int index = static_cast<int>(code);
    series_
        ->handled[index >= 0 && index < static_cast<int>(kGrpcCodes) ? index
                                                                     : grpc::StatusCode::UNKNOWN]
        ->Increment();
    series_->handling_seconds->Observe(elapsed.count());
  }

  const RpcSeries* const series_;
  const std::chrono::steady_clock::time_point start_;
  std::atomic<bool> handled_{false};
};

}  // namespace

grpc::experimental::Interceptor* RpcMetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  const RpcSeries* series = info->method() == nullptr ? nullptr : metrics_->Rpc(info->method());
  return series == nullptr ? nullptr : new RpcMetricsInterceptor(series);
}

}  // namespace cl

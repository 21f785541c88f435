// The go-grpc-prometheus RPC metrics, recorded by a gRPC server interceptor.
//
// Why an interceptor and not the reactor: it sees every call the server serves — Analyze, and the
// health and reflection services gRPC itself implements — with the status that is actually sent,
// including calls the reactor refuses before reading anything (RESOURCE_EXHAUSTED for
// --max_inflight) or on a bad stream (INVALID_ARGUMENT). Instrumenting the reactor would miss the
// health checks that Kubernetes sends and would need a second path for them. The cost is
// gRPC 1.51's `experimental` interceptor API, confined to this file.
//
// Per call: started at creation; each received message; each response message sent; handled with
// the sent status's code and the handling time at PRE_SEND_STATUS. A call torn down without a
// status (the peer vanished) is handled as Canceled, so that started and handled agree once calls
// are done. Methods the server does not serve get no interceptor (their names would be
// client-chosen labels).
#ifndef SERVICE_SERVER_RPC_METRICS_INTERCEPTOR_H_
#define SERVICE_SERVER_RPC_METRICS_INTERCEPTOR_H_

#include "grpcpp/support/server_interceptor.h"
#include "service/metrics.h"

namespace cl {

class RpcMetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // `metrics` is not owned and must outlive the server the factory is given to.
  explicit RpcMetricsInterceptorFactory(const ServiceMetrics* metrics) : metrics_(metrics) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  const ServiceMetrics* const metrics_;
};

}  // namespace cl

#endif  // SERVICE_SERVER_RPC_METRICS_INTERCEPTOR_H_

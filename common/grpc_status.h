// absl::Status <-> grpc::Status at the transport edge. The two share canonical code numbers.
#ifndef COMMON_GRPC_STATUS_H_
#define COMMON_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace cl {

inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  return s.ok() ? grpc::Status::OK
                : grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

inline absl::Status FromGrpcStatus(const grpc::Status& s) {
  return s.ok() ? absl::OkStatus()
                : absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace cl

#endif  // COMMON_GRPC_STATUS_H_

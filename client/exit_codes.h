// cl-client's documented exit codes (see its --help), and the status → code mapping.
#ifndef CLIENT_EXIT_CODES_H_
#define CLIENT_EXIT_CODES_H_

#include "absl/status/status.h"

namespace cl {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitBadInput = 3;
inline constexpr int kExitUnavailable = 4;
inline constexpr int kExitGateFailed = 5;   // check, run, upload: a gate failed
inline constexpr int kExitCannotRun = 127;  // run: the command could not be started

inline int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kDataLoss:  // a file that does not read (a corrupt .log.gz)
      return kExitBadInput;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kAborted:
      return kExitUnavailable;
    default:
      return kExitInternal;
  }
}

}  // namespace cl

#endif  // CLIENT_EXIT_CODES_H_

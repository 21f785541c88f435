// Status propagation macros. abseil 20220623 (Debian bookworm) has no status_macros.h, so the
// project carries its own, prefixed CL_ so that a later abseil's macros cannot collide with them.
#ifndef COMMON_STATUS_MACROS_H_
#define COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns the status of `expr` from the calling function when it is not OK.
#define CL_RETURN_IF_ERROR(expr)                                                 \
  do {                                                                           \
    if (::absl::Status cl_status_ = (expr); !cl_status_.ok()) return cl_status_; \
  } while (0)

#define CL_STATUS_CONCAT_INNER_(a, b) a##b
#define CL_STATUS_CONCAT_(a, b) CL_STATUS_CONCAT_INNER_(a, b)

// `CL_ASSIGN_OR_RETURN(auto x, Fn());` declares x from an OK StatusOr, or returns its status.
#define CL_ASSIGN_OR_RETURN(lhs, expr) \
  CL_ASSIGN_OR_RETURN_IMPL_(CL_STATUS_CONCAT_(cl_statusor_, __LINE__), lhs, expr)
#define CL_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)     \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = *std::move(statusor)

#endif  // COMMON_STATUS_MACROS_H_

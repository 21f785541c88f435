// gMock matchers for absl::Status and absl::StatusOr. abseil 20220623 has no status_matchers.h.
//
//   EXPECT_THAT(Fn(), IsOk());
//   EXPECT_THAT(Fn(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("compiles[3].id")));
//   ASSERT_OK_AND_ASSIGN(auto capture, ParseCaptureJson(text));
#ifndef TESTS_TESTING_STATUS_MATCHERS_H_
#define TESTS_TESTING_STATUS_MATCHERS_H_

#include <ostream>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace cl::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status is " << s;
  return s.ok();
}

MATCHER_P2(StatusIs, code, message_matcher, "") {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status is " << s;
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()), result_listener);
}

}  // namespace cl::testing

#define CL_TEST_CONCAT_INNER_(a, b) a##b
#define CL_TEST_CONCAT_(a, b) CL_TEST_CONCAT_INNER_(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(CL_TEST_CONCAT_(cl_test_statusor_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                               \
  ASSERT_TRUE(statusor.ok()) << statusor.status();      \
  lhs = *std::move(statusor)

#endif  // TESTS_TESTING_STATUS_MATCHERS_H_

// What a fuzz target does when an invariant of the code under test breaks: say which one and
// abort, so that libFuzzer records the input as a crash (a finding, like a sanitizer report).
#ifndef TESTS_FUZZ_FUZZ_CHECK_H_
#define TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "common/proto_json.h"
#include "google/protobuf/message.h"
#include "google/protobuf/message_lite.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"

#define CL_FUZZ_CHECK(cond)                                                                   \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

// The same for a status that must be OK, printing its message: a CI log then names the rule that
// broke, not only the line.
#define CL_FUZZ_CHECK_OK(expr)                                                 \
  do {                                                                         \
    const ::absl::Status cl_fuzz_status = (expr);                              \
    if (!cl_fuzz_status.ok()) {                                                \
      std::fprintf(stderr, "fuzz invariant failed: %s is %s (%s:%d)\n", #expr, \
                   cl_fuzz_status.ToString().c_str(), __FILE__, __LINE__);     \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

namespace cl::fuzz {

using ::cl::DeterministicBytes;  // SerializeAsString writes maps in hash order

// Whether two messages are equal field by field, NaN equal to NaN; prints the differences.
inline bool SameMessage(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  std::string report;
  differencer.ReportDifferencesToString(&report);
  const bool same = differencer.Compare(a, b);
  if (!same) std::fprintf(stderr, "messages differ:\n%s\n", report.substr(0, 4000).c_str());
  return same;
}

}  // namespace cl::fuzz

#endif  // TESTS_FUZZ_FUZZ_CHECK_H_

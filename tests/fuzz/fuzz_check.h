// What a fuzz target does when an invariant of the code under test breaks: say which one and
// abort, so that libFuzzer records the input as a crash (a finding, like a sanitizer report).
#ifndef TESTS_FUZZ_FUZZ_CHECK_H_
#define TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message_lite.h"

#define CL_FUZZ_CHECK(cond)                                                                    \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)

namespace cl::fuzz {

// A message's wire bytes with map entries sorted: SerializeAsString writes maps in hash order,
// which differs between two equal messages.
inline std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace cl::fuzz

#endif  // TESTS_FUZZ_FUZZ_CHECK_H_

// The project's binaries and inputs as the end-to-end tests run them, and a scratch path helper.
#ifndef TESTS_TESTING_BINARIES_H_
#define TESTS_TESTING_BINARIES_H_

#include <string>

#include "gtest/gtest.h"

namespace cl::testing {

inline const std::string kServerBinary = CL_BINARY_DIR "/service/cl-server";
inline const std::string kClientBinary = CL_BINARY_DIR "/client/cl-client";
inline const std::string kHeroHead = CL_SOURCE_DIR "/examples/hero/head.cls.json";
inline const std::string kHeroBase = CL_SOURCE_DIR "/examples/hero/base.cls.json";

// A path in the test's scratch folder.
inline std::string TmpPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

}  // namespace cl::testing

#endif  // TESTS_TESTING_BINARIES_H_

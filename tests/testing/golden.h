// Golden files: tests/golden/<area>/<name>. Set CL_UPDATE_GOLDEN=1 to rewrite them from the
// current output (then review the diff like any other change).
#ifndef TESTS_TESTING_GOLDEN_H_
#define TESTS_TESTING_GOLDEN_H_

#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "common/file_io.h"
#include "gtest/gtest.h"

namespace cl::testing {

// `path` is relative to tests/golden ("render/hero.html").
inline std::string GoldenPath(absl::string_view path) {
  return std::string(CL_SOURCE_DIR) + "/tests/golden/" + std::string(path);
}

// Compares `actual` with the golden file, or rewrites the file under CL_UPDATE_GOLDEN.
inline void ExpectMatchesGolden(absl::string_view name, const std::string& actual) {
  const std::string path = GoldenPath(name);
  if (const char* update = std::getenv("CL_UPDATE_GOLDEN"); update && *update) {
    ASSERT_TRUE(WriteFile(path, actual).ok()) << path;
    return;
  }
  const absl::StatusOr<std::string> golden = ReadFile(path);
  ASSERT_TRUE(golden.ok()) << golden.status() << " (run with CL_UPDATE_GOLDEN=1 to create it)";
  EXPECT_EQ(actual, *golden) << "output differs from " << path
                             << "; if the change is intended, rerun with CL_UPDATE_GOLDEN=1";
}

}  // namespace cl::testing

#endif  // TESTS_TESTING_GOLDEN_H_

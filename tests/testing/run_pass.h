// Runs one analysis pass the way the engine does, for pass tests.
#ifndef TESTS_TESTING_RUN_PASS_H_
#define TESTS_TESTING_RUN_PASS_H_

#include "analyzers/pass.h"
#include "gtest/gtest.h"

namespace cl::testing {

// Runs `pass` on `head` (and `base`), expects it to succeed, and returns the report it wrote;
// `keep`, when given, gets a copy too.
inline compile_lens::v1::AnalysisReport RunPassOk(
    const Pass& pass, const compile_lens::v1::SessionCapture& head,
    compile_lens::v1::AnalysisReport* keep = nullptr,
    const compile_lens::v1::SessionCapture* base = nullptr) {
  compile_lens::v1::AnalysisReport report;
  const PassOptions options;
  const PassInput in{head, base, options};
  const absl::Status status = pass.Run(in, &report);
  EXPECT_TRUE(status.ok()) << pass.Name() << ": " << status;
  if (keep != nullptr) *keep = report;
  return report;
}

// Runs `pass` on `head` with the cancel flag already set, and returns its status.
inline absl::Status RunPassCancelled(const Pass& pass,
                                     const compile_lens::v1::SessionCapture& head) {
  compile_lens::v1::AnalysisReport report;
  const PassOptions options;
  const std::atomic<bool> cancelled{true};
  const PassInput in{head, nullptr, options, &cancelled};
  return pass.Run(in, &report);
}

}  // namespace cl::testing

#endif  // TESTS_TESTING_RUN_PASS_H_

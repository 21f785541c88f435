// Helpers for the lint tests: run the scan on snippets and list what it found.
#ifndef TESTS_LINT_LINT_TESTING_H_
#define TESTS_LINT_LINT_TESTING_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "lint/linter.h"

// The tests say `using namespace ::cl::lint::testing;` for these helpers and the matchers below.
namespace cl::lint::testing {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// Scans `files` ({path, source}) with `options`.
inline LintResult LintFiles(const std::vector<std::pair<std::string, std::string>>& files,
                            const LintOptions& options = {}) {
  std::vector<LintSource> sources;
  for (const auto& [path, text] : files) sources.push_back({path, text});
  return Lint(sources, options);
}

inline LintResult LintCode(const std::string& code, const LintOptions& options = {}) {
  return LintFiles({{"/p/t.py", code}}, options);
}

// "pattern:line" for each finding, in report order.
inline std::vector<std::string> Found(const LintResult& r) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) out.push_back(absl::StrCat(f.pattern, ":", f.line));
  return out;
}

// The same, only for one pattern.
inline std::vector<std::string> Found(const LintResult& r, const std::string& pattern) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) {
    if (f.pattern == pattern) out.push_back(absl::StrCat(f.pattern, ":", f.line));
  }
  return out;
}

// The sub-form of each finding of one pattern, in report order.
inline std::vector<std::string> Forms(const LintResult& r, const std::string& pattern) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) {
    if (f.pattern == pattern) out.push_back(f.form);
  }
  return out;
}

inline const Finding* FindingFor(const LintResult& r, const std::string& pattern) {
  for (const Finding& f : r.findings) {
    if (f.pattern == pattern) return &f;
  }
  return nullptr;
}

}  // namespace cl::lint::testing

#endif  // TESTS_LINT_LINT_TESTING_H_

// The repository's test inputs, tests/fixtures/: the real TORCH_TRACE logs (torch_trace/, where a
// log over 64 KiB is stored gzipped; its README says why), the seed page (seed/hero.html) and the
// capture package's logs (python/).
#ifndef TESTS_TESTING_FIXTURES_H_
#define TESTS_TESTING_FIXTURES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cl::testing {

// tests/fixtures/<path> ("torch_trace/torch-2.6/train/trace.log"), or <path>.gz where the file is
// stored gzipped. The importer reads either; tests name a fixture as it was written.
std::string FixturePath(absl::string_view path);

// A fixture's bytes as they were written: a gzipped file is inflated, a plain one read as it is.
absl::StatusOr<std::string> ReadFixture(const std::string& path);

// Every non-empty TORCH_TRACE log under tests/fixtures/torch_trace (written as .log or .txt,
// stored plain or gzipped), sorted.
std::vector<std::string> FixtureTraceLogs();

// `path` without the ".gz" it may be stored under: the name expectations and seeds are named after.
absl::string_view WrittenName(absl::string_view path);

}  // namespace cl::testing

#endif  // TESTS_TESTING_FIXTURES_H_

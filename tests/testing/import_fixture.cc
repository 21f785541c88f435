#include "tests/testing/import_fixture.h"

#include <utility>

#include "capture/torch_trace/importer.h"
#include "gtest/gtest.h"
#include "tests/testing/fixtures.h"

namespace cl::testing {

compile_lens::v1::SessionCapture ImportFixtureLog(absl::string_view path) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<compile_lens::v1::SessionCapture> capture =
      ImportTraceFile(FixturePath(path), options);
  if (!capture.ok()) {
    ADD_FAILURE() << path << ": " << capture.status();
    return {};
  }
  return *std::move(capture);
}

}  // namespace cl::testing

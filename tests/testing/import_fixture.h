// A TORCH_TRACE fixture log imported as the importer does for a user, without reading the source
// files its stacks name (a test must not depend on what this machine has at those paths).
#ifndef TESTS_TESTING_IMPORT_FIXTURE_H_
#define TESTS_TESTING_IMPORT_FIXTURE_H_

#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl::testing {

// tests/fixtures/<path> ("torch_trace/torch-2.6/adamw_step/trace.log", named as it was written);
// an import error fails the calling test and gives an empty capture.
compile_lens::v1::SessionCapture ImportFixtureLog(absl::string_view path);

}  // namespace cl::testing

#endif  // TESTS_TESTING_IMPORT_FIXTURE_H_

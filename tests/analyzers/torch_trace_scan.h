// A small TORCH_TRACE reader for tests (docs/torch-trace-format.md §1.2): the fixtures are real
// logs, and the tests that check the parsers against them must not depend on the capture importer
// they exist to cross-check.
#ifndef TESTS_ANALYZERS_TORCH_TRACE_SCAN_H_
#define TESTS_ANALYZERS_TORCH_TRACE_SCAN_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

namespace cl::testing {

// One record: the header's JSON metadata and its payload (tab-prefixed lines, tabs removed).
struct TraceRecord {
  int line = 0;  // 1-based line of the header
  google::protobuf::Struct metadata;
  std::string payload;
};

struct ScanStats {
  int headers = 0;
  int bad_json = 0;  // headers whose JSON did not parse (simple_corrupted_json.log has some)
};

// Calls `fn` for every record of `text` whose header JSON contains one of `wanted` (parsing only
// those keeps a 30 MB corpus fast).
ScanStats ScanTorchTrace(absl::string_view text, const std::vector<std::string>& wanted,
                         absl::FunctionRef<void(const TraceRecord&)> fn);

// A JSON document (string, list, object, ...) as a Value; false when it is not JSON.
bool ParseJsonValue(absl::string_view json, google::protobuf::Value* out);

// The frame_id / frame_compile_id of a record as "0/1", or "" when it has none.
std::string RecordCompileId(const TraceRecord& record);

}  // namespace cl::testing

#endif  // TESTS_ANALYZERS_TORCH_TRACE_SCAN_H_

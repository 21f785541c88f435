#include "tests/testing/hostile_inputs.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/service.pb.h"

namespace cl::testing {

std::string StrTableAmplifier(size_t name_bytes, int starts) {
  constexpr absl::string_view kHeader = "V1202 11:00:00.000000 7 torch/_logging/structured.py:22] ";
  std::string log =
      absl::StrCat(kHeader, "{\"str\": [\"/", std::string(name_bytes, 'a'), ".py\", 0]}\n");
  for (int i = 0; i < starts; ++i) {
    absl::StrAppend(&log, kHeader,
                    "{\"dynamo_start\": {\"stack\": [{\"line\": 1, \"name\": \"f\", "
                    "\"filename\": 0}]}, \"frame_id\": ",
                    i, ", \"frame_compile_id\": 0, \"attempt\": 0}\n");
  }
  return log;
}

std::string OptionsOnlyMessage() {
  ::compile_lens::v1::AnalyzeChunk first;
  first.mutable_options();
  return first.SerializeAsString();
}

}  // namespace cl::testing

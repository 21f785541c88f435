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

std::string CodePointBytes(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

}  // namespace cl::testing

#include "tests/analyzers/torch_trace_scan.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "re2/re2.h"

namespace cl::testing {
namespace {

// "V1129 13:44:42.778000 22839 torch/_dynamo/guards.py:2795] {...}"; the pathname may be
// absolute and tlparse's own regex tolerates a missing space before it.
const RE2& HeaderRe() {
  static const RE2* const kRe =
      new RE2(R"re([VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ ?[^\]]*\] (\{.*))re");
  return *kRe;
}

}  // namespace

bool ParseJsonValue(absl::string_view json, google::protobuf::Value* out) {
  // Wrapping keeps top-level strings and lists on the well-trodden object path of the parser.
  google::protobuf::Struct wrapper;
  if (!google::protobuf::util::JsonStringToMessage(absl::StrCat("{\"v\":", json, "}"), &wrapper)
           .ok()) {
    return false;
  }
  *out = wrapper.fields().at("v");
  return true;
}

ScanStats ScanTorchTrace(absl::string_view text, const std::vector<std::string>& wanted,
                         absl::FunctionRef<void(const TraceRecord&)> fn) {
  ScanStats stats;
  const std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    re2::StringPiece json;
    if (!RE2::FullMatch(re2::StringPiece(lines[i].data(), lines[i].size()), HeaderRe(), &json)) {
      continue;
    }
    ++stats.headers;
    const absl::string_view header(json.data(), json.size());
    bool want = false;
    for (const std::string& w : wanted) want = want || absl::StrContains(header, w);
    if (!want) continue;
    TraceRecord record;
    record.line = static_cast<int>(i) + 1;
    if (!google::protobuf::util::JsonStringToMessage(std::string(header), &record.metadata).ok()) {
      ++stats.bad_json;
      continue;
    }
    // The payload is the following tab-prefixed lines; tlparse drops empty lines first.
    std::vector<absl::string_view> payload;
    for (size_t j = i + 1; j < lines.size(); ++j) {
      if (lines[j].empty()) continue;
      if (lines[j][0] != '\t') break;
      payload.push_back(lines[j].substr(1));
    }
    record.payload = absl::StrJoin(payload, "\n");
    fn(record);
  }
  return stats;
}

std::string RecordCompileId(const TraceRecord& record) {
  const auto& fields = record.metadata.fields();
  auto frame = fields.find("frame_id");
  auto compile = fields.find("frame_compile_id");
  if (frame == fields.end() || compile == fields.end() ||
      frame->second.kind_case() != google::protobuf::Value::kNumberValue ||
      compile->second.kind_case() != google::protobuf::Value::kNumberValue) {
    return "";
  }
  return absl::StrCat(static_cast<int>(frame->second.number_value()), "/",
                      static_cast<int>(compile->second.number_value()));
}

}  // namespace cl::testing

// Small readers over simdjson's DOM for the trace parser: typed lookups that tolerate absent and
// null fields (torch writes `null` for unset metrics), and conversion of any JSON value into a
// google.protobuf.Value so that records can be kept whole (Compile.metrics).
#ifndef CAPTURE_TORCH_TRACE_JSON_VALUE_H_
#define CAPTURE_TORCH_TRACE_JSON_VALUE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "simdjson.h"

namespace cl::json {

using Element = simdjson::dom::element;

// The array or object `value` is; an empty one when it is not. (Range-for over a temporary
// simdjson_result dangles, so loops go through these.)
simdjson::dom::array AsArray(Element value);
simdjson::dom::object AsObject(Element value);

std::optional<Element> Field(Element object, absl::string_view key);
std::optional<int64_t> Int(Element object, absl::string_view key);
// `d` as an int64 (truncated), or nullopt when it does not fit (or is not a number).
std::optional<int64_t> ToInt64(double d);
std::optional<double> Number(Element object, absl::string_view key);
// A string field; numbers and booleans are not strings. Absent and null are nullopt.
std::optional<std::string> String(Element object, absl::string_view key);

// `value` as a google.protobuf.Value. Containers nested deeper than `max_depth` become their JSON
// text, so hostile nesting cannot exhaust the stack.
void ToProtoValue(Element value, google::protobuf::Value* out, int max_depth = 32);
// `text` as a Struct when it is a JSON object; false otherwise (not JSON, or another kind of
// value).
bool ParseStruct(const std::string& text, google::protobuf::Struct* out);
// The JSON text of `value`.
std::string ToJsonText(Element value);

}  // namespace cl::json

#endif  // CAPTURE_TORCH_TRACE_JSON_VALUE_H_

#include "capture/torch_trace/json_value.h"

#include <utility>

namespace cl::json {

simdjson::dom::array AsArray(Element value) {
  simdjson::dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) return {};
  return array;
}

simdjson::dom::object AsObject(Element value) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) return {};
  return object;
}

std::optional<Element> Field(Element object, absl::string_view key) {
  if (!object.is_object()) return std::nullopt;
  Element value;
  if (AsObject(object).at_key(std::string_view(key.data(), key.size())).get(value) !=
      simdjson::SUCCESS) {
    return std::nullopt;
  }
  if (value.is_null()) return std::nullopt;
  return value;
}

std::optional<int64_t> Int(Element object, absl::string_view key) {
  std::optional<Element> v = Field(object, key);
  if (!v) return std::nullopt;
  int64_t i;
  if (v->get_int64().get(i) == simdjson::SUCCESS) return i;
  double d;
  if (v->get_double().get(d) == simdjson::SUCCESS) return ToInt64(d);
  return std::nullopt;
}

std::optional<int64_t> ToInt64(double d) {
  // Within ±9.2e18, safely inside int64's range; NaN and infinities compare false.
  if (d >= -9.2e18 && d <= 9.2e18) return static_cast<int64_t>(d);
  return std::nullopt;
}

std::optional<double> Number(Element object, absl::string_view key) {
  std::optional<Element> v = Field(object, key);
  if (!v) return std::nullopt;
  double d;
  if (v->get_double().get(d) == simdjson::SUCCESS) return d;
  int64_t i;
  if (v->get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  uint64_t u;
  if (v->get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  return std::nullopt;
}

std::optional<std::string> String(Element object, absl::string_view key) {
  std::optional<Element> v = Field(object, key);
  if (!v) return std::nullopt;
  std::string_view s;
  if (v->get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
  return std::string(s);
}

bool ParseStruct(const std::string& text, google::protobuf::Struct* out) {
  static thread_local simdjson::dom::parser parser;
  Element root;
  if (parser.parse(text).get(root) != simdjson::SUCCESS || !root.is_object()) return false;
  google::protobuf::Value value;
  ToProtoValue(root, &value);
  *out = std::move(*value.mutable_struct_value());
  return true;
}

std::string ToJsonText(Element value) { return simdjson::minify(value); }

void ToProtoValue(Element value, google::protobuf::Value* out, int max_depth) {
  switch (value.type()) {
    case simdjson::dom::element_type::NULL_VALUE:
      out->set_null_value(google::protobuf::NULL_VALUE);
      return;
    case simdjson::dom::element_type::BOOL:
      out->set_bool_value(bool(value));
      return;
    case simdjson::dom::element_type::INT64:
      out->set_number_value(static_cast<double>(int64_t(value)));
      return;
    case simdjson::dom::element_type::UINT64:
      out->set_number_value(static_cast<double>(uint64_t(value)));
      return;
    case simdjson::dom::element_type::DOUBLE:
      out->set_number_value(double(value));
      return;
    case simdjson::dom::element_type::STRING: {
      std::string_view s = value.get_string().value_unsafe();
      out->set_string_value(std::string(s));
      return;
    }
    case simdjson::dom::element_type::ARRAY:
      if (max_depth <= 0) {
        out->set_string_value(ToJsonText(value));
        return;
      }
      out->mutable_list_value();
      for (Element item : AsArray(value))
        ToProtoValue(item, out->mutable_list_value()->add_values(), max_depth - 1);
      return;
    case simdjson::dom::element_type::OBJECT:
      if (max_depth <= 0) {
        out->set_string_value(ToJsonText(value));
        return;
      }
      out->mutable_struct_value();
      for (simdjson::dom::key_value_pair kv : AsObject(value)) {
        ToProtoValue(kv.value,
                     &(*out->mutable_struct_value()->mutable_fields())[std::string(kv.key)],
                     max_depth - 1);
      }
      return;
  }
}

}  // namespace cl::json

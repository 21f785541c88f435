// Building JSON documents as google.protobuf.Struct values (printed by ToDeterministicJson): the
// two leaf kinds every hand-built document needs.
#ifndef SERVICE_RENDER_STRUCT_JSON_H_
#define SERVICE_RENDER_STRUCT_JSON_H_

#include <string>
#include <utility>

#include "google/protobuf/struct.pb.h"

namespace cl {

inline google::protobuf::Value JsonNumber(double v) {
  google::protobuf::Value out;
  out.set_number_value(v);
  return out;
}

inline google::protobuf::Value JsonString(std::string v) {
  google::protobuf::Value out;
  out.set_string_value(std::move(v));
  return out;
}

}  // namespace cl

#endif  // SERVICE_RENDER_STRUCT_JSON_H_

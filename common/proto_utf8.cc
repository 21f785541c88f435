#include "common/proto_utf8.h"

#include <string>
#include <vector>

#include "common/utf8.h"
#include "google/protobuf/descriptor.h"

namespace cl {

using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;

int RepairUtf8(Message& message) {
  int repaired = 0;
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);  // only the fields that are set
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      // Map fields are repeated entry messages here; their key and value are plain fields.
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          repaired += RepairUtf8(*reflection->MutableRepeatedMessage(&message, field, i));
        }
      } else {
        repaired += RepairUtf8(*reflection->MutableMessage(&message, field));
      }
      continue;
    }
    if (field->type() != FieldDescriptor::TYPE_STRING) continue;
    if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        std::string scratch;
        const std::string& value =
            reflection->GetRepeatedStringReference(message, field, i, &scratch);
        if (IsValidUtf8(value)) continue;
        reflection->SetRepeatedString(&message, field, i, ToValidUtf8(value));
        ++repaired;
      }
    } else {
      std::string scratch;
      const std::string& value = reflection->GetStringReference(message, field, &scratch);
      if (IsValidUtf8(value)) continue;
      reflection->SetString(&message, field, ToValidUtf8(value));
      ++repaired;
    }
  }
  return repaired;
}

}  // namespace cl

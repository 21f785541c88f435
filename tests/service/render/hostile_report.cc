#include "tests/service/render/hostile_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace cl::testing {
namespace {

namespace v1 = ::compile_lens::v1;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;

std::string Payload(absl::string_view path) { return absl::StrCat(kHostilePayload, Marker(path)); }

void Fill(Message& message, const std::string& path, v1::SectionStatus status);

// Sets one value (or appends one element, for a repeated field) of `field`.
void FillField(Message& message, const FieldDescriptor* field, const std::string& path,
               v1::SectionStatus status) {
  const auto* reflection = message.GetReflection();
  const bool repeated = field->is_repeated();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      repeated ? reflection->AddString(&message, field, Payload(path))
               : reflection->SetString(&message, field, Payload(path));
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      Fill(repeated ? *reflection->AddMessage(&message, field)
                    : *reflection->MutableMessage(&message, field),
           path, status);
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int value =
          field->enum_type()->full_name() == "compile_lens.v1.SectionStatus"
              ? static_cast<int>(status)
              : field->enum_type()->value(field->enum_type()->value_count() - 1)->number();
      repeated ? reflection->AddEnumValue(&message, field, value)
               : reflection->SetEnumValue(&message, field, value);
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      repeated ? reflection->AddBool(&message, field, true)
               : reflection->SetBool(&message, field, true);
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      repeated ? reflection->AddDouble(&message, field, 0.5)
               : reflection->SetDouble(&message, field, 0.5);
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      repeated ? reflection->AddFloat(&message, field, 0.5f)
               : reflection->SetFloat(&message, field, 0.5f);
      break;
    case FieldDescriptor::CPPTYPE_INT32:
      repeated ? reflection->AddInt32(&message, field, 7)
               : reflection->SetInt32(&message, field, 7);
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      repeated ? reflection->AddInt64(&message, field, 7)
               : reflection->SetInt64(&message, field, 7);
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      repeated ? reflection->AddUInt32(&message, field, 7)
               : reflection->SetUInt32(&message, field, 7);
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      repeated ? reflection->AddUInt64(&message, field, 7)
               : reflection->SetUInt64(&message, field, 7);
      break;
  }
}

void Fill(Message& message, const std::string& path, v1::SectionStatus status) {
  const auto* descriptor = message.GetDescriptor();
  // google.protobuf.Value nests itself (a Struct of Values): a hostile string ends it.
  if (descriptor->full_name() == "google.protobuf.Value") {
    message.GetReflection()->SetString(&message, descriptor->FindFieldByName("string_value"),
                                       Payload(path));
    return;
  }
  // A message that nests itself (a guard tree's children) is filled a few levels deep.
  if (std::count(path.begin(), path.end(), '.') > 8) return;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    std::string field_path = path.empty() ? field->name() : absl::StrCat(path, ".", field->name());
    // A map entry's key and value are fields of the entry message: "labels{key}".
    if (field->is_map()) {
      Fill(*message.GetReflection()->AddMessage(&message, field), field_path + "{}", status);
      continue;
    }
    if (field->is_repeated()) field_path += "[0]";
    FillField(message, field, field_path, status);
  }
}

}  // namespace

std::string Marker(absl::string_view path) { return absl::StrCat("#", path, "#"); }

v1::AnalysisReport HostileReport(v1::SectionStatus status) {
  v1::AnalysisReport report;
  Fill(report, "", status);
  return report;
}

v1::SessionCapture HostileCapture() {
  v1::SessionCapture capture;
  Fill(capture, "", v1::OK);
  return capture;
}

}  // namespace cl::testing

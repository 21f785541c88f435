#include "common/proto_utf8.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"

namespace cl {
namespace {

using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;

// What to put in place of a string field's value; nullopt leaves it.
using Rewrite =
    absl::FunctionRef<std::optional<std::string>(const FieldDescriptor&, const std::string&)>;

// Calls `rewrite` on every string field set in `message`, at any depth (map entries are repeated
// messages here, their key and value plain fields), and stores what it returns. Returns how many
// it changed.
int RewriteStrings(Message& message, Rewrite rewrite) {
  int changed = 0;
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);  // only the fields that are set
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          changed +=
              RewriteStrings(*reflection->MutableRepeatedMessage(&message, field, i), rewrite);
        }
      } else {
        changed += RewriteStrings(*reflection->MutableMessage(&message, field), rewrite);
      }
      continue;
    }
    if (field->type() != FieldDescriptor::TYPE_STRING) continue;
    std::string scratch;
    if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        const std::string& value =
            reflection->GetRepeatedStringReference(message, field, i, &scratch);
        if (std::optional<std::string> next = rewrite(*field, value)) {
          reflection->SetRepeatedString(&message, field, i, *std::move(next));
          ++changed;
        }
      }
    } else {
      const std::string& value = reflection->GetStringReference(message, field, &scratch);
      if (std::optional<std::string> next = rewrite(*field, value)) {
        reflection->SetString(&message, field, *std::move(next));
        ++changed;
      }
    }
  }
  return changed;
}

bool IsMapKey(const FieldDescriptor& field) {
  return field.containing_type()->options().map_entry() && field.number() == 1;
}

}  // namespace

int RepairUtf8(Message& message) {
  return RewriteStrings(
      message, [](const FieldDescriptor&, const std::string& value) -> std::optional<std::string> {
        if (IsValidUtf8(value)) return std::nullopt;
        return ToValidUtf8(value);
      });
}

std::optional<std::string> ClippedString(const std::string& value, size_t max_bytes) {
  if (value.size() <= max_bytes) return std::nullopt;
  return absl::StrCat(Utf8Prefix(value, max_bytes), kEllipsis, "[clipped: ", value.size(),
                      " bytes in all]");
}

int ClipLongStrings(Message& message, size_t max_bytes) {
  return RewriteStrings(message,
                        [max_bytes](const FieldDescriptor& field,
                                    const std::string& value) -> std::optional<std::string> {
                          if (IsMapKey(field)) return std::nullopt;
                          return ClippedString(value, max_bytes);
                        });
}

}  // namespace cl

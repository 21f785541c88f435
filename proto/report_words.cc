#include "proto/report_words.h"

#include <memory>
#include <string>

#include "common/proto_json.h"
#include "compile_lens/v1/report.pb.h"
#include "google/protobuf/type.pb.h"
#include "google/protobuf/util/type_resolver_util.h"

namespace cl {
namespace {

namespace pb = ::google::protobuf;

// protobuf's resolver for the generated pool, with each enum value renamed to its word. The JSON
// printer names a value by the name its resolver gives (the zero value's too, when it prints a
// field left at its default), and the parser looks the name up the same way.
class WordTypeResolver final : public pb::util::TypeResolver {
 public:
  WordTypeResolver()
      : generated_(pb::util::NewTypeResolverForDescriptorPool(
            kTypeUrlPrefix, pb::DescriptorPool::generated_pool())) {}

  pb::util::Status ResolveMessageType(const std::string& type_url, pb::Type* type) override {
    return generated_->ResolveMessageType(type_url, type);
  }

  pb::util::Status ResolveEnumType(const std::string& type_url, pb::Enum* enum_type) override {
    pb::util::Status status = generated_->ResolveEnumType(type_url, enum_type);
    if (!status.ok()) return status;
    const pb::EnumDescriptor* descriptor = pb::DescriptorPool::generated_pool()->FindEnumTypeByName(
        type_url.substr(type_url.rfind('/') + 1));
    if (descriptor == nullptr) return status;
    for (pb::EnumValue& value : *enum_type->mutable_enumvalue()) {
      const pb::EnumValueDescriptor* v = descriptor->FindValueByNumber(value.number());
      if (v != nullptr && v->options().HasExtension(compile_lens::v1::word)) {
        value.set_name(v->options().GetExtension(compile_lens::v1::word));
      }
    }
    return status;
  }

 private:
  const std::unique_ptr<pb::util::TypeResolver> generated_;
};

}  // namespace

absl::string_view Word(const pb::EnumValueDescriptor* value) {
  if (value == nullptr) return "";
  const pb::EnumValueOptions& options = value->options();
  return options.HasExtension(compile_lens::v1::word) ? options.GetExtension(compile_lens::v1::word)
                                                      : value->name();
}

pb::util::TypeResolver* ReportTypes() {
  static pb::util::TypeResolver* const kResolver = new WordTypeResolver();
  return kResolver;
}

}  // namespace cl

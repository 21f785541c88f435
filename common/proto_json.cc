#include "common/proto_json.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/proto_json_printer.h"
#include "common/proto_status.h"
#include "common/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/type_resolver.h"
#include "google/protobuf/util/type_resolver_util.h"

namespace cl {
namespace {

google::protobuf::util::TypeResolver* GeneratedTypes() {
  static google::protobuf::util::TypeResolver* const kResolver =
      google::protobuf::util::NewTypeResolverForDescriptorPool(
          kTypeUrlPrefix, google::protobuf::DescriptorPool::generated_pool());
  return kResolver;
}

}  // namespace

std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    (void)message.SerializeToCodedStream(&coded);  // fails only past 2 GiB (see the header)
  }
  return out;
}

absl::StatusOr<std::string> ToDeterministicJson(
    const google::protobuf::Message& message,
    const google::protobuf::util::JsonPrintOptions& options,
    google::protobuf::util::TypeResolver* types) {
  std::string json;
  {
    google::protobuf::io::StringOutputStream out(&json);
    CL_RETURN_IF_ERROR(WriteDeterministicJson(message, options, &out, types));
  }
  return json;
}

absl::Status WriteDeterministicJson(const google::protobuf::Message& message,
                                    const google::protobuf::util::JsonPrintOptions& options,
                                    google::protobuf::io::ZeroCopyOutputStream* out,
                                    google::protobuf::util::TypeResolver* types) {
  if (types == nullptr && CanPrintProtoJson(message.GetDescriptor(), options)) {
    if (!PrintProtoJson(message, options, out)) {
      return absl::DataLossError(absl::StrCat(message.GetTypeName(), " to JSON: the write failed"));
    }
    return absl::OkStatus();
  }
  const std::string wire = DeterministicBytes(message);
  // Empty bytes are an empty message, or one past 2 GiB that protobuf refused to write: only then
  // is the message walked again to tell which.
  if (wire.empty() && message.ByteSizeLong() > 0) {
    return absl::InternalError(
        absl::StrCat(message.GetTypeName(), " does not serialize (over 2 GiB)"));
  }
  google::protobuf::io::ArrayInputStream in(wire.data(), static_cast<int>(wire.size()));
  return FromProtobufStatus(
      google::protobuf::util::BinaryToJsonStream(
          types != nullptr ? types : GeneratedTypes(),
          absl::StrCat(kTypeUrlPrefix, "/", message.GetDescriptor()->full_name()), &in, out,
          options),
      absl::StrCat(message.GetTypeName(), " to JSON"));
}

}  // namespace cl

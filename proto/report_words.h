// The words the report prints for its enum values (the `word` option of report.proto).
//
// Several report fields were free strings before they were enums (recompile and graph-break
// categories, lint severity, roofline bound and time source); their JSON still carries the same
// strings, because dashboards read them (docs/design.md §6). Each value names its string with
// `[(word) = "..."]`; Word() reads it for the HTML page, the terminal summary and the metrics'
// labels, and ReportTypes() lets protobuf's JSON printer and parser use it.
#ifndef PROTO_REPORT_WORDS_H_
#define PROTO_REPORT_WORDS_H_

#include "absl/strings/string_view.h"
#include "compile_lens/v1/report_code.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/generated_enum_reflection.h"
#include "google/protobuf/util/type_resolver.h"

namespace cl {

// `value`'s word, or its name when it has none; "" for null (a number this build does not know).
absl::string_view Word(const google::protobuf::EnumValueDescriptor* value);

// The word of a generated enum's value: Word(v1::LintFinding::ERROR) is "error". The enums of
// report.proto and capture.proto have overloads in report_code.h that read no descriptor; this
// reads the descriptor of any other.
template <typename Enum>
absl::string_view Word(Enum value) {
  return Word(google::protobuf::GetEnumDescriptor<Enum>()->FindValueByNumber(value));
}

// The generated pool's types, with every enum value that has a word named by its word: what the
// report's JSON is printed and parsed through (BinaryToJsonString, JsonToBinaryString). Types
// without words are as protobuf describes them. Process-wide, thread-safe, never deleted.
google::protobuf::util::TypeResolver* ReportTypes();

}  // namespace cl

#endif  // PROTO_REPORT_WORDS_H_

// gen_report_code DIR: writes DIR/report_code.h and DIR/report_code.cc, the code that would
// otherwise read report.proto and capture.proto through protobuf's reflection at run time:
//
//   - Word() for every enum of both files (its values' `word` option, else their names);
//   - kReportSections, the AnalysisReport fields that are sections, with typed accessors for their
//     status and reason and a typed copy;
//   - RewriteReportStrings(), a typed walk over every string field an AnalysisReport can hold;
//   - kCaptureSchemaVersion, capture.proto's (schema_version) option.
//
// The first use of reflection builds the descriptors of the files involved (report.proto,
// capture.proto, descriptor.proto, struct.proto): a fifth of what `cl-client analyze` costs on a
// log of a few KB (bench/README.md). This program pays that once, at build time, and its output
// uses only the generated classes' accessors.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"
#include "google/protobuf/descriptor.h"

namespace {

namespace pb = ::google::protobuf;
namespace v1 = ::compile_lens::v1;

// "compile_lens.v1.Outer.Inner" in package "compile_lens.v1" -> "::compile_lens::v1::Outer_Inner".
std::string CppName(const std::string& full_name, const pb::FileDescriptor* file) {
  const std::string& package = file->package();
  std::string local = full_name.substr(package.empty() ? 0 : package.size() + 1);
  return absl::StrCat("::", absl::StrReplaceAll(package, {{".", "::"}}),
                      "::", absl::StrReplaceAll(local, {{".", "_"}}));
}
std::string CppName(const pb::Descriptor* d) { return CppName(d->full_name(), d->file()); }
std::string CppName(const pb::EnumDescriptor* e) { return CppName(e->full_name(), e->file()); }

// The accessor protoc generates for a field: its lower-case name, with `_` after a C++ keyword.
std::string Accessor(const pb::FieldDescriptor* f) {
  static const std::set<std::string> kKeywords = {
      "alignas",  "alignof",  "and",      "asm",      "auto",     "bool",      "break",
      "case",     "catch",    "char",     "class",    "const",    "constexpr", "continue",
      "default",  "delete",   "do",       "double",   "else",     "enum",      "explicit",
      "export",   "extern",   "false",    "float",    "for",      "friend",    "goto",
      "if",       "inline",   "int",      "long",     "mutable",  "namespace", "new",
      "noexcept", "not",      "nullptr",  "operator", "or",       "private",   "protected",
      "public",   "register", "return",   "short",    "signed",   "sizeof",    "static",
      "struct",   "switch",   "template", "this",     "throw",    "true",      "try",
      "typedef",  "typeid",   "typename", "union",    "unsigned", "using",     "virtual",
      "void",     "volatile", "while",    "xor"};
  std::string name = absl::AsciiStrToLower(f->name());
  return kKeywords.count(name) ? absl::StrCat(name, "_") : name;
}

// The oneof case constant protoc generates for a field: "k" and the name in CamelCase.
std::string CaseConstant(const pb::FieldDescriptor* f) {
  std::string out = "k";
  bool cap_next = true;
  for (char c : f->name()) {
    if (absl::ascii_islower(c)) {
      out += cap_next ? absl::ascii_toupper(c) : c;
      cap_next = false;
    } else if (absl::ascii_isupper(c)) {
      out += c;
      cap_next = false;
    } else if (absl::ascii_isdigit(c)) {
      out += c;
      cap_next = true;
    } else {
      cap_next = true;
    }
  }
  return out;
}

bool IsString(const pb::FieldDescriptor* f) {
  return f->type() == pb::FieldDescriptor::TYPE_STRING;
}

// Every message type reachable from `root` whose fields (at any depth) hold a string.
std::vector<const pb::Descriptor*> TypesWithStrings(const pb::Descriptor* root) {
  std::vector<const pb::Descriptor*> order;
  std::set<const pb::Descriptor*> seen;
  std::vector<const pb::Descriptor*> stack = {root};
  while (!stack.empty()) {
    const pb::Descriptor* d = stack.back();
    stack.pop_back();
    if (!seen.insert(d).second) continue;
    order.push_back(d);
    for (int i = 0; i < d->field_count(); ++i) {
      if (const pb::Descriptor* m = d->field(i)->message_type()) stack.push_back(m);
    }
  }
  // Keep those that hold a string, directly or through a kept type: iterate to a fixed point.
  std::set<const pb::Descriptor*> with;
  for (bool grew = true; grew;) {
    grew = false;
    for (const pb::Descriptor* d : order) {
      if (with.count(d)) continue;
      for (int i = 0; i < d->field_count(); ++i) {
        const pb::FieldDescriptor* f = d->field(i);
        if (IsString(f) || (f->message_type() && with.count(f->message_type()))) {
          with.insert(d);
          grew = true;
          break;
        }
      }
    }
  }
  std::vector<const pb::Descriptor*> out;
  for (const pb::Descriptor* d : order) {
    if (with.count(d) && !d->options().map_entry()) out.push_back(d);
  }
  return out;
}

// The statements that rewrite field `f` of `m` (a `T&`), adding what changed to `n`.
std::string WalkField(const pb::FieldDescriptor* f, const std::set<const pb::Descriptor*>& walked) {
  const std::string a = Accessor(f);
  if (f->is_map()) {
    const pb::FieldDescriptor* key = f->message_type()->map_key();
    const pb::FieldDescriptor* value = f->message_type()->map_value();
    std::string out;
    if (IsString(value)) {
      absl::StrAppend(&out, "  for (auto& [key, value] : *m.mutable_", a,
                      "()) n += Apply(&value, false, f);\n");
    } else if (value->message_type() && walked.count(value->message_type())) {
      absl::StrAppend(&out, "  for (auto& [key, value] : *m.mutable_", a,
                      "()) n += Walk(value, f);\n");
    }
    if (IsString(key)) absl::StrAppend(&out, "  n += RewriteKeys(*m.mutable_", a, "(), f);\n");
    return out;
  }
  const bool message = f->message_type() != nullptr && walked.count(f->message_type());
  if (!message && !IsString(f)) return "";
  if (f->is_repeated()) {
    return message ? absl::StrCat("  for (auto& e : *m.mutable_", a, "()) n += Walk(e, f);\n")
                   : absl::StrCat("  for (std::string& s : *m.mutable_", a,
                                  "()) n += Apply(&s, false, f);\n");
  }
  std::string guard;
  if (const pb::OneofDescriptor* oneof = f->real_containing_oneof()) {
    guard = absl::StrCat("m.", absl::AsciiStrToLower(oneof->name()),
                         "_case() == ", CppName(f->containing_type()), "::", CaseConstant(f));
  } else if (message || f->has_presence()) {
    guard = absl::StrCat("m.has_", a, "()");
  } else {
    guard = absl::StrCat("!m.", a, "().empty()");
  }
  return absl::StrCat("  if (", guard, ") n += ",
                      message ? absl::StrCat("Walk(*m.mutable_", a, "(), f)")
                              : absl::StrCat("Apply(m.mutable_", a, "(), false, f)"),
                      ";\n");
}

// A C++ string literal of `s`.
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      absl::StrAppend(&out, "\\", std::string(1, static_cast<char>(c)));
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

void CollectEnums(const pb::Descriptor* d, std::vector<const pb::EnumDescriptor*>* out) {
  for (int i = 0; i < d->enum_type_count(); ++i) out->push_back(d->enum_type(i));
  for (int i = 0; i < d->nested_type_count(); ++i) CollectEnums(d->nested_type(i), out);
}

std::vector<const pb::EnumDescriptor*> Enums(const std::vector<const pb::FileDescriptor*>& files) {
  std::vector<const pb::EnumDescriptor*> out;
  for (const pb::FileDescriptor* file : files) {
    for (int i = 0; i < file->enum_type_count(); ++i) out.push_back(file->enum_type(i));
    for (int i = 0; i < file->message_type_count(); ++i) CollectEnums(file->message_type(i), &out);
  }
  return out;
}

// The report's sections: singular message fields whose type has a SectionStatus `status` and a
// string `reason`.
std::vector<const pb::FieldDescriptor*> Sections() {
  std::vector<const pb::FieldDescriptor*> out;
  const pb::Descriptor* report = v1::AnalysisReport::descriptor();
  for (int i = 0; i < report->field_count(); ++i) {
    const pb::FieldDescriptor* f = report->field(i);
    if (f->is_repeated() || f->message_type() == nullptr) continue;
    const pb::FieldDescriptor* status = f->message_type()->FindFieldByName("status");
    const pb::FieldDescriptor* reason = f->message_type()->FindFieldByName("reason");
    if (status != nullptr && status->enum_type() == v1::SectionStatus_descriptor() &&
        reason != nullptr && IsString(reason) && !reason->is_repeated()) {
      out.push_back(f);
    }
  }
  return out;
}

constexpr char kBanner[] =
    "// Generated by proto/gen_report_code.cc from report.proto and capture.proto. Do not edit.\n";

std::string Header(const std::vector<const pb::EnumDescriptor*>& enums, size_t sections) {
  std::string h = kBanner;
  absl::StrAppend(
      &h, R"(#ifndef COMPILE_LENS_V1_REPORT_CODE_H_
#define COMPILE_LENS_V1_REPORT_CODE_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

// capture.proto's (schema_version) option.
inline constexpr absl::string_view kCaptureSchemaVersion = )",
      Quoted(v1::SessionCapture::descriptor()->file()->options().GetExtension(v1::schema_version)),
      R"(;

// The word of each enum value of report.proto and capture.proto: its `word` option, else its
// name; "" for a number the schema does not define.
)");
  for (const pb::EnumDescriptor* e : enums)
    absl::StrAppend(&h, "absl::string_view Word(", CppName(e), " value);\n");
  absl::StrAppend(&h, R"(
// The same for an enum named by its full name ("compile_lens.v1.LintFinding.Severity"); "" for an
// enum of neither file.
absl::string_view Word(absl::string_view enum_full_name, int number);
)");
  absl::StrAppend(&h, R"(
// A section of the report: an AnalysisReport field whose message has a status and a reason.
struct ReportSection {
  absl::string_view name;  // the field's name, which a pass's Section() gives
  ::compile_lens::v1::SectionStatus (*status)(const ::compile_lens::v1::AnalysisReport&);
  void (*set_status)(::compile_lens::v1::AnalysisReport*, ::compile_lens::v1::SectionStatus,
                     absl::string_view reason);
  // Replaces `to`'s section with `from`'s.
  void (*copy)(const ::compile_lens::v1::AnalysisReport& from,
               ::compile_lens::v1::AnalysisReport* to);
};
inline constexpr size_t kReportSectionCount = )",
                  sections, R"(;
extern const ReportSection kReportSections[kReportSectionCount];

// What to put in place of a string of the report (`map_key`: it is a map's key); nullopt leaves it.
using ReportStringRewrite =
    absl::FunctionRef<std::optional<std::string>(const std::string& value, bool map_key)>;

// Calls `rewrite` on every non-empty string of `report` (singular, repeated, map keys and values,
// at any depth) and stores what it returns. Returns how many it changed.
int RewriteReportStrings(::compile_lens::v1::AnalysisReport& report, ReportStringRewrite rewrite);

}  // namespace cl

#endif  // COMPILE_LENS_V1_REPORT_CODE_H_
)");
  return h;
}

std::string Source(const std::vector<const pb::EnumDescriptor*>& enums,
                   const std::vector<const pb::FieldDescriptor*>& sections) {
  std::string s = kBanner;
  absl::StrAppend(&s, R"(#include "compile_lens/v1/report_code.h"

#include <utility>
#include <vector>

#include "google/protobuf/struct.pb.h"

namespace cl {
)");
  for (const pb::EnumDescriptor* e : enums) {
    absl::StrAppend(&s, "\nabsl::string_view Word(", CppName(e), " value) {\n",
                    "  switch (static_cast<int>(value)) {\n");
    std::set<int> numbers;
    for (int i = 0; i < e->value_count(); ++i) {
      const pb::EnumValueDescriptor* v = e->value(i);
      if (!numbers.insert(v->number()).second) continue;  // an alias: the first name stands
      const std::string word =
          v->options().HasExtension(v1::word) ? v->options().GetExtension(v1::word) : v->name();
      absl::StrAppend(&s, "    case ", v->number(), ":\n      return ", Quoted(word), ";\n");
    }
    absl::StrAppend(&s, "  }\n  return \"\";\n}\n");
  }

  absl::StrAppend(&s, "\nabsl::string_view Word(absl::string_view enum_full_name, int number) {\n");
  for (const pb::EnumDescriptor* e : enums) {
    absl::StrAppend(&s, "  if (enum_full_name == ", Quoted(e->full_name()),
                    ") return Word(static_cast<", CppName(e), ">(number));\n");
  }
  absl::StrAppend(&s, "  return \"\";\n}\n");

  absl::StrAppend(&s, "\nconst ReportSection kReportSections[kReportSectionCount] = {\n");
  for (const pb::FieldDescriptor* f : sections) {
    const std::string a = Accessor(f);
    absl::StrAppend(&s, "    {", Quoted(f->name()), ",\n",
                    "     [](const ::compile_lens::v1::AnalysisReport& r) { return r.", a,
                    "().status(); },\n",
                    "     [](::compile_lens::v1::AnalysisReport* r, "
                    "::compile_lens::v1::SectionStatus status,\n",
                    "        absl::string_view reason) {\n", "       r->mutable_", a,
                    "()->set_status(status);\n", "       r->mutable_", a,
                    "()->set_reason(std::string(reason));\n", "     },\n",
                    "     [](const ::compile_lens::v1::AnalysisReport& from, ",
                    "::compile_lens::v1::AnalysisReport* to) {\n", "       to->mutable_", a,
                    "()->CopyFrom(from.", a, "());\n", "     }},\n");
  }
  absl::StrAppend(&s, "};\n");

  const std::vector<const pb::Descriptor*> types =
      TypesWithStrings(v1::AnalysisReport::descriptor());
  const std::set<const pb::Descriptor*> walked(types.begin(), types.end());
  absl::StrAppend(&s, R"(
namespace {

int Apply(std::string* value, bool map_key, ReportStringRewrite f) {
  if (value->empty()) return 0;
  std::optional<std::string> next = f(*value, map_key);
  if (!next) return 0;
  *value = *std::move(next);
  return 1;
}

// A map's keys cannot change in place: each rewritten key's entry moves to the new key.
template <typename Map>
int RewriteKeys(Map& map, ReportStringRewrite f) {
  std::vector<std::pair<std::string, std::string>> renames;
  for (const auto& [key, value] : map) {
    if (key.empty()) continue;
    if (std::optional<std::string> next = f(key, true)) renames.emplace_back(key, *std::move(next));
  }
  for (auto& [from, to] : renames) {
    auto value = std::move(map[from]);
    map.erase(from);
    map[to] = std::move(value);
  }
  return static_cast<int>(renames.size());
}

)");
  for (const pb::Descriptor* d : types)
    absl::StrAppend(&s, "int Walk(", CppName(d), "& m, ReportStringRewrite f);\n");
  for (const pb::Descriptor* d : types) {
    absl::StrAppend(&s, "\nint Walk(", CppName(d), "& m, ReportStringRewrite f) {\n  int n = 0;\n");
    for (int i = 0; i < d->field_count(); ++i) absl::StrAppend(&s, WalkField(d->field(i), walked));
    absl::StrAppend(&s, "  return n;\n}\n");
  }
  absl::StrAppend(&s, R"(
}  // namespace

int RewriteReportStrings(::compile_lens::v1::AnalysisReport& report, ReportStringRewrite rewrite) {
  return Walk(report, rewrite);
}

}  // namespace cl
)");
  return s;
}

bool Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) std::cerr << "gen_report_code: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gen_report_code DIR\n";
    return 2;
  }
  const std::vector<const pb::FileDescriptor*> files = {v1::SessionCapture::descriptor()->file(),
                                                        v1::AnalysisReport::descriptor()->file()};
  const std::vector<const pb::EnumDescriptor*> enums = Enums(files);
  const std::vector<const pb::FieldDescriptor*> sections = Sections();
  const std::string dir = argv[1];
  return Write(dir + "/report_code.h", Header(enums, sections.size())) &&
                 Write(dir + "/report_code.cc", Source(enums, sections))
             ? 0
             : 1;
}

// report_code.h, generated at build time, against what reflection reads from the same schema: every
// enum value's word, every section, and every string of a report whose every string field is set.
#include "compile_lens/v1/report_code.h"

#include <set>
#include <string>

#include "common/proto_utf8.h"
#include "common/utf8.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "proto/report_words.h"
#include "tests/service/render/hostile_report.h"

namespace cl {
namespace {

namespace pb = ::google::protobuf;
namespace v1 = ::compile_lens::v1;
using pb::util::MessageDifferencer;

void ExpectWordsMatch(const pb::EnumDescriptor* e, int* checked) {
  for (int i = 0; i < e->value_count(); ++i) {
    const pb::EnumValueDescriptor* v = e->value(i);
    if (e->FindValueByNumber(v->number()) != v) continue;  // an alias
    EXPECT_EQ(Word(e->full_name(), v->number()), Word(v)) << v->full_name();
    ++*checked;
  }
}

void ExpectWordsMatch(const pb::Descriptor* d, int* checked) {
  for (int i = 0; i < d->enum_type_count(); ++i) ExpectWordsMatch(d->enum_type(i), checked);
  for (int i = 0; i < d->nested_type_count(); ++i) ExpectWordsMatch(d->nested_type(i), checked);
}

TEST(ReportCodeTest, EveryEnumValueHasTheWordReflectionReads) {
  int checked = 0;
  for (const pb::FileDescriptor* file :
       {v1::SessionCapture::descriptor()->file(), v1::AnalysisReport::descriptor()->file()}) {
    for (int i = 0; i < file->enum_type_count(); ++i)
      ExpectWordsMatch(file->enum_type(i), &checked);
    for (int i = 0; i < file->message_type_count(); ++i)
      ExpectWordsMatch(file->message_type(i), &checked);
  }
  EXPECT_GT(checked, 50);
  // The typed overloads, and a number the schema does not define.
  EXPECT_EQ(Word(v1::RecompileCategory::SIZE), "size");
  EXPECT_EQ(Word(v1::Diagnostic::WARNING), "WARNING");
  EXPECT_EQ(Word(static_cast<v1::RecompileCategory::Value>(999)), "");
  EXPECT_EQ(Word("compile_lens.v1.NoSuchEnum", 1), "");
}

TEST(ReportCodeTest, SectionsAreTheReportsFieldsWithAStatus) {
  std::set<std::string> reflected;
  const pb::Descriptor* d = v1::AnalysisReport::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->message_type() != nullptr && !f->is_repeated() &&
        f->message_type()->FindFieldByName("status") != nullptr)
      reflected.insert(f->name());
  }
  std::set<std::string> generated;
  for (const ReportSection& s : kReportSections) generated.insert(std::string(s.name));
  EXPECT_EQ(generated, reflected);
  EXPECT_TRUE(generated.count("recompile"));

  // Each accessor reaches its own field, and copy replaces the section whole.
  for (const ReportSection& s : kReportSections) {
    v1::AnalysisReport from, to;
    s.set_status(&from, v1::SKIPPED, "why");
    s.set_status(&to, v1::ERROR, "stale");
    EXPECT_EQ(s.status(from), v1::SKIPPED) << s.name;
    const pb::FieldDescriptor* f = d->FindFieldByName(std::string(s.name));
    const pb::Message& section = from.GetReflection()->GetMessage(from, f);
    EXPECT_EQ(section.GetReflection()->GetString(
                  section, section.GetDescriptor()->FindFieldByName("reason")),
              "why")
        << s.name;
    s.copy(from, &to);
    EXPECT_TRUE(MessageDifferencer::Equals(from, to)) << s.name;
  }
}

// The reflective walk (common/proto_utf8.h) and the generated one change the same strings the
// same way, on a report in which every string field, map keys included, holds bad UTF-8.
TEST(ReportCodeTest, TheTypedWalkReachesEveryStringReflectionReaches) {
  const v1::AnalysisReport hostile = testing::HostileReport();
  v1::AnalysisReport reflected = hostile, generated = hostile;
  const int repaired = RepairUtf8(reflected);
  EXPECT_GT(repaired, 100);
  EXPECT_EQ(RewriteReportStrings(generated,
                                 [](const std::string& value, bool) -> std::optional<std::string> {
                                   if (IsValidUtf8(value)) return std::nullopt;
                                   return ToValidUtf8(value);
                                 }),
            repaired);
  EXPECT_TRUE(MessageDifferencer::Equals(reflected, generated));

  reflected = hostile;
  generated = hostile;
  const int clipped = ClipLongStrings(reflected, 8);
  EXPECT_GT(clipped, 100);
  EXPECT_EQ(RewriteReportStrings(generated,
                                 [](const std::string& value, bool map_key) {
                                   return map_key ? std::nullopt : ClippedString(value, 8);
                                 }),
            clipped);
  EXPECT_TRUE(MessageDifferencer::Equals(reflected, generated));
}

}  // namespace
}  // namespace cl

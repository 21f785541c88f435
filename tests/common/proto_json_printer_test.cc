// PrintProtoJson against protobuf's own printer (util::BinaryToJsonString over the deterministic
// wire bytes, the path it replaces), byte for byte: every fixture log's and hero capture, as a
// capture file is written (its log's texts kept) and in the other option combinations; every code
// point, and random bytes that are not UTF-8; doubles of every kind; the corners of Struct, maps
// and enums. And what it must leave to protobuf.
#include "common/proto_json_printer.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "capture/capture_io.h"
#include "capture/torch_trace/importer.h"
#include "common/proto_json.h"
#include "compile_lens/v1/capture.pb.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/type_resolver_util.h"
#include "gtest/gtest.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/hostile_inputs.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using google::protobuf::util::JsonPrintOptions;

std::string Ours(const google::protobuf::Message& m, const JsonPrintOptions& options) {
  EXPECT_TRUE(CanPrintProtoJson(m.GetDescriptor(), options));
  std::string json;
  {
    google::protobuf::io::StringOutputStream out(&json);
    EXPECT_TRUE(PrintProtoJson(m, options, &out));
  }
  return json;
}

std::string Protobufs(const google::protobuf::Message& m, const JsonPrintOptions& options) {
  static google::protobuf::util::TypeResolver* const types =
      google::protobuf::util::NewTypeResolverForDescriptorPool(
          kTypeUrlPrefix, google::protobuf::DescriptorPool::generated_pool());
  std::string json;
  const auto status = google::protobuf::util::BinaryToJsonString(
      types, absl::StrCat(kTypeUrlPrefix, "/", m.GetDescriptor()->full_name()),
      DeterministicBytes(m), &json, options);
  EXPECT_TRUE(status.ok()) << status;
  return json;
}

std::vector<JsonPrintOptions> AllOptions() {
  std::vector<JsonPrintOptions> all;
  for (const bool whitespace : {true, false}) {
    for (const bool proto_names : {true, false}) {
      JsonPrintOptions o;
      o.add_whitespace = whitespace;
      o.preserve_proto_field_names = proto_names;
      all.push_back(o);
    }
  }
  return all;
}

void ExpectSameAsProtobuf(const google::protobuf::Message& m, const std::string& what) {
  for (const JsonPrintOptions& o : AllOptions()) {
    const std::string ours = Ours(m, o), theirs = Protobufs(m, o);
    if (ours == theirs) continue;
    size_t at = 0;
    while (at < ours.size() && at < theirs.size() && ours[at] == theirs[at]) ++at;
    ADD_FAILURE() << what << " (whitespace " << o.add_whitespace << ", proto names "
                  << o.preserve_proto_field_names << "): first difference at byte " << at
                  << "\n ours:     " << ours.substr(at > 20 ? at - 20 : 0, 160)
                  << "\n protobuf: " << theirs.substr(at > 20 ? at - 20 : 0, 160);
    return;
  }
}

TEST(ProtoJsonPrinterTest, EveryFixtureCaptureAsProtobufPrintsIt) {
  const std::vector<std::string> logs = testing::FixtureTraceLogs();
  ASSERT_GE(logs.size(), 50u);
  ImportOptions options;
  options.read_sources = false;
  options.keep_record_texts = true;  // as import-trace writes a capture
  size_t compared = 0;
  for (const std::string& log : logs) {
    absl::StatusOr<std::vector<v1::SessionCapture>> ranks = ImportTrace(log, options);
    if (!ranks.ok()) continue;  // the corpus's few files that are not logs
    for (const v1::SessionCapture& capture : *ranks) ExpectSameAsProtobuf(capture, log);
    compared += ranks->size();
  }
  EXPECT_GE(compared, logs.size() - 3) << "captures compared, of " << logs.size() << " logs";
  for (const char* name : {"head", "base"}) {
    absl::StatusOr<v1::SessionCapture> hero =
        ReadCaptureFile(absl::StrCat(CL_SOURCE_DIR "/examples/hero/", name, ".cls.json"));
    ASSERT_TRUE(hero.ok()) << hero.status();
    ExpectSameAsProtobuf(*hero, name);
  }
}

TEST(ProtoJsonPrinterTest, EveryCodePointIsEscapedAsProtobufEscapesIt) {
  // Each code point between two letters, a few thousand to a string, as a value and as a map key.
  for (uint32_t start = 0; start <= 0x10FFFF; start += 4096) {
    v1::SessionCapture c;
    std::string text;
    for (uint32_t cp = start; cp < start + 4096 && cp <= 0x10FFFF; ++cp) {
      absl::StrAppend(&text, "a", testing::CodePointBytes(cp), "b");
    }
    c.mutable_session()->set_host(text);
    (*c.mutable_session()->mutable_labels())[text.substr(0, 64)] = "v";
    ExpectSameAsProtobuf(c, absl::StrCat("code points from U+", absl::Hex(start)));
  }
}

// Plain text is scanned 16 bytes at a time: each character that is escaped (or starts a
// multi-byte one) at every place in and around a 16-byte block, and two in one block.
TEST(ProtoJsonPrinterTest, EscapesAnywhereInALongPlainRun) {
  const std::string specials[] = {"\"",
                                  "\\",
                                  "<",
                                  ">",
                                  "\n",
                                  std::string(1, '\0'),
                                  "\x1f",
                                  "\x7f",
                                  "\xc3\xa9",
                                  "\xe2\x80\xa8",
                                  "\xf0\x9f\x98\x80",
                                  "\x80"};
  for (const std::string& special : specials) {
    for (size_t at = 0; at <= 40; ++at) {
      std::string text = std::string(at, 'a') + special + std::string(40 - at, 'b');
      text += std::string(at % 7, 'c') + special + "d";
      v1::SessionCapture c;
      c.mutable_session()->set_host(text);
      ExpectSameAsProtobuf(c, absl::StrCat("byte ", absl::CHexEscape(special), " at ", at));
      if (HasFailure()) return;
    }
  }
}

TEST(ProtoJsonPrinterTest, BytesThatAreNotUtf8AreDroppedAsProtobufDropsThem) {
  std::mt19937 rng(11);
  const std::string pieces[] = {"x",
                                "\x80",
                                "\xbf",
                                "\xc0",
                                "\xc3\xa9",
                                "\xc3",
                                "\xe2\x82",
                                "\xe2\x82\xac",
                                "\xed\xa0\x80",
                                "\xf0\x9f",
                                "\xf4\x90\x80\x80",
                                "\xf8",
                                "\xff",
                                "\"",
                                "<",
                                "\n",
                                std::string(1, '\0')};
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    for (int n = static_cast<int>(rng() % 12); n > 0; --n) text += pieces[rng() % 17];
    v1::SessionCapture c;
    c.mutable_session()->set_host(text);
    ExpectSameAsProtobuf(c, absl::StrCat("round ", round));
    if (HasFailure()) return;
  }
}

TEST(ProtoJsonPrinterTest, DoublesStructsMapsAndEnumsAsProtobufPrintsThem) {
  std::mt19937_64 rng(5);
  v1::SessionCapture c;
  v1::Compile* compile = c.add_compiles();
  compile->set_id("0/0");
  compile->set_status(static_cast<v1::Compile::Status>(77));  // a number the enum does not name
  google::protobuf::Struct* metrics = compile->mutable_metrics();
  auto& fields = *metrics->mutable_fields();
  const double specials[] = {0.0,
                             -0.0,
                             1.0,
                             -1.5,
                             0.1,
                             1e300,
                             -1e-300,
                             5e-324,
                             1.0 / 3,
                             123456789012345678.0,
                             std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
  int i = 0;
  for (const double d : specials) fields[absl::StrCat("special_", i++)].set_number_value(d);
  for (int k = 0; k < 200; ++k) {
    const uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    fields[absl::StrCat("random_", k)].set_number_value(d);
    fields[absl::StrCat("scaled_", k)].set_number_value(static_cast<double>(rng() % 100000) / 7);
  }
  fields["empty_value"];  // no kind
  fields["null"].set_null_value(google::protobuf::NULL_VALUE);
  fields["empty_struct"].mutable_struct_value();
  fields["empty_list"].mutable_list_value();
  auto* list = fields["list"].mutable_list_value();
  list->add_values()->set_string_value("s");
  list->add_values();  // no kind
  list->add_values()->mutable_list_value()->add_values()->set_bool_value(true);
  (*list->add_values()->mutable_struct_value()->mutable_fields())["z"].set_number_value(1);
  for (const char* key : {"b", "a", "", "aa", "B", "\xc3\xa9", "<"}) {
    (*c.mutable_session()->mutable_labels())[key] = key;
  }
  c.mutable_session();  // present and empty parts elsewhere
  c.add_frames();
  ExpectSameAsProtobuf(c, "specials");
}

TEST(ProtoJsonPrinterTest, LeavesToProtobufWhatItDoesNotPrint) {
  JsonPrintOptions plain;
  EXPECT_TRUE(CanPrintProtoJson(v1::SessionCapture::descriptor(), plain));
  EXPECT_FALSE(CanPrintProtoJson(google::protobuf::Timestamp::descriptor(), plain));
  JsonPrintOptions defaults = plain;
  defaults.always_print_primitive_fields = true;
  EXPECT_FALSE(CanPrintProtoJson(v1::SessionCapture::descriptor(), defaults));
  JsonPrintOptions ints = plain;
  ints.always_print_enums_as_ints = true;
  EXPECT_FALSE(CanPrintProtoJson(v1::SessionCapture::descriptor(), ints));
  // Field types no message of the project has: floats, bytes, maps keyed by numbers.
  google::protobuf::DescriptorPool pool;
  google::protobuf::FileDescriptorProto file;
  file.set_name("t.proto");
  file.set_package("t");
  file.set_syntax("proto3");
  const auto add = [&file](const char* name, google::protobuf::FieldDescriptorProto::Type type) {
    google::protobuf::DescriptorProto* m = file.add_message_type();
    m->set_name(name);
    google::protobuf::FieldDescriptorProto* f = m->add_field();
    f->set_name("f");
    f->set_number(1);
    f->set_type(type);
    f->set_label(google::protobuf::FieldDescriptorProto::LABEL_OPTIONAL);
  };
  add("Text", google::protobuf::FieldDescriptorProto::TYPE_STRING);
  add("Float", google::protobuf::FieldDescriptorProto::TYPE_FLOAT);
  add("Bytes", google::protobuf::FieldDescriptorProto::TYPE_BYTES);
  {  // map<int32, string> f = 1;
    google::protobuf::DescriptorProto* m = file.add_message_type();
    m->set_name("IntMap");
    google::protobuf::DescriptorProto* entry = m->add_nested_type();
    entry->set_name("FEntry");
    entry->mutable_options()->set_map_entry(true);
    for (const auto& [name, number, type] :
         {std::tuple{"key", 1, google::protobuf::FieldDescriptorProto::TYPE_INT32},
          std::tuple{"value", 2, google::protobuf::FieldDescriptorProto::TYPE_STRING}}) {
      google::protobuf::FieldDescriptorProto* f = entry->add_field();
      f->set_name(name);
      f->set_number(number);
      f->set_type(type);
      f->set_label(google::protobuf::FieldDescriptorProto::LABEL_OPTIONAL);
    }
    google::protobuf::FieldDescriptorProto* f = m->add_field();
    f->set_name("f");
    f->set_number(1);
    f->set_type(google::protobuf::FieldDescriptorProto::TYPE_MESSAGE);
    f->set_type_name(".t.IntMap.FEntry");
    f->set_label(google::protobuf::FieldDescriptorProto::LABEL_REPEATED);
  }
  ASSERT_NE(pool.BuildFile(file), nullptr);
  EXPECT_FALSE(CanPrintProtoJson(pool.FindMessageTypeByName("t.IntMap"), plain));
  EXPECT_TRUE(CanPrintProtoJson(pool.FindMessageTypeByName("t.Text"), plain));
  EXPECT_FALSE(CanPrintProtoJson(pool.FindMessageTypeByName("t.Float"), plain));
  EXPECT_FALSE(CanPrintProtoJson(pool.FindMessageTypeByName("t.Bytes"), plain));

  // Through the one entry point: a Timestamp still prints as protobuf prints it.
  google::protobuf::Timestamp t;
  t.set_seconds(1);
  absl::StatusOr<std::string> json = ToDeterministicJson(t, plain);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*json, "\"1970-01-01T00:00:01Z\"");
}

}  // namespace
}  // namespace cl

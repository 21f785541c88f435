#include "capture/capture_io.h"

#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "capture/schema.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

using ::cl::testing::IsOk;
using ::cl::testing::StatusIs;
using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

// A minimal capture in the version this build writes.
std::string Minimal() {
  return absl::StrCat(R"({"schema": ")", SchemaVersion(), R"(", "session": {"id": "s1"}})");
}

TEST(CaptureIoTest, ReadsTheHeroCapturesWithTheirRealFacts) {
  ASSERT_OK_AND_ASSIGN(v1::SessionCapture head,
                       ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/head.cls.json"));
  EXPECT_EQ(head.schema(), SchemaVersion());  // the importer's output (hero_capture_sync_test)
  ASSERT_EQ(head.frames_size(), 1);
  EXPECT_EQ(head.frames(0).name(), "forward");
  EXPECT_EQ(head.frames(0).line(), 86u);
  ASSERT_EQ(head.compiles_size(), 4);
  EXPECT_EQ(head.compiles(3).id(), "0/3");
  EXPECT_THAT(head.compiles(3).recompile_reasons(),
              ::testing::Contains(
                  "0/0: tensor 'L['x']' size mismatch at index 0. expected 16, actual 128"));
  ASSERT_OK_AND_ASSIGN(v1::SessionCapture base,
                       ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/base.cls.json"));
  EXPECT_EQ(base.compiles_size(), 4);
}

TEST(CaptureIoTest, JsonAndBinaryRoundTrip) {
  ASSERT_OK_AND_ASSIGN(v1::SessionCapture hero,
                       ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/head.cls.json"));
  const std::string dir = ::testing::TempDir();
  for (const std::string name : {"rt.cls.json", "rt.cls.pb"}) {
    const std::string path = dir + "/" + name;
    ASSERT_THAT(WriteCaptureFile(path, hero), IsOk());
    ASSERT_OK_AND_ASSIGN(v1::SessionCapture back, ReadCaptureFile(path));
    EXPECT_TRUE(MessageDifferencer::Equals(back, hero)) << name;
  }
}

// A capture is written as it is encoded, straight to the file: a device that takes no byte fails
// that write with the reason, not a success or a vague error (a guard on the streamed path).
TEST(CaptureIoTest, AFullDeviceFailsTheWrite) {
  ASSERT_OK_AND_ASSIGN(v1::SessionCapture hero,
                       ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/head.cls.json"));
  ASSERT_TRUE(std::filesystem::exists("/dev/full"));
  EXPECT_THAT(
      WriteCaptureFile("/dev/full", hero),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("/dev/full: write failed: No space")));
}

// How many graphs and records a maker hands to the sinks.
struct Sunk {
  int graphs, records;
};

// A maker that hands the first `graphs` graphs and `records` records of `whole` to the sinks, as
// an import does: it keeps the graphs without their nodes, and none of the records.
absl::StatusOr<v1::SessionCapture> MakeSinking(const v1::SessionCapture& whole, int graphs,
                                               int records, const CaptureSinks& sinks) {
  v1::SessionCapture c = whole;
  for (int i = 0; i < graphs; ++i) {
    sinks.graph(c.graphs(i));
    c.mutable_graphs(i)->clear_nodes();
  }
  for (int i = 0; i < records; ++i) sinks.record(c.records(i));
  c.mutable_records()->DeleteSubrange(0, records);
  return c;
}

// WriteCapturePbAsMade: the graphs and records a maker hands to the sinks go to the file at once,
// the maker keeping only what is left of them; the file reads back as the whole capture.
TEST(CaptureIoTest, GraphsAndRecordsWrittenAsMadeReadBackAsTheWholeCapture) {
  ASSERT_OK_AND_ASSIGN(const v1::SessionCapture hero,
                       ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/head.cls.json"));
  ASSERT_GE(hero.graphs_size(), 3);
  ASSERT_GE(hero.records_size(), 3);
  const std::string path = ::testing::TempDir() + "/as-made.cls.pb";
  // Sinks all, none, or the first two (the rest left in the capture, nodes, texts and all).
  for (const Sunk& sunk : std::vector<Sunk>{
           {hero.graphs_size(), hero.records_size()}, {0, 0}, {2, 2}, {0, 2}, {2, 0}}) {
    ASSERT_OK_AND_ASSIGN(const v1::SessionCapture made,
                         WriteCapturePbAsMade(path, [&](const CaptureSinks& sinks) {
                           return MakeSinking(hero, sunk.graphs, sunk.records, sinks);
                         }));
    const int graphs = sunk.graphs, records = sunk.records;
    EXPECT_EQ(made.graphs_size(), hero.graphs_size()) << "the maker's capture is returned";
    EXPECT_EQ(made.graphs(0).nodes_size(), graphs > 0 ? 0 : hero.graphs(0).nodes_size());
    EXPECT_EQ(made.records_size(), hero.records_size() - records);
    ASSERT_OK_AND_ASSIGN(const v1::SessionCapture back, ReadCaptureFile(path));
    EXPECT_TRUE(MessageDifferencer::Equals(back, hero))
        << graphs << " graphs and " << records << " records sunk";
  }
}

// WriteCaptureJsonAsMade: the graphs and records a maker hands to the sinks are printed to
// scratch files at once, and the capture is printed around them: the same bytes WriteCaptureFile
// writes of the whole capture, whichever were sunk.
TEST(CaptureIoTest, JsonGraphsAndRecordsWrittenAsMadeAreTheWholeCapturesBytes) {
  ASSERT_OK_AND_ASSIGN(const v1::SessionCapture hero,
                       ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/head.cls.json"));
  ASSERT_GE(hero.graphs_size(), 3);
  ASSERT_GE(hero.records_size(), 3);
  const std::string whole = ::testing::TempDir() + "/whole.cls.json";
  ASSERT_THAT(WriteCaptureFile(whole, hero), IsOk());
  ASSERT_OK_AND_ASSIGN(const std::string expected, ReadFile(whole));
  const std::string path = ::testing::TempDir() + "/as-made.cls.json";
  for (const Sunk& sunk : std::vector<Sunk>{{hero.graphs_size(), hero.records_size()},
                                            {0, 0},
                                            {1, 1},
                                            {2, 2},
                                            {0, hero.records_size()},
                                            {hero.graphs_size(), 0}}) {
    ASSERT_OK_AND_ASSIGN(const v1::SessionCapture made,
                         WriteCaptureAsMade(path, [&](const CaptureSinks& sinks) {
                           return MakeSinking(hero, sunk.graphs, sunk.records, sinks);
                         }));
    const int graphs = sunk.graphs, records = sunk.records;
    EXPECT_EQ(made.graphs(0).nodes_size(), graphs > 0 ? 0 : hero.graphs(0).nodes_size());
    EXPECT_EQ(made.records_size(), hero.records_size() - records);
    ASSERT_OK_AND_ASSIGN(const std::string written, ReadFile(path));
    EXPECT_EQ(written, expected) << graphs << " graphs and " << records << " records sunk";
  }
  // A capture with no graph and no record at all prints no `graphs` or `records` member.
  v1::SessionCapture bare = hero;
  bare.clear_graphs();
  bare.clear_records();
  const std::string none = ::testing::TempDir() + "/bare.cls.json";
  ASSERT_THAT(WriteCaptureFile(none, bare), IsOk());
  ASSERT_THAT(
      WriteCaptureAsMade(
          path, [&](const CaptureSinks&) -> absl::StatusOr<v1::SessionCapture> { return bare; })
          .status(),
      IsOk());
  EXPECT_EQ(*ReadFile(path), *ReadFile(none));
}

TEST(CaptureIoTest, AMakerThatFailsLeavesNoFile) {
  const std::string dir = ::testing::TempDir() + "/as-made-fails";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/x.cls.pb";
  EXPECT_THAT(
      WriteCapturePbAsMade(path,
                           [&](const CaptureSinks& sinks) -> absl::StatusOr<v1::SessionCapture> {
                             v1::Graph g;
                             g.set_id("g");
                             sinks.graph(g);  // written already, when the maker gives up
                             return absl::InvalidArgumentError("run.log: not a log");
                           }),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a log")));
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "neither the file nor its temporary";
  EXPECT_THAT(WriteCaptureJsonAsMade(
                  dir + "/x.cls.json",
                  [&](const CaptureSinks& sinks) -> absl::StatusOr<v1::SessionCapture> {
                    v1::Graph g;
                    g.set_id("g");
                    sinks.graph(g);  // printed to a scratch file, when the maker gives up
                    v1::Record r;
                    r.set_kind("artifact");
                    sinks.record(r);
                    return absl::InvalidArgumentError("run.log: not a log");
                  }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a log")));
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "neither the file nor its scratch file";
  EXPECT_THAT(
      WriteCapturePbAsMade("/dev/full",
                           [&](const CaptureSinks&) -> absl::StatusOr<v1::SessionCapture> {
                             return ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/head.cls.json");
                           }),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("write failed")));
  EXPECT_THAT(
      WriteCaptureJsonAsMade("/dev/full",
                             [&](const CaptureSinks&) -> absl::StatusOr<v1::SessionCapture> {
                               return ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/head.cls.json");
                             }),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("write failed")));
}

TEST(CaptureIoTest, JsonUsesOriginalFieldNames) {
  v1::SessionCapture c;
  c.set_schema("0.5.0");
  c.mutable_session()->set_torch_version("2.6.0");
  c.add_compiles()->add_recompile_reasons("r");
  ASSERT_OK_AND_ASSIGN(std::string json, CaptureToJson(c));
  EXPECT_THAT(json, HasSubstr("\"torch_version\""));
  EXPECT_THAT(json, HasSubstr("\"recompile_reasons\""));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("torchVersion")));
}

TEST(CaptureIoTest, GarbageJsonIsRefusedWithTheFileName) {
  EXPECT_THAT(LoadCapture("{not json", CaptureFormat::kJson, "x.cls.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x.cls.json: not a capture")));
  EXPECT_THAT(LoadCapture("", CaptureFormat::kJson, "empty.cls.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty.cls.json")));
}

// 100k levels of arrays in a compile's metrics (an 870 KB file) kept protobuf's parser busy for
// minutes; past 200 levels the JSON is refused at once, with the field it nests under. Strings
// that hold brackets or escaped quotes are not nesting.
TEST(CaptureIoTest, DeeplyNestedJsonIsRefusedAtOnceNamingTheField) {
  const std::string deep =
      absl::StrCat(R"({"schema":"0.5.0","compiles":[{"id":"0/0"},{"id":"0/1","metrics":{"a \"[{":)",
                   std::string(100000, '['), std::string(100000, ']'), "}}]}");
  const auto start = absl::Now();
  EXPECT_THAT(ParseCaptureJson(deep).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not a capture: compiles[1].metrics.a \\\"[{[0][0]…: JSON "
                                 "nested more than 200 levels deep")));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  // 40 levels, with brackets inside strings, are not refused for their depth.
  const std::string nested = absl::StrCat(
      R"({"schema":"0.5.0","compiles":[{"id":"0/0","metrics":{"x":)", std::string(40, '['), "\"",
      std::string(300, '['), "\"", std::string(40, ']'), "}}]}");
  EXPECT_THAT(ParseCaptureJson(nested), IsOk());
}

TEST(CaptureIoTest, UnknownFieldsAreRefusedNotIgnored) {
  EXPECT_THAT(LoadCapture(R"({"schema": "0.5.0", "sesion": {}})", CaptureFormat::kJson, "c"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sesion")));
}

TEST(CaptureIoTest, WrongTypesAreRefused) {
  EXPECT_THAT(
      LoadCapture(R"({"schema": "0.5.0", "frames": [{"id": "zero"}]})", CaptureFormat::kJson, "c"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("c: not a capture")));
}

TEST(CaptureIoTest, GarbageBinaryIsRefused) {
  EXPECT_THAT(LoadCapture("\xff\xff\xff\xff", CaptureFormat::kBinary, "x.cls.pb"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("x.cls.pb: not a capture")));
}

TEST(CaptureIoTest, BrokenBinarySaysWhereItBreaks) {
  v1::SessionCapture c;
  c.set_schema("0.5.0");
  c.add_frames()->set_name("forward");
  v1::Graph* g = c.add_graphs();
  g->set_id("g");
  g->add_nodes()->set_name("MARK");
  std::string bytes;
  ASSERT_TRUE(c.SerializeToString(&bytes));
  // A node name that is not UTF-8 (protobuf's parser only says "does not parse").
  std::string bad_utf8 = bytes;
  bad_utf8.replace(bad_utf8.find("MARK") + 1, 2, "\xff\xfe");
  EXPECT_THAT(ParseCaptureBinary(bad_utf8),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("graphs[0].nodes[0].name (byte ",
                                              bytes.find("MARK") + 1, "): not UTF-8"))));
  // Cut inside the graph: the graph is named, with what was announced and what is left.
  EXPECT_THAT(ParseCaptureBinary(absl::string_view(bytes).substr(0, bytes.size() - 2)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("graphs[0] (byte ")));
  EXPECT_THAT(ParseCaptureBinary(absl::string_view(bytes).substr(0, bytes.size() - 2)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cut short")));
}

TEST(CaptureIoTest, JsonThatIsNotUtf8SaysWhere) {
  const std::string json =
      std::string("{\"schema\": \"0.5.0\",\n \"session\": {\"id\": \"a\xc0\xaf\"}}");
  EXPECT_THAT(ParseCaptureJson(json), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("(byte 41, line 2, column 22)")));
}

TEST(CaptureIoTest, MissingFileIsNotFound) {
  EXPECT_THAT(ReadCaptureFile("/nonexistent/s.cls.json"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/s.cls.json")));
}

TEST(SchemaTest, Accepts05xOnly) {
  EXPECT_THAT(CheckSchema("0.5.0"), IsOk());
  EXPECT_THAT(CheckSchema("0.5.17"), IsOk());
  for (const char* bad :
       {"0.4.0", "0.6.0", "1.0.0", "0.5", "0.5.", "0.5.x", "0.5.0-rc1", " 0.5.0"}) {
    EXPECT_THAT(CheckSchema(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("this build reads schema 0.5.x")))
        << bad;
  }
  EXPECT_THAT(CheckSchema(""), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("missing")));
}

TEST(SchemaTest, LoadRefusesOtherVersionsNamingThem) {
  EXPECT_THAT(
      LoadCapture(R"({"schema": "0.4.2"})", CaptureFormat::kJson, "old.cls.json"),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          HasSubstr(
              "old.cls.json: schema: \"0.4.2\" is not supported; this build reads schema 0.5.x")));
  EXPECT_THAT(LoadCapture(Minimal(), CaptureFormat::kJson, "c"), IsOk());
}

}  // namespace
}  // namespace cl

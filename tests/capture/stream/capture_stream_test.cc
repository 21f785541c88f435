// The splitter and the assembler: whatever the capture's size, every message stays under budget
// and the assembled capture equals the original; malformed streams are refused at the part that
// breaks them.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capture/capture_io.h"
#include "capture/schema.h"
#include "capture/stream/capture_assembler.h"
#include "capture/stream/capture_splitter.h"
#include "capture/torch_trace/importer.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/captures.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

using ::cl::testing::IsOk;
using ::cl::testing::StatusIs;
using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

constexpr uint64_t kNoLimit = ~uint64_t{0};

std::vector<v1::CapturePart> Split(const v1::SessionCapture& c, v1::Side side, size_t budget) {
  std::vector<v1::CapturePart> parts;
  absl::Status s = SplitCapture(c, side, budget, [&](v1::CapturePart&& p) {
    parts.push_back(std::move(p));
    return absl::OkStatus();
  });
  EXPECT_THAT(s, IsOk());
  return parts;
}

absl::StatusOr<AssembledCaptures> Assemble(std::vector<v1::CapturePart> parts,
                                           uint64_t limit = kNoLimit) {
  CaptureAssembler a(limit);
  const uint64_t n = parts.size();
  for (v1::CapturePart& p : parts) {
    if (absl::Status s = a.Add(std::move(p)); !s.ok()) return s;
  }
  v1::EndOfCapture end;
  end.set_parts(n);
  return a.Finish(end);
}

v1::SessionCapture Hero() { return ::cl::testing::LoadHero("head.cls.json"); }

// A capture with a graph of `nodes` nodes, a long multi-byte source, and one oversized compile.
v1::SessionCapture Big(int nodes) {
  v1::SessionCapture c = Hero();
  v1::Graph* g = ::cl::testing::AddChainGraph(c, "big", nodes);
  g->set_compile_id("0/0");
  for (v1::Node& n : *g->mutable_nodes()) {
    n.mutable_source()->set_file("/mnt/project/examples/hero_scene.py");
    n.mutable_source()->set_line(70);
  }
  std::string text;
  while (text.size() < 300000) text += "résumé → ∑ ";  // multi-byte characters across cut points
  v1::SourceFile* s = c.add_sources();
  s->set_path("/mnt/project/unicode.py");
  s->set_text(text);
  c.mutable_compiles(0)->set_fail_reason(std::string(600000, 'x'));
  return c;
}

TEST(CaptureStreamTest, HeroRoundTrips) {
  const v1::SessionCapture hero = Hero();
  ASSERT_OK_AND_ASSIGN(AssembledCaptures got, Assemble(Split(hero, v1::HEAD, kDefaultPartBudget)));
  EXPECT_TRUE(MessageDifferencer::Equals(got.head, hero));
  EXPECT_FALSE(got.base.has_value());
}

// A draft export's log (torch 2.6, tests/fixtures/torch_trace/torch-2.6/draft_export): its
// export issues and symbols travel as parts of their own, and come back whole.
TEST(CaptureStreamTest, ADraftExportsIssuesRoundTrip) {
  ImportOptions options;
  options.read_sources = false;
  ASSERT_OK_AND_ASSIGN(
      v1::SessionCapture c,
      ImportTraceFile(::cl::testing::FixturePath("torch_trace/torch-2.6/draft_export/trace.log"),
                      options));
  ASSERT_GT(c.export_issues_size(), 0);
  ASSERT_GT(c.export_symbols_size(), 0);
  ASSERT_OK_AND_ASSIGN(AssembledCaptures got, Assemble(Split(c, v1::HEAD, kDefaultPartBudget)));
  EXPECT_TRUE(MessageDifferencer::Equals(got.head, c));
}

TEST(CaptureStreamTest, HeadAndBaseTravelTogether) {
  const v1::SessionCapture head = Hero();
  v1::SessionCapture base = head;
  base.mutable_session()->set_id("base");
  std::vector<v1::CapturePart> parts = Split(head, v1::HEAD, kDefaultPartBudget);
  for (v1::CapturePart& p : Split(base, v1::BASE, kDefaultPartBudget))
    parts.push_back(std::move(p));
  ASSERT_OK_AND_ASSIGN(AssembledCaptures got, Assemble(std::move(parts)));
  ASSERT_TRUE(got.base.has_value());
  EXPECT_EQ(got.base->session().id(), "base");
  EXPECT_TRUE(MessageDifferencer::Equals(got.head, head));
}

TEST(CaptureStreamTest, EveryPartStaysUnderBudgetAndTheWholeComesBack) {
  const v1::SessionCapture big = Big(20000);
  ASSERT_GT(big.ByteSizeLong(), 2u << 20);  // MiBs: it cannot go as one message
  for (size_t budget : {size_t{4096}, size_t{64 << 10}, kDefaultPartBudget}) {
    std::vector<v1::CapturePart> parts = Split(big, v1::HEAD, budget);
    bool fragmented = false;
    for (const v1::CapturePart& p : parts) {
      v1::AnalyzeChunk chunk;
      *chunk.mutable_part() = p;
      ASSERT_LE(chunk.ByteSizeLong(), budget + 16) << "budget " << budget;
      fragmented = fragmented || p.has_fragment();
    }
    EXPECT_TRUE(fragmented) << "the 600 kB fail_reason must travel as fragments at budget "
                            << budget;
    ASSERT_OK_AND_ASSIGN(AssembledCaptures got, Assemble(std::move(parts)));
    EXPECT_TRUE(MessageDifferencer::Equals(got.head, big)) << "budget " << budget;
  }
}

TEST(CaptureStreamTest, NoMessageOver1MiBEvenForAHugeCapture) {
  const v1::SessionCapture big = Big(100000);
  size_t largest = 0;
  for (const v1::CapturePart& p : Split(big, v1::HEAD, kMaxPartBudget)) {
    v1::AnalyzeChunk chunk;
    *chunk.mutable_part() = p;
    largest = std::max(largest, chunk.ByteSizeLong());
  }
  EXPECT_LE(largest, size_t{1} << 20);
}

// --- malformed streams ------------------------------------------------------------------------

v1::CapturePart Header(v1::Side side = v1::HEAD, const std::string& schema = SchemaVersion()) {
  v1::CapturePart p;
  p.set_side(side);
  p.mutable_header()->set_schema(schema);
  return p;
}

TEST(CaptureAssemblerTest, SideMustBeSet) {
  CaptureAssembler a(kNoLimit);
  v1::CapturePart p = Header();
  p.set_side(v1::SIDE_UNSPECIFIED);
  EXPECT_THAT(a.Add(v1::CapturePart(p)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("part 0 (head header): side must be HEAD or BASE")));
}

TEST(CaptureAssemblerTest, HeaderFirstAndOnce) {
  CaptureAssembler a(kNoLimit);
  v1::CapturePart frame;
  frame.set_side(v1::HEAD);
  frame.mutable_frame()->set_id(0);
  EXPECT_THAT(a.Add(v1::CapturePart(frame)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("part 0 (head frame): the header must be the first part")));
  CaptureAssembler b(kNoLimit);
  ASSERT_THAT(b.Add(Header()), IsOk());
  EXPECT_THAT(b.Add(Header()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a second header")));
}

TEST(CaptureAssemblerTest, WrongSchemaIsRefusedAtTheHeader) {
  CaptureAssembler a(kNoLimit);
  EXPECT_THAT(
      a.Add(Header(v1::HEAD, "9.9.9")),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("this build reads schema 0.5.x")));
}

TEST(CaptureAssemblerTest, NodesNeedTheirGraphAnnounced) {
  CaptureAssembler a(kNoLimit);
  ASSERT_THAT(a.Add(Header()), IsOk());
  v1::CapturePart batch;
  batch.set_side(v1::HEAD);
  batch.mutable_node_batch()->set_graph_id("g9");
  EXPECT_THAT(a.Add(v1::CapturePart(batch)), StatusIs(absl::StatusCode::kInvalidArgument,
                                                      HasSubstr("graph \"g9\" was not announced")));
}

TEST(CaptureAssemblerTest, EndMarkerCountMustMatch) {
  CaptureAssembler a(kNoLimit);
  ASSERT_THAT(a.Add(Header()), IsOk());
  v1::EndOfCapture end;
  end.set_parts(5);
  EXPECT_THAT(a.Finish(end),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("end marker says 5 parts were sent, but 1 arrived")));
}

TEST(CaptureAssemblerTest, NoHeadIsRefused) {
  CaptureAssembler a(kNoLimit);
  ASSERT_THAT(a.Add(Header(v1::BASE)), IsOk());
  v1::EndOfCapture end;
  end.set_parts(1);
  EXPECT_THAT(a.Finish(end),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no head capture")));
}

TEST(CaptureAssemblerTest, SessionByteLimit) {
  std::vector<v1::CapturePart> parts = Split(Hero(), v1::HEAD, 4096);
  EXPECT_THAT(Assemble(parts, 10000),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("over the session limit of 10000 bytes (max_session_bytes)")));
}

// One message's parts, a single part or a batch, added as the server's analysis task adds them;
// a batch with nothing in it and a message with no part are refused by their number.
TEST(CaptureAssemblerTest, AMessagesPartsSingleOrBatched) {
  std::vector<v1::CapturePart> parts = Split(Hero(), v1::HEAD, 4096);
  ASSERT_GE(parts.size(), 3u);
  CaptureAssembler a(~uint64_t{0});
  v1::AnalyzeChunk single, batch, empty_batch, nothing;
  *single.mutable_part() = parts[0];
  *batch.mutable_parts()->add_parts() = parts[1];
  *batch.mutable_parts()->add_parts() = parts[2];
  empty_batch.mutable_parts();
  EXPECT_THAT(a.AddCountedMessage(single, 2), IsOk());
  EXPECT_THAT(a.AddCountedMessage(batch, 3), IsOk());
  EXPECT_EQ(a.parts(), 3u);
  EXPECT_EQ(a.bytes(), 0u);  // counted by the caller, not here
  EXPECT_THAT(a.AddCountedMessage(empty_batch, 4),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("message 4 is an empty batch of parts")));
  EXPECT_THAT(a.AddCountedMessage(nothing, 5), StatusIs(absl::StatusCode::kInvalidArgument,
                                                        HasSubstr("message 5 carries no parts")));
}

// A caller that counts bytes itself (the server, off the wire): CountBytes alone moves bytes(),
// and refuses past the limit naming what it was given; AddCounted adds without counting.
TEST(CaptureAssemblerTest, CallerCountedBytes) {
  std::vector<v1::CapturePart> parts = Split(Hero(), v1::HEAD, 4096);
  CaptureAssembler a(1000);
  ASSERT_THAT(a.CountBytes(600, [] { return std::string("message 1"); }), IsOk());
  ASSERT_THAT(a.AddCounted(std::move(parts[0])), IsOk());
  EXPECT_EQ(a.bytes(), 600u);
  EXPECT_EQ(a.parts(), 1u);
  ASSERT_THAT(a.CountBytes(400, [] { return std::string("message 2"); }),
              IsOk());  // exactly at the limit
  EXPECT_THAT(a.CountBytes(1, [] { return std::string("message 3"); }),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("message 3: the capture is over the session limit of 1000 bytes "
                                 "(max_session_bytes)")));
}

// Add counts each part's encoded size itself: a limit of exactly the parts' bytes is enough.
TEST(CaptureAssemblerTest, AddCountsEncodedPartBytes) {
  std::vector<v1::CapturePart> parts = Split(Hero(), v1::HEAD, 4096);
  uint64_t total = 0;
  for (const v1::CapturePart& p : parts) total += p.ByteSizeLong();
  EXPECT_THAT(Assemble(parts, total), IsOk());
  EXPECT_THAT(Assemble(parts, total - 1),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr(absl::StrCat("part ", parts.size() - 1, " ("))));
}

TEST(CaptureAssemblerTest, DanglingNodeIsRefusedAtTheEnd) {
  v1::SessionCapture c = Hero();
  v1::Graph* g = c.add_graphs();
  g->set_id("g");
  v1::Node* n = g->add_nodes();
  n->set_name("sub");
  n->set_op("call_function");
  n->add_args()->set_node("ghost");
  EXPECT_THAT(Assemble(Split(c, v1::HEAD, kDefaultPartBudget)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("head: graphs[12].nodes[0].args[0]: node \"ghost\"")));
}

TEST(CaptureAssemblerTest, BadFragments) {
  CaptureAssembler a(kNoLimit);
  ASSERT_THAT(a.Add(Header()), IsOk());
  v1::CapturePart f;
  f.set_side(v1::HEAD);
  f.mutable_fragment()->set_kind("teleport");
  f.mutable_fragment()->set_last(true);
  EXPECT_THAT(a.Add(v1::CapturePart(f)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("fragment.kind \"teleport\" is not a capture part")));
  f.mutable_fragment()->set_kind("compile");
  f.mutable_fragment()->set_data("\xff\xff\xff");
  EXPECT_THAT(a.Add(v1::CapturePart(f)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the reassembled compile is not a valid Compile")));
}

TEST(CaptureAssemblerTest, StreamEndingInsideAFragmentOrSource) {
  std::vector<v1::CapturePart> parts = Split(Big(10), v1::HEAD, 4096);
  // Drop the last piece of the final fragmented item or source, whichever comes last.
  while (!parts.empty() && !(parts.back().has_fragment() || parts.back().has_source_chunk()))
    parts.pop_back();
  ASSERT_FALSE(parts.empty());
  parts.pop_back();
  EXPECT_THAT(Assemble(std::move(parts)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the stream ended inside")));
}

std::vector<v1::CapturePart> RawTrace(const std::string& log, size_t chunk) {
  std::vector<v1::CapturePart> parts;
  for (size_t i = 0; i < log.size(); i += chunk) {
    v1::CapturePart p;
    p.set_side(v1::HEAD);
    p.set_torch_trace(log.substr(i, chunk));
    parts.push_back(std::move(p));
  }
  return parts;
}

TEST(CaptureAssemblerTest, RawTraceBytesAreImportedAsTheyArrive) {
  absl::StatusOr<std::string> log = ReadFile(CL_SOURCE_DIR "/examples/hero/traces/head.log");
  ASSERT_TRUE(log.ok());
  std::vector<v1::CapturePart> parts{Header()};
  parts[0].mutable_header()->mutable_session()->set_gpu("H100-SXM");
  (*parts[0].mutable_header()->mutable_session()->mutable_labels())["model"] = "hero";
  for (v1::CapturePart& p : RawTrace(*log, 65536)) parts.push_back(std::move(p));
  ASSERT_OK_AND_ASSIGN(AssembledCaptures got, Assemble(std::move(parts)));
  EXPECT_EQ(got.head.compiles_size(), 4);
  EXPECT_EQ(got.head.frames(0).name(), "forward");
  EXPECT_EQ(got.head.session().gpu(), "H100-SXM");  // the header's facts override the log's
  EXPECT_EQ(got.head.session().labels().at("model"), "hero");
  EXPECT_FALSE(got.head.session().id().empty());  // and the log's own facts stay
}

TEST(CaptureAssemblerTest, RawTraceWithoutAHeader) {
  ASSERT_OK_AND_ASSIGN(
      AssembledCaptures got,
      Assemble(RawTrace("V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, "
                        "\"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n",
                        7)));
  EXPECT_EQ(got.head.compiles_size(), 1);
}

TEST(CaptureAssemblerTest, TypedPartsAndRawBytesDoNotMix) {
  CaptureAssembler a(kNoLimit);
  ASSERT_THAT(a.Add(Header()), IsOk());
  v1::CapturePart frame;
  frame.set_side(v1::HEAD);
  frame.mutable_frame()->set_id(0);
  ASSERT_THAT(a.Add(v1::CapturePart(frame)), IsOk());
  EXPECT_THAT(a.Add(v1::CapturePart(RawTrace("V1129 x", 100)[0])),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("typed parts or raw TORCH_TRACE bytes, not both")));
}

TEST(CaptureAssemblerTest, TypedPartsAfterRawBytesAreRefusedButOfferedSourcesAreNot) {
  CaptureAssembler a(kNoLimit);
  ASSERT_THAT(a.Add(v1::CapturePart(RawTrace("V1129 x", 100)[0])), IsOk());
  v1::SourceFile source;
  source.set_path("/w/model.py");
  source.set_text("x = 1\n");
  ASSERT_THAT(SplitSource(source, v1::HEAD, kDefaultPartBudget,
                          [&](v1::CapturePart&& p) { return a.Add(std::move(p)); }),
              IsOk());
  v1::CapturePart frame;
  frame.set_side(v1::HEAD);
  frame.mutable_frame()->set_id(0);
  EXPECT_THAT(a.Add(std::move(frame)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("only source_chunk parts")));
}

// The sources a client offers with a raw log: those the imported session names are kept, as an
// in-process import reads them from disk (the same files, in the same order); the others go.
TEST(CaptureAssemblerTest, ARawLogKeepsTheOfferedSourcesItsSessionNames) {
  const std::string log_path = CL_SOURCE_DIR "/examples/hero/traces/head.log";
  ImportOptions here;
  here.path_map = {{"/mnt/project/examples", CL_SOURCE_DIR "/examples/hero"}};
  here.graph_nodes = GraphNodes::kLoweredOnly;
  ASSERT_OK_AND_ASSIGN(v1::SessionCapture local, ImportTraceFile(log_path, here));
  ASSERT_GT(local.sources_size(), 0);
  ASSERT_OK_AND_ASSIGN(std::string log, ReadFile(log_path));

  std::vector<v1::CapturePart> parts{Header()};
  parts[0].mutable_header()->set_post_grad_nodes_only(true);
  parts[0].mutable_header()->set_source_name("head.log");
  for (v1::CapturePart& p : RawTrace(log, 65536)) parts.push_back(std::move(p));
  // Offered in reverse, and one file the log does not name.
  std::vector<v1::SourceFile> offered(local.sources().rbegin(), local.sources().rend());
  offered.emplace_back().set_path("/w/unnamed.py");
  offered.back().set_text("y = 2\n");
  for (v1::SourceFile& f : offered) f.clear_sha256();
  for (const v1::SourceFile& f : offered) {
    ASSERT_THAT(SplitSource(f, v1::HEAD, 1024,
                            [&](v1::CapturePart&& p) {
                              parts.push_back(std::move(p));
                              return absl::OkStatus();
                            }),
                IsOk());
  }
  ASSERT_OK_AND_ASSIGN(AssembledCaptures got, Assemble(std::move(parts)));
  EXPECT_TRUE(MessageDifferencer::Equals(got.head, local))
      << "sources: " << got.head.sources_size() << " against " << local.sources_size();
}

TEST(CaptureAssemblerTest, APostGradOnlySideCannotBeComparedWithABase) {
  std::vector<v1::CapturePart> parts{Header()};
  parts[0].mutable_header()->set_post_grad_nodes_only(true);
  for (v1::CapturePart& p :
       RawTrace("V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, "
                "\"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0}\n",
                64)) {
    parts.push_back(std::move(p));
  }
  for (v1::CapturePart& p : Split(Hero(), v1::BASE, kDefaultPartBudget))
    parts.push_back(std::move(p));
  // Refused at the base's first part, before the base is imported for nothing.
  EXPECT_THAT(Assemble(std::move(parts)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("(base header): head: header.post_grad_nodes_only imports the "
                                 "log without")));
}

TEST(CaptureAssemblerTest, EmptyPart) {
  CaptureAssembler a(kNoLimit);
  ASSERT_THAT(a.Add(Header()), IsOk());
  v1::CapturePart empty;
  empty.set_side(v1::HEAD);
  EXPECT_THAT(a.Add(v1::CapturePart(empty)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("carries nothing")));
}

}  // namespace
}  // namespace cl

#include "capture/validate.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "capture/capture_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

using ::cl::testing::IsOk;
using ::cl::testing::StatusIs;
using ::testing::HasSubstr;

// A small valid capture: one frame, two compiles, one graph of three nodes, one iteration, a
// kernel.
v1::SessionCapture Valid() {
  absl::StatusOr<v1::SessionCapture> c = ParseCaptureJson(R"json({
    "schema": "0.5.0",
    "session": {"id": "s", "rank": 0, "world_size": 1},
    "frames": [{"id": 0, "name": "forward", "file": "m.py", "line": 3}],
    "compiles": [
      {"id": "0/0", "frame_id": 0, "frame_compile_id": 0, "status": "OK"},
      {"id": "0/1_1", "frame_id": 0, "frame_compile_id": 1, "attempt": 1, "status": "OK",
       "recompile_reasons": ["0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4"]}
    ],
    "graphs": [{"id": "g0", "compile_id": "0/0", "stage": "POST_GRAD", "nodes": [
      {"name": "x", "op": "placeholder"},
      {"name": "relu", "op": "call_function", "target": "aten.relu.default", "args": [{"node": "x"}]},
      {"name": "output", "op": "output", "args": [{"node": "relu"}], "kwargs": {"k": {"literal": "1"}}}
    ]}],
    "iterations": [{"index": 0, "frame_id": 0, "compile_id": "0/0"}],
    "kernels": [{"name": "k0", "graph_id": "g0", "source_nodes": ["relu"]}],
    "sources": [{"path": "m.py", "text": "x"}]
  })json");
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

TEST(ValidateTest, AcceptsAConsistentCapture) { EXPECT_THAT(ValidateCapture(Valid()), IsOk()); }

TEST(ValidateTest, CompileIdGrammar) {
  v1::SessionCapture c = Valid();
  c.mutable_compiles(1)->set_id("0/x");
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("compiles[1].id: \"0/x\" is not a compile id")));
}

TEST(ValidateTest, CompileIdMustAgreeWithItsParts) {
  v1::SessionCapture c = Valid();
  c.mutable_compiles(1)->set_attempt(0);
  EXPECT_THAT(ValidateCapture(c), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("compiles[1]: id \"0/1_1\" disagrees")));
}

TEST(ValidateTest, DuplicateIds) {
  v1::SessionCapture c = Valid();
  *c.add_compiles() = c.compiles(0);
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("compiles[2].id: \"0/0\" is used by another compile")));
  c = Valid();
  *c.add_frames() = c.frames(0);
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("frames[1].id")));
}

TEST(ValidateTest, DanglingReferencesAreNamed) {
  v1::SessionCapture c = Valid();
  c.mutable_compiles(0)->set_frame_id(7);
  c.mutable_compiles(0)->set_id("7/0");
  EXPECT_THAT(ValidateCapture(c), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("compiles[0].frame_id: 7 names no frame")));
  c = Valid();
  c.mutable_graphs(0)->set_compile_id("9/9");
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("graphs[0].compile_id: \"9/9\" names no compile")));
  c = Valid();
  c.mutable_iterations(0)->set_compile_id("0/5");
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("iterations[0].compile_id")));
  c = Valid();
  c.mutable_kernels(0)->set_source_nodes(0, "ghost");
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kernels[0].source_nodes[0]: node \"ghost\" does not exist")));
}

TEST(ValidateTest, GuardedSourceIdsMustIndexTheFramesTable) {
  v1::SessionCapture c = Valid();
  c.mutable_frames(0)->add_guarded_sources("L['x']");
  c.mutable_compiles(0)->add_guarded_source_ids(0);
  EXPECT_THAT(ValidateCapture(c), IsOk());
  c.mutable_compiles(0)->add_guarded_source_ids(3);
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("compiles[0].guarded_source_ids[1]: 3 is past frame 0's 1 "
                                 "guarded_sources")));
}

TEST(ValidateTest, ANodeArgumentNamingAMissingNode) {
  v1::SessionCapture c = Valid();
  c.mutable_graphs(0)->mutable_nodes(1)->mutable_args(0)->set_node("mm_9");
  EXPECT_THAT(ValidateCapture(c), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("graphs[0].nodes[1].args[0]: node \"mm_9\" is "
                                                     "not defined before it in graph \"g0\"")));
}

TEST(ValidateTest, ReferencesInsideListsAreChecked) {
  v1::SessionCapture c = Valid();
  v1::ArgList* list = c.mutable_graphs(0)->mutable_nodes(2)->add_args()->mutable_list();
  list->add_items()->set_node("relu");
  list->add_items()->mutable_list()->add_items()->set_node("phantom");
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("graphs[0].nodes[2].args[1][1][0]: node \"phantom\"")));
}

// A node may only use nodes listed before it (an FX graph's order is topological), which is how a
// cycle is refused: some node of it uses one listed after it.
TEST(ValidateTest, CyclesAreRefused) {
  {  // relu uses output, which uses relu.
    v1::SessionCapture c = Valid();
    c.mutable_graphs(0)->mutable_nodes(1)->mutable_args(0)->set_node("output");
    EXPECT_THAT(
        ValidateCapture(c),
        StatusIs(
            absl::StatusCode::kInvalidArgument,
            HasSubstr("graphs[0].nodes[1].args[0]: node \"output\" is not defined before it")));
  }
  {  // relu uses b, b uses relu; output uses both.
    v1::SessionCapture c = Valid();
    v1::Graph* g = c.mutable_graphs(0);
    g->mutable_nodes(1)->mutable_args(0)->set_node("b");
    v1::Node b = g->nodes(1);
    b.set_name("b");
    b.mutable_args(0)->set_node("relu");
    *g->mutable_nodes()->Add() = g->nodes(2);
    *g->mutable_nodes(2) = b;
    g->mutable_nodes(3)->add_args()->set_node("b");
    EXPECT_THAT(
        ValidateCapture(c),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 HasSubstr("graphs[0].nodes[1].args[0]: node \"b\" is not defined before it")));
    // And the same graph without the back edge is accepted.
    g->mutable_nodes(1)->mutable_args(0)->set_node("x");
    EXPECT_THAT(ValidateCapture(c), IsOk());
  }
}

TEST(ValidateTest, KwargReferencesAreChecked) {
  v1::SessionCapture c = Valid();
  (*c.mutable_graphs(0)->mutable_nodes(2)->mutable_kwargs())["k"].set_node("nope");
  EXPECT_THAT(ValidateCapture(c), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("graphs[0].nodes[2].kwargs[\"k\"]")));
}

TEST(ValidateTest, CountsFurtherProblems) {
  v1::SessionCapture c = Valid();
  c.mutable_compiles(0)->set_id("bad");
  c.mutable_compiles(1)->set_id("worse");
  c.mutable_graphs(0)->mutable_nodes(0)->set_op("teleport");
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("(and 4 more problems)")));
}

TEST(ValidateTest, HostileStringsAreEscapedInMessages) {
  v1::SessionCapture c = Valid();
  c.mutable_compiles(0)->set_id("<script>\n\x01");
  EXPECT_THAT(ValidateCapture(c), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("\"<script>\\n\\x01\" is not a compile id")));
}

TEST(ValidateTest, LongStringsAreClippedInMessages) {
  v1::SessionCapture c = Valid();
  c.mutable_compiles(0)->set_id(std::string(200, 'x'));
  const std::string quoted = absl::StrCat("\"", std::string(80, 'x'), "\u2026\"");
  EXPECT_THAT(ValidateCapture(c), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr(quoted + " is not a compile id")));
}

TEST(ValidateTest, RankOutsideWorld) {
  v1::SessionCapture c = Valid();
  c.mutable_session()->set_rank(3);
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("session.rank")));
}

TEST(CompileIdTest, Parses) {
  struct Case {
    const char* id;
    uint32_t frame, compile, attempt;
    std::optional<uint32_t> compiled_autograd;
    uint32_t reset_round = 0;
    bool no_frame = false;
  };
  // "!2/0/1_3": torch's spelling of a compiled autograd compile (graph 2 of compiled autograd);
  // "@2" the second round after torch._dynamo.reset(); "-/5" the sixth compile with no id.
  for (const Case& c : {Case{"12/3_4", 12, 3, 4, std::nullopt}, Case{"!2/0/1_3", 0, 1, 3, 2u},
                        Case{"0/1@2", 0, 1, 0, std::nullopt, 2}, Case{"!1/3/0_1@1", 3, 0, 1, 1u, 1},
                        Case{"-/5", 0, 5, 0, std::nullopt, 0, true}}) {
    auto id = ParseCompileId(c.id);
    ASSERT_TRUE(id.has_value()) << c.id;
    EXPECT_EQ(id->frame_id, c.frame) << c.id;
    EXPECT_EQ(id->frame_compile_id, c.compile) << c.id;
    EXPECT_EQ(id->attempt, c.attempt) << c.id;
    EXPECT_EQ(id->compiled_autograd_id, c.compiled_autograd) << c.id;
    EXPECT_EQ(id->reset_round, c.reset_round) << c.id;
    EXPECT_EQ(id->no_frame, c.no_frame) << c.id;
  }
  for (const char* bad : {"",
                          "0",
                          "/1",
                          "0/",
                          "0/1_",
                          "a/1",
                          "0/1/2",
                          "-1/0",
                          "0/99999999999",
                          "0/1000000000",
                          "!0",
                          "!/0/1",
                          "!a/0/1",
                          "!1/0",
                          "!!1/0/1",
                          "!1/!2/0/1",
                          "0/1@",
                          "0/1@0",
                          "0/1@x",
                          "0/1@1@1",
                          "-/",
                          "-/x",
                          "-/1_1",
                          "-/0@1",
                          "@1"}) {
    EXPECT_FALSE(ParseCompileId(bad).has_value()) << bad;
  }
}

// A compile of a reset round must name a frame of that round whose torch id is the id's; a
// "-/N" compile must name the no_frame frame.
TEST(ValidateTest, ResetRoundAndNoFrameCompilesNameTheirFrames) {
  v1::SessionCapture c = Valid();
  c.clear_frames();
  c.clear_compiles();
  c.clear_graphs();
  c.clear_iterations();
  c.clear_kernels();
  c.add_frames()->set_id(0);
  v1::Frame* f1 = c.add_frames();
  f1->set_id(1);
  f1->set_reset_round(1);
  f1->set_torch_id(0);
  v1::Frame* none = c.add_frames();
  none->set_id(2);
  none->set_no_frame(true);
  const auto add = [&](const char* id, uint32_t frame, uint32_t frame_compile) {
    v1::Compile* cp = c.add_compiles();
    cp->set_id(id);
    cp->set_frame_id(frame);
    cp->set_frame_compile_id(frame_compile);
  };
  add("0/0", 0, 0);
  add("0/0@1", 1, 0);
  add("-/0", 2, 0);
  EXPECT_TRUE(ValidateCapture(c).ok()) << ValidateCapture(c);

  c.mutable_compiles(1)->set_frame_id(0);
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("compiles[1]: id \"0/0@1\" disagrees with "
                                 "frame_id 0, which is of reset round 0, not 1")));
  c.mutable_compiles(1)->set_frame_id(1);
  f1->set_torch_id(3);
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is torch's frame 3")));
  f1->set_torch_id(0);
  c.mutable_compiles(2)->set_frame_id(0);
  EXPECT_THAT(ValidateCapture(c),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is not a no_frame frame")));
}

}  // namespace
}  // namespace cl

// The IR diff pass: the hero, when it skips, which stage and compiles it diffs, how frames are
// matched, cancellation, and a real training trace against itself.
#include "analyzers/ir_diff/ir_diff.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "analyzers/registry.h"
#include "capture/torch_trace/importer.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "service/render/html.h"
#include "service/render/text.h"
#include "tests/testing/captures.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/golden.h"
#include "tests/testing/import_fixture.h"
#include "tests/testing/run_pass.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::cl::testing::LoadHero;
using ::cl::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

v1::IrDiffSection Diff(const v1::SessionCapture& base, const v1::SessionCapture& head) {
  return ::cl::testing::RunPassOk(IrDiffPass(), head, nullptr, &base).ir_diff();
}

// The section as the JSON report prints it (original field names, every field).
std::string SectionJson(const v1::IrDiffSection& section) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(section, &json, options).ok());
  return json;
}

// Drops the graphs of `stage` (and their ids from the compiles), as a trace with a warm cache or
// another backend would lack them.
void DropStage(v1::SessionCapture* capture, v1::Graph::Stage stage) {
  auto* graphs = capture->mutable_graphs();
  for (int i = graphs->size() - 1; i >= 0; --i) {
    if (graphs->Get(i).stage() == stage) graphs->DeleteSubrange(i, 1);
  }
}

TEST(IrDiffTest, HeroSubOperandsReordered) {
  const v1::IrDiffSection s = Diff(LoadHero("base.cls.json"), LoadHero("head.cls.json"));
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.added_size(), 0);
  EXPECT_EQ(s.removed_size(), 0);
  ASSERT_EQ(s.modified_size(), 1);
  const v1::NodeChange& sub = s.modified(0);
  EXPECT_EQ(sub.node(), "sub");
  EXPECT_EQ(sub.base_node(), "sub");
  EXPECT_EQ(sub.op(), "aten.sub.Tensor");
  EXPECT_EQ(sub.change(), "operands reordered");
  EXPECT_THAT(sub.kinds(), ElementsAre("operands_reordered"));
  EXPECT_EQ(sub.location().file(), "examples/hero_scene.py");
  EXPECT_EQ(sub.location().line(), 49u);
  EXPECT_EQ(sub.confidence(), 1.0);
  EXPECT_EQ(s.match_coverage(), 1.0);
  EXPECT_EQ(s.anchor_uniqueness(), 1.0);
  // One compile of the frame, not all four recompiles (which would repeat the change).
  EXPECT_EQ(s.stage(), "POST_GRAD (0/0 vs 0/0)");
  ASSERT_EQ(s.frames_size(), 1);
  EXPECT_EQ(s.frames(0).frame(), "forward");
  EXPECT_EQ(s.frames(0).location().file(), "examples/hero_scene.py");
  EXPECT_EQ(s.frames(0).location().line(), 86u);
  EXPECT_EQ(s.frames(0).base_nodes(), 47u);
  EXPECT_EQ(s.frames(0).matched(), 47u);
  ::cl::testing::ExpectMatchesGolden("ir_diff/hero_ir_diff.json", SectionJson(s));
}

// The page and the terminal say which graphs were compared, and which frames one side lacks.
TEST(IrDiffTest, ReportsSayWhatWasCompared) {
  v1::SessionCapture base = LoadHero("base.cls.json");
  v1::Frame* helper = base.add_frames();
  helper->set_id(1);
  helper->set_name("helper");
  helper->set_file("/mnt/project/examples/hero_scene.py");
  helper->set_line(30);
  v1::AnalysisReport report;
  *report.mutable_ir_diff() = Diff(base, LoadHero("head.cls.json"));
  const std::string page = RenderHtml(report);
  EXPECT_THAT(page, HasSubstr("<p class=\"muted\">Compared <code>POST_GRAD (0/0 vs 0/0)</code>"));
  EXPECT_THAT(page, HasSubstr("Frames compiled only in the base: <code>helper "
                              "(examples/hero_scene.py:30)</code>.</p>"));
  EXPECT_THAT(RenderText(report, /*color=*/false),
              HasSubstr("  compared POST_GRAD (0/0 vs 0/0)\n"));
}

TEST(IrDiffTest, HeroAgainstItselfIsUnchanged) {
  const v1::SessionCapture head = LoadHero("head.cls.json");
  const v1::IrDiffSection s = Diff(head, head);
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.added_size(), 0);
  EXPECT_EQ(s.removed_size(), 0);
  EXPECT_EQ(s.modified_size(), 0);
  EXPECT_EQ(s.match_coverage(), 1.0);
}

// Newer torch also logs the graph before the post-grad passes: a head that has it (and a base that
// does not) still pairs its inductor_post_grad_graph with the base's, not the before_ copy with it.
TEST(IrDiffTest, AGraphOnlyOneSideLoggedDoesNotTakeTheOthersPartner) {
  const v1::SessionCapture base = LoadHero("head.cls.json");
  v1::SessionCapture head = base;
  v1::Graph before;
  for (const v1::Graph& g : head.graphs()) {
    if (g.id() == "0/0/inductor_post_grad_graph") before = g;
  }
  ASSERT_FALSE(before.id().empty());
  before.set_id("0/0/before_post_grad_graph");
  before.mutable_nodes()->DeleteSubrange(1, 1);  // not the same graph: the passes changed it
  // Logged before the lowered graph, as torch does.
  auto* graphs = head.mutable_graphs();
  *graphs->Add() = before;
  for (int i = graphs->size() - 1; i > 0 && graphs->Get(i - 1).id() != "0/0/aot_inference_graph";
       --i) {
    graphs->SwapElements(i, i - 1);
  }
  const v1::IrDiffSection s = Diff(base, head);
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.removed_size(), 0);
  EXPECT_EQ(s.modified_size(), 0);
  EXPECT_EQ(s.added_size(), 0) << SectionJson(s);
}

TEST(IrDiffTest, SkippedWithoutABase) {
  v1::AnalysisReport report = ::cl::testing::RunPassOk(IrDiffPass(), LoadHero("head.cls.json"));
  EXPECT_EQ(report.ir_diff().status(), v1::SKIPPED);
  EXPECT_EQ(report.ir_diff().reason(), "no base capture");
}

TEST(IrDiffTest, SkippedWithoutGraphs) {
  v1::SessionCapture base = LoadHero("base.cls.json");
  v1::SessionCapture head = LoadHero("head.cls.json");
  v1::SessionCapture bare_base = base, bare_head = head;
  bare_base.clear_graphs();
  bare_head.clear_graphs();
  EXPECT_EQ(Diff(bare_base, bare_head).status(), v1::SKIPPED);
  EXPECT_EQ(Diff(bare_base, bare_head).reason(), "no graphs in the captures");
  EXPECT_EQ(Diff(bare_base, head).reason(), "no graphs in the base capture");
  EXPECT_EQ(Diff(base, bare_head).reason(), "no graphs in the head capture");
}

TEST(IrDiffTest, DiffsTheMostLoweredStageBothSidesHave) {
  const v1::SessionCapture head = LoadHero("head.cls.json");
  v1::SessionCapture base = LoadHero("base.cls.json");
  DropStage(&base, v1::Graph::POST_GRAD);
  // The custom pass runs after AOT: the AOT graphs agree.
  v1::IrDiffSection s = Diff(base, head);
  EXPECT_EQ(s.stage(), "AOT_INFERENCE (0/0 vs 0/0)");
  EXPECT_EQ(s.modified_size(), 0);
  DropStage(&base, v1::Graph::AOT_INFERENCE);
  s = Diff(base, head);
  EXPECT_EQ(s.stage(), "DYNAMO (0/0 vs 0/0)");
  EXPECT_EQ(s.modified_size(), 0);
  EXPECT_EQ(s.frames(0).base_nodes(), 43u);
}

TEST(IrDiffTest, DiffsEachFramesFirstCompileWithThatStage) {
  v1::SessionCapture base = LoadHero("base.cls.json");
  const v1::SessionCapture head = LoadHero("head.cls.json");
  // Without 0/0's post-grad graph the base's first compile that has one is 0/1 (batch 32).
  for (int i = base.graphs_size() - 1; i >= 0; --i) {
    if (base.graphs(i).id() == "0/0/inductor_post_grad_graph") {
      base.mutable_graphs()->DeleteSubrange(i, 1);
    }
  }
  const v1::IrDiffSection s = Diff(base, head);
  EXPECT_EQ(s.stage(), "POST_GRAD (0/1 vs 0/0)");
  ASSERT_GT(s.modified_size(), 0);
  bool batch_changed = false;
  for (const v1::NodeChange& c : s.modified()) {
    batch_changed = batch_changed || c.change() == "shape changed ([32, 64] \u2192 [16, 64])";
  }
  EXPECT_TRUE(batch_changed);
}

TEST(IrDiffTest, MatchesFramesByCodeObjectAndListsOneSidedFrames) {
  v1::SessionCapture base = LoadHero("base.cls.json");
  v1::SessionCapture head = LoadHero("head.cls.json");
  // Another frame numbering on the head side: frame ids only count compiles in order.
  head.mutable_frames(0)->set_id(3);
  for (v1::Compile& c : *head.mutable_compiles()) c.set_frame_id(3);
  // A frame only the base compiled.
  v1::Frame* helper = base.add_frames();
  helper->set_id(1);
  helper->set_name("helper");
  helper->set_file("/mnt/project/examples/hero_scene.py");
  helper->set_line(30);
  const v1::IrDiffSection s = Diff(base, head);
  EXPECT_EQ(s.stage(), "POST_GRAD (0/0 vs 0/0)");
  EXPECT_EQ(s.modified_size(), 1);
  EXPECT_THAT(s.frames_only_in_base(), ElementsAre("helper (examples/hero_scene.py:30)"));
  EXPECT_THAT(s.frames_only_in_head(), IsEmpty());
}

TEST(IrDiffTest, SourcesCompareRelativeToEachSidesProjectRoot) {
  const v1::SessionCapture base = LoadHero("base.cls.json");
  v1::SessionCapture head = LoadHero("base.cls.json");
  // The same model traced in another checkout.
  head.mutable_session()->set_project_root("/home/me/src");
  for (v1::Frame& f : *head.mutable_frames()) f.set_file("/home/me/src/examples/hero_scene.py");
  for (v1::Graph& g : *head.mutable_graphs()) {
    for (v1::Node& n : *g.mutable_nodes()) {
      if (!n.source().file().empty()) {
        n.mutable_source()->set_file("/home/me/src/examples/hero_scene.py");
      }
    }
  }
  const v1::IrDiffSection s = Diff(base, head);
  EXPECT_THAT(s.frames_only_in_head(), IsEmpty());
  EXPECT_EQ(s.modified_size(), 0);
  EXPECT_EQ(s.anchor_uniqueness(), 1.0);
}

TEST(IrDiffTest, CancelledIsAnError) {
  const v1::SessionCapture base = LoadHero("base.cls.json");
  const v1::SessionCapture head = LoadHero("head.cls.json");
  const PassOptions options;
  const std::atomic<bool> cancelled{true};
  const PassInput in{head, &base, options, &cancelled};
  v1::AnalysisReport report;
  EXPECT_THAT(IrDiffPass().Run(in, &report),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("ir_diff")));
}

TEST(IrDiffTest, RegisteredAfterTheRanksPass) {
  const Pass* pass = FindPass("ir_diff");
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->Section(), "ir_diff");
  ASSERT_GE(RegisteredPasses().size(), 4u);
  EXPECT_EQ(RegisteredPasses()[1]->Name(), "ranks");
  EXPECT_EQ(RegisteredPasses()[2], pass);
  EXPECT_EQ(RegisteredPasses()[3]->Name(), "recompile");
}

// A real training step (forward and backward post-grad graphs of one compile), against itself.
TEST(IrDiffTest, RealTrainingTraceAgainstItselfIsUnchanged) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> train =
      ImportTraceFile(testing::FixturePath("torch_trace/torch-2.6/train/trace.log"), options);
  ASSERT_TRUE(train.ok()) << train.status();
  const v1::IrDiffSection s = Diff(*train, *train);
  EXPECT_EQ(s.stage(), "POST_GRAD (0/0 vs 0/0)");
  ASSERT_EQ(s.frames_size(), 1);
  EXPECT_EQ(s.frames(0).base_nodes(), 59u);  // forward 23 + backward 36
  EXPECT_EQ(s.frames(0).matched(), 59u);
  EXPECT_EQ(s.modified_size(), 0);
  EXPECT_EQ(s.match_coverage(), 1.0);
}

// fixtures/torch_trace/torch-2.6/linear_bias-{base,head} (scenes/linear_bias.py): three Linears,
// then the same without bias. AOTAutograd names inputs by position, so dropping the biases renames
// every later input (head's arg1_1 is base's arg2_1): inputs are paired by what they hold, the
// biases are removed, and each addmm → mm drops an operand (not "operands reordered").
TEST(IrDiffTest, ALinearThatLostItsBiasIsOperandsRemoved) {
  const v1::IrDiffSection s =
      Diff(testing::ImportFixtureLog("torch_trace/torch-2.6/linear_bias-base/trace.log"),
           testing::ImportFixtureLog("torch_trace/torch-2.6/linear_bias-head/trace.log"));
  EXPECT_EQ(s.added_size(), 0);
  ASSERT_EQ(s.removed_size(), 3);
  for (const v1::NodeChange& r : s.removed()) EXPECT_THAT(r.node(), ::testing::StartsWith("arg"));
  ASSERT_EQ(s.modified_size(), 3);
  for (const v1::NodeChange& m : s.modified()) {
    EXPECT_THAT(m.kinds(), ElementsAre("op_changed", "operand_removed")) << m.node();
    EXPECT_THAT(m.base_node(), ::testing::StartsWith("addmm"));
    EXPECT_THAT(m.node(), ::testing::StartsWith("mm"));
  }
}

}  // namespace
}  // namespace cl

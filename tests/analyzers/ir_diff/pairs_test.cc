// The IR diff on real pairs: two versions of one small model, each traced by PyTorch 2.6 under
// TORCH_TRACE and imported (tests/analyzers/ir_diff/make_pairs.sh; the model is
// tests/analyzers/ir_diff/scenes/pairs.py). Each variant differs from `base` in one known way, and
// the diff must report exactly that, and nothing else.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzers/ir_diff/ir_diff.h"
#include "capture/capture_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAreArray;

constexpr char kScene[] = "tests/ir_diff/scenes/pairs.py";  // the path it was traced under

v1::SessionCapture Load(const std::string& variant) {
  absl::StatusOr<v1::SessionCapture> c =
      ReadCaptureFile(absl::StrCat(CL_SOURCE_DIR, "/tests/golden/ir_diff/", variant, ".cls.json"));
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : v1::SessionCapture();
}

v1::IrDiffSection Diff(const v1::SessionCapture& base, const v1::SessionCapture& head) {
  v1::IrDiffSection s = ::cl::testing::RunPassOk(IrDiffPass(), head, nullptr, &base).ir_diff();
  EXPECT_EQ(s.status(), v1::OK) << s.reason();
  EXPECT_EQ(s.stage(), "POST_GRAD (0/0 vs 0/0)");
  return s;
}

v1::IrDiffSection DiffWithBase(const std::string& variant) {
  return Diff(Load("base"), Load(variant));
}

int Changes(const v1::IrDiffSection& s) {
  return s.added_size() + s.removed_size() + s.modified_size();
}

void ExpectAt(const v1::NodeChange& c, uint32_t line) {
  EXPECT_EQ(c.location().file(), kScene) << c.node();
  EXPECT_EQ(c.location().line(), line) << c.node();
}

TEST(IrDiffPairsTest, TracedTwiceIsUnchanged) {
  const v1::IrDiffSection s = DiffWithBase("base_again");
  EXPECT_EQ(Changes(s), 0);
  EXPECT_EQ(s.match_coverage(), 1.0);
}

TEST(IrDiffPairsTest, OperandSwap) {
  const v1::IrDiffSection s = DiffWithBase("operand_swap");
  ASSERT_EQ(Changes(s), 1);
  ASSERT_EQ(s.modified_size(), 1);
  const v1::NodeChange& sub = s.modified(0);
  EXPECT_EQ(sub.node(), "sub");
  EXPECT_EQ(sub.op(), "aten.sub.Tensor");
  EXPECT_EQ(sub.change(), "operands reordered");
  EXPECT_EQ(sub.confidence(), 1.0);
  ExpectAt(sub, 54);
  EXPECT_EQ(s.match_coverage(), 1.0);
}

TEST(IrDiffPairsTest, OpSwapOfASingleNode) {
  const v1::IrDiffSection s = DiffWithBase("act_swap");
  ASSERT_EQ(Changes(s), 1);
  ASSERT_EQ(s.modified_size(), 1);
  const v1::NodeChange& act = s.modified(0);
  EXPECT_EQ(act.base_node(), "tanh");
  EXPECT_EQ(act.node(), "sigmoid");
  EXPECT_EQ(act.op(), "aten.sigmoid.default");
  EXPECT_EQ(act.change(), "op changed (aten.tanh.default \u2192 aten.sigmoid.default)");
  EXPECT_THAT(act.kinds(), ElementsAre("op_changed"));
  ExpectAt(act, 50);
  EXPECT_GT(act.confidence(), 0.5);
  EXPECT_EQ(s.match_coverage(), 1.0);
}

// gelu → silu. Inductor decomposes both before the post-grad graph: gelu into five nodes (mul,
// mul, erf, add, mul), silu into two (sigmoid, mul). Which of them pair is the matcher's best
// guess; what must hold is that every change is on line 47 and accounts for all of line 47's
// nodes on both sides, and that nothing else changed.
TEST(IrDiffPairsTest, OpSwapThatInductorDecomposes) {
  const v1::SessionCapture base = Load("base");
  const v1::SessionCapture head = Load("op_swap");
  const v1::IrDiffSection s = Diff(base, head);
  std::multiset<std::string> base_side, head_side;
  for (const v1::NodeChange& c : s.removed()) {
    ExpectAt(c, 47);
    base_side.insert(c.node());
  }
  for (const v1::NodeChange& c : s.added()) {
    ExpectAt(c, 47);
    head_side.insert(c.node());
  }
  for (const v1::NodeChange& c : s.modified()) {
    ExpectAt(c, 47);
    base_side.insert(c.base_node());
    head_side.insert(c.node());
  }
  EXPECT_THAT(base_side, UnorderedElementsAreArray({"mul", "mul_1", "erf", "add", "mul_2"}));
  EXPECT_THAT(head_side, UnorderedElementsAreArray({"sigmoid", "mul"}));
}

// The same pair at the dynamo stage, before decomposition: one node whose op changed.
TEST(IrDiffPairsTest, OpSwapAtTheDynamoStage) {
  v1::SessionCapture base = Load("base");
  v1::SessionCapture head = Load("op_swap");
  for (v1::SessionCapture* c : {&base, &head}) {
    auto* graphs = c->mutable_graphs();
    for (int i = graphs->size() - 1; i >= 0; --i) {
      if (graphs->Get(i).stage() != v1::Graph::DYNAMO) graphs->DeleteSubrange(i, 1);
    }
  }
  const v1::IrDiffSection s =
      ::cl::testing::RunPassOk(IrDiffPass(), head, nullptr, &base).ir_diff();
  EXPECT_EQ(s.stage(), "DYNAMO (0/0 vs 0/0)");
  ASSERT_EQ(Changes(s), 1);
  ASSERT_EQ(s.modified_size(), 1);
  EXPECT_EQ(s.modified(0).node(), "h_1");
  EXPECT_EQ(s.modified(0).change(),
            "op changed (torch._C._nn.gelu \u2192 torch.nn.functional.silu)");
  ExpectAt(s.modified(0), 47);
}

TEST(IrDiffPairsTest, NodeAdded) {
  const v1::IrDiffSection s = DiffWithBase("node_added");
  ASSERT_EQ(Changes(s), 1);
  ASSERT_EQ(s.added_size(), 1);
  // FX renamed the temporaries after it: the head's final multiply is mul_4 where the base's is
  // mul_3, and the new node took the name mul_3. Neither shows as a change.
  EXPECT_EQ(s.added(0).node(), "mul_3");
  EXPECT_EQ(s.added(0).op(), "aten.mul.Tensor");
  EXPECT_EQ(s.added(0).confidence(), 1.0);
  ExpectAt(s.added(0), 52);
}

TEST(IrDiffPairsTest, NodeRemoved) {
  const v1::IrDiffSection s = DiffWithBase("node_removed");
  ASSERT_EQ(Changes(s), 1);
  ASSERT_EQ(s.removed_size(), 1);
  EXPECT_EQ(s.removed(0).node(), "tanh");
  EXPECT_EQ(s.removed(0).op(), "aten.tanh.default");
  EXPECT_EQ(s.removed(0).confidence(), 1.0);
  ExpectAt(s.removed(0), 50);
}

// Hidden width 64 → 96: exactly the nodes whose shape has the width in it, nothing else.
TEST(IrDiffPairsTest, WidthChanged) {
  const v1::IrDiffSection s = DiffWithBase("width_changed");
  EXPECT_EQ(s.added_size(), 0);
  EXPECT_EQ(s.removed_size(), 0);
  std::vector<std::string> modified;
  for (const v1::NodeChange& c : s.modified()) {
    EXPECT_THAT(c.kinds(), ElementsAre("shape_changed")) << c.node() << ": " << c.change();
    // gelu's two multiplies of `addmm` share an anchor (literals stay out of anchors), so
    // propagation pairs them rather than the anchors: 0.9.
    EXPECT_GE(c.confidence(), 0.9) << c.node();
    modified.push_back(c.node());
  }
  EXPECT_THAT(modified,
              UnorderedElementsAreArray({
                  "arg0_1", "arg1_1", "arg3_1", "arg4_1", "arg5_1",  // inp, mid, out weights
                  "permute", "addmm",                                // inp
                  "mul", "mul_1", "erf", "add", "mul_2",             // gelu
                  "permute_1", "addmm_1", "tanh", "permute_2",       // mid, tanh, out
              }));
  for (const v1::NodeChange& c : s.modified()) {
    if (c.node() == "arg3_1") {
      EXPECT_EQ(c.change(), "shape changed ([64, 64] \u2192 [96, 96])");
    }
  }
  EXPECT_EQ(s.match_coverage(), 1.0);
  EXPECT_EQ(s.anchor_uniqueness(), DiffWithBase("base_again").anchor_uniqueness());
}

}  // namespace
}  // namespace cl

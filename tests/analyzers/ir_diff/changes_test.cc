// What the IR diff says about each kind of change, on small hand-written graphs: one test per
// change the section can report, and the cases around them (renamed and reordered nodes,
// unpaired graphs, frames without a common stage, untrusted literals).
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzers/ir_diff/ir_diff.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/analyzers/ir_diff/synthetic_graphs.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::cl::testing::CaptureOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::Arg N(const std::string& node) {
  v1::Arg a;
  a.set_node(node);
  return a;
}

v1::Arg L(const std::string& literal) {
  v1::Arg a;
  a.set_literal(literal);
  return a;
}

v1::Arg List(std::initializer_list<v1::Arg> items) {
  v1::Arg a;
  for (const v1::Arg& item : items) *a.mutable_list()->add_items() = item;
  return a;
}

// A graph written one node per call: placeholders, ops (from /proj/model.py, `forward`), output.
class GraphBuilder {
 public:
  GraphBuilder& In(const std::string& name) {
    v1::Node* n = Add(name, "placeholder", name);
    n->mutable_meta()->add_shape("8");
    return *this;
  }
  GraphBuilder& Op(const std::string& name, const std::string& target, std::vector<v1::Arg> args,
                   uint32_t line) {
    v1::Node* n = Add(name, "call_function", target);
    for (v1::Arg& a : args) *n->add_args() = std::move(a);
    n->mutable_source()->set_file("/proj/model.py");
    n->mutable_source()->set_fn("forward");
    n->mutable_source()->set_line(line);
    n->mutable_meta()->add_shape("8");
    n->mutable_meta()->add_stride("1");
    return *this;
  }
  GraphBuilder& Out(std::initializer_list<std::string> results) {
    v1::Node* n = Add("output", "output", "output");
    v1::ArgList* list = n->add_args()->mutable_list();
    for (const std::string& r : results) list->add_items()->set_node(r);
    return *this;
  }
  v1::Node& operator[](const std::string& name) {
    for (v1::Node& n : *graph_.mutable_nodes()) {
      if (n.name() == name) return n;
    }
    ADD_FAILURE() << "no node " << name;
    return *graph_.add_nodes();
  }
  const v1::Graph& graph() const { return graph_; }

 private:
  v1::Node* Add(const std::string& name, const std::string& op, const std::string& target) {
    v1::Node* n = graph_.add_nodes();
    n->set_name(name);
    n->set_op(op);
    n->set_target(target);
    n->mutable_meta()->set_dtype("f32");
    return n;
  }
  v1::Graph graph_;
};

// x, w → a = relu(x) :10, b = tanh(w) :11, c = add(a, b) :12, m = mean(c, [-1]) :13.
GraphBuilder Base() {
  GraphBuilder g;
  g.In("x").In("w");
  g.Op("a", "aten.relu.default", {N("x")}, 10);
  g.Op("b", "aten.tanh.default", {N("w")}, 11);
  g.Op("c", "aten.add.Tensor", {N("a"), N("b")}, 12);
  g.Op("m", "aten.mean.dim", {N("c"), List({L("-1")})}, 13);
  g.Out({"m"});
  return g;
}

v1::IrDiffSection Diff(const v1::Graph& base, const v1::Graph& head) {
  const v1::SessionCapture b = CaptureOf(base);
  const v1::SessionCapture h = CaptureOf(head);
  return ::cl::testing::RunPassOk(IrDiffPass(), h, nullptr, &b).ir_diff();
}

// The one modified node of a diff that must have exactly one change.
v1::NodeChange OnlyModified(const v1::IrDiffSection& s) {
  EXPECT_EQ(s.added_size(), 0);
  EXPECT_EQ(s.removed_size(), 0);
  EXPECT_EQ(s.modified_size(), 1);
  return s.modified_size() > 0 ? s.modified(0) : v1::NodeChange();
}

TEST(IrDiffChangesTest, RenamedTemporariesAndReorderedIndependentNodesAreNoChange) {
  GraphBuilder head;
  head.In("x").In("w");
  head.Op("tanh_7", "aten.tanh.default", {N("w")}, 11);  // b and a swapped in graph order
  head.Op("relu_3", "aten.relu.default", {N("x")}, 10);
  head.Op("add_9", "aten.add.Tensor", {N("relu_3"), N("tanh_7")}, 12);
  head.Op("mean_2", "aten.mean.dim", {N("add_9"), List({L("-1")})}, 13);
  head.Out({"mean_2"});
  const v1::IrDiffSection s = Diff(Base().graph(), head.graph());
  EXPECT_EQ(s.added_size() + s.removed_size() + s.modified_size(), 0);
  EXPECT_EQ(s.match_coverage(), 1.0);
  EXPECT_EQ(s.anchor_uniqueness(), 1.0);
}

TEST(IrDiffChangesTest, OpChanged) {
  GraphBuilder head = Base();
  head["a"].set_target("aten.sigmoid.default");
  const v1::NodeChange c = OnlyModified(Diff(Base().graph(), head.graph()));
  EXPECT_EQ(c.node(), "a");
  EXPECT_EQ(c.op(), "aten.sigmoid.default");
  EXPECT_EQ(c.change(), "op changed (aten.relu.default \u2192 aten.sigmoid.default)");
  EXPECT_THAT(c.kinds(), ElementsAre("op_changed"));
  EXPECT_EQ(c.location().file(), "model.py");
  EXPECT_EQ(c.location().line(), 10u);
  EXPECT_GT(c.confidence(), 0.5);
  EXPECT_LT(c.confidence(), 1.0);  // an op change is a less certain pairing than an anchor
}

TEST(IrDiffChangesTest, OperandsReordered) {
  GraphBuilder head = Base();
  *head["c"].mutable_args(0) = N("b");
  *head["c"].mutable_args(1) = N("a");
  const v1::NodeChange c = OnlyModified(Diff(Base().graph(), head.graph()));
  EXPECT_EQ(c.change(), "operands reordered");
  EXPECT_EQ(c.confidence(), 1.0);
}

// A Linear that lost its bias: addmm(bias, x, w) → mm(x, w) drops an operand; the other two are
// the same and in the same order, which is not a reordering.
TEST(IrDiffChangesTest, ADroppedOperandIsRemovedNotReordered) {
  GraphBuilder base;
  base.In("x").In("w").In("bias");
  base.Op("y", "aten.addmm.default", {N("bias"), N("x"), N("w")}, 10);
  base.Out({"y"});
  GraphBuilder head;
  head.In("x").In("w");
  head.Op("y", "aten.mm.default", {N("x"), N("w")}, 10);
  head.Out({"y"});
  const v1::IrDiffSection s = Diff(base.graph(), head.graph());
  ASSERT_EQ(s.modified_size(), 1);
  EXPECT_THAT(s.modified(0).kinds(), ElementsAre("op_changed", "operand_removed"));
  EXPECT_THAT(s.modified(0).change(), HasSubstr("operand removed (bias)"));
  EXPECT_THAT(s.modified(0).change(), ::testing::Not(HasSubstr("reordered")));
  ASSERT_EQ(s.removed_size(), 1);
  EXPECT_EQ(s.removed(0).node(), "bias");
}

TEST(IrDiffChangesTest, OperandChanged) {
  GraphBuilder head = Base();
  *head["c"].mutable_args(1) = N("x");  // add(a, b) → add(a, x): b stays, now unused
  const v1::IrDiffSection s = Diff(Base().graph(), head.graph());
  ASSERT_EQ(s.modified_size(), 1);
  EXPECT_EQ(s.modified(0).change(), "operand changed (arg 1: b \u2192 x)");
  EXPECT_THAT(s.modified(0).kinds(), ElementsAre("operand_changed"));
}

TEST(IrDiffChangesTest, LiteralChanged) {
  GraphBuilder head = Base();
  *head["m"].mutable_args(1) = List({L("1")});
  const v1::NodeChange c = OnlyModified(Diff(Base().graph(), head.graph()));
  EXPECT_EQ(c.change(), "literal changed (arg 1: [-1] \u2192 [1])");
  EXPECT_THAT(c.kinds(), ElementsAre("literal_changed"));
  EXPECT_EQ(c.confidence(), 1.0);  // literals stay out of anchors: still a unique pairing
}

TEST(IrDiffChangesTest, KwargsChanged) {
  GraphBuilder base = Base();
  (*base["m"].mutable_kwargs())["dtype"] = L("torch.float32");
  GraphBuilder head = Base();
  (*head["m"].mutable_kwargs())["dtype"] = L("torch.bfloat16");
  (*head["m"].mutable_kwargs())["keepdim"] = L("True");
  const v1::NodeChange c = OnlyModified(Diff(base.graph(), head.graph()));
  EXPECT_EQ(
      c.change(),
      "kwargs changed (dtype: torch.float32 \u2192 torch.bfloat16, keepdim: \u2014 \u2192 True)");
  EXPECT_THAT(c.kinds(), ElementsAre("kwargs_changed"));
}

TEST(IrDiffChangesTest, TensorMetaChanged) {
  GraphBuilder head = Base();
  head["a"].mutable_meta()->set_dtype("bf16");
  head["b"].mutable_meta()->set_shape(0, "16");  // a new shape brings new strides: not reported
  head["b"].mutable_meta()->set_stride(0, "2");
  head["c"].mutable_meta()->set_stride(0, "2");
  const v1::IrDiffSection s = Diff(Base().graph(), head.graph());
  std::vector<std::string> changes;
  for (const v1::NodeChange& c : s.modified())
    changes.push_back(absl::StrCat(c.node(), ": ", c.change()));
  EXPECT_THAT(changes, ElementsAre("a: dtype changed (f32 \u2192 bf16)",
                                   "b: shape changed ([8] \u2192 [16])",
                                   "c: stride changed ([1] \u2192 [2])"));
}

TEST(IrDiffChangesTest, SeveralChangesOfOneNodeAreJoined) {
  GraphBuilder head = Base();
  *head["m"].mutable_args(1) = List({L("0")});
  head["m"].mutable_meta()->set_dtype("f16");
  const v1::NodeChange c = OnlyModified(Diff(Base().graph(), head.graph()));
  EXPECT_EQ(c.change(), "literal changed (arg 1: [-1] \u2192 [0]); dtype changed (f32 \u2192 f16)");
  EXPECT_THAT(c.kinds(), ElementsAre("literal_changed", "dtype_changed"));
}

// An inserted node is one added node: its user now reads it, which the addition explains.
TEST(IrDiffChangesTest, AddedAndRemovedNodesExplainTheirNeighbours) {
  GraphBuilder head;
  head.In("x").In("w");
  head.Op("a", "aten.relu.default", {N("x")}, 10);
  head.Op("a2", "aten.mul.Tensor", {N("a"), L("2")}, 20);  // inserted between a and c
  head.Op("c", "aten.add.Tensor", {N("a2"), N("w")}, 12);  // b (tanh) removed: c reads w
  head.Op("m", "aten.mean.dim", {N("c"), List({L("-1")})}, 13);
  head.Out({"m"});
  const v1::IrDiffSection s = Diff(Base().graph(), head.graph());
  ASSERT_EQ(s.added_size(), 1);
  EXPECT_EQ(s.added(0).node(), "a2");
  EXPECT_EQ(s.added(0).change(), "added");
  EXPECT_EQ(s.added(0).location().line(), 20u);
  ASSERT_EQ(s.removed_size(), 1);
  EXPECT_EQ(s.removed(0).node(), "b");
  EXPECT_EQ(s.removed(0).location().line(), 11u);  // where it was, in the base
  EXPECT_EQ(s.modified_size(), 0);
  EXPECT_DOUBLE_EQ(s.match_coverage(), 6.0 / 7.0);
}

// A graph one side does not have (a backward graph, say) is all added nodes.
TEST(IrDiffChangesTest, AGraphWithoutPartnerIsAllAdded) {
  const v1::SessionCapture base = CaptureOf(Base().graph());
  v1::SessionCapture head = CaptureOf(Base().graph());
  v1::Graph* backward = head.add_graphs();
  *backward = head.graphs(0);
  backward->set_id("0/0/inductor_post_grad_graph#2");
  head.mutable_compiles(0)->add_graph_ids(backward->id());
  const v1::IrDiffSection s =
      ::cl::testing::RunPassOk(IrDiffPass(), head, nullptr, &base).ir_diff();
  EXPECT_EQ(s.added_size(), 7);
  EXPECT_EQ(s.removed_size() + s.modified_size(), 0);
  EXPECT_EQ(s.added(0).confidence(), 1.0);
  EXPECT_DOUBLE_EQ(s.match_coverage(), 0.5);
  ASSERT_EQ(s.frames_size(), 1);
  EXPECT_EQ(s.frames(0).head_nodes(), 14u);
}

TEST(IrDiffChangesTest, FramesWithoutACommonStageSayWhy) {
  v1::SessionCapture base = CaptureOf(Base().graph());
  const v1::SessionCapture head = CaptureOf(Base().graph());
  base.mutable_graphs(0)->set_stage(v1::Graph::DYNAMO);
  const v1::IrDiffSection s =
      ::cl::testing::RunPassOk(IrDiffPass(), head, nullptr, &base).ir_diff();
  EXPECT_EQ(s.status(), v1::SKIPPED);
  EXPECT_EQ(s.reason(), "no frame has graphs of one stage on both sides");
  ASSERT_EQ(s.frames_size(), 1);
  EXPECT_EQ(s.frames(0).note(), "no graph stage on both sides (base: DYNAMO; head: POST_GRAD)");
}

// Literals come from the capture: a detail shows a bounded piece of one.
TEST(IrDiffChangesTest, LongLiteralsAreClipped) {
  GraphBuilder head = Base();
  *head["m"].mutable_args(1) = L(std::string(500, '9'));
  const v1::NodeChange c = OnlyModified(Diff(Base().graph(), head.graph()));
  EXPECT_THAT(c.change(), HasSubstr("\u2026"));
  EXPECT_LT(c.change().size(), 160u);
}

}  // namespace
}  // namespace cl

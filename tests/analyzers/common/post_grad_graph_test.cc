// PostGradGraph's walk of "the users of a node through views", which fusion (every view) and the
// roofline's pointwise runs (only the views inside a run) share.
#include "analyzers/common/post_grad_graph.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Adds `name = target(inputs...)` to `graph`; a list of names is one list argument.
void Add(v1::Graph* graph, const std::string& name, const std::string& target,
         const std::vector<std::vector<std::string>>& inputs) {
  v1::Node* node = graph->add_nodes();
  node->set_name(name);
  node->set_op(target.empty() ? "placeholder" : "call_function");
  node->set_target(target);
  for (const std::vector<std::string>& input : inputs) {
    v1::Arg* arg = node->add_args();
    if (input.size() == 1) {
      arg->set_node(input[0]);
      continue;
    }
    for (const std::string& item : input) arg->mutable_list()->add_items()->set_node(item);
  }
}

std::vector<std::string> Names(const std::vector<const v1::Node*>& nodes) {
  std::vector<std::string> out;
  for (const v1::Node* n : nodes) out.push_back(n->name());
  return out;
}

// x feeds a relu directly and two views; the view's own view feeds an mm, and the mm reads the
// first view twice (a view reached twice is walked once).
v1::Graph Views() {
  v1::Graph g;
  Add(&g, "x", "", {});
  Add(&g, "w", "", {});
  Add(&g, "relu", "aten.relu.default", {{"x"}});
  Add(&g, "view", "aten.view.default", {{"x"}});
  Add(&g, "t", "aten.permute.default", {{"view"}});
  Add(&g, "mm", "aten.mm.default", {{"t"}, {"view"}});
  Add(&g, "add", "aten.add.Tensor", {{"view"}, {"w"}});
  return g;
}

TEST(PostGradGraphTest, UsersThroughEveryViewAreEachUserOnce) {
  const v1::Graph graph = Views();
  const PostGradGraph g(graph);
  // In the walk's order: x's own users, then (last in, first out) what the views lead to.
  EXPECT_THAT(Names(g.UsersThroughViews(*g.Find("x"))), ElementsAre("relu", "mm", "add"));
  EXPECT_THAT(Names(g.UsersThroughViews(*g.Find("view"))), ElementsAre("mm", "add"));
  EXPECT_THAT(g.UsersThroughViews(*g.Find("mm")), IsEmpty());
}

TEST(PostGradGraphTest, AViewNotLookedThroughIsAUser) {
  const v1::Graph graph = Views();
  const PostGradGraph g(graph);
  // Only `view` is inside (as a pointwise run's member would be): the permute is a reader.
  const auto only_view = [](const v1::Node& view) { return view.name() == "view"; };
  EXPECT_THAT(Names(g.UsersThroughViews(*g.Find("x"), only_view)),
              ElementsAre("relu", "t", "mm", "add"));
  const auto none = [](const v1::Node&) { return false; };
  EXPECT_THAT(Names(g.UsersThroughViews(*g.Find("x"), none)), ElementsAre("relu", "view"));
}

// Views that each name the two views before them (a list argument) reach the end along 2^40
// paths: the walk visits each node once, and the end's one user is there once.
TEST(PostGradGraphTest, ViewsNamingSeveralNodesAreWalkedOnce) {
  v1::Graph graph;
  Add(&graph, "x", "", {});
  std::vector<std::string> previous = {"x", "x"};
  for (int layer = 0; layer < 40; ++layer) {
    const std::string a = absl::StrCat("a", layer), b = absl::StrCat("b", layer);
    Add(&graph, a, "aten.view.default", {previous});
    Add(&graph, b, "aten.view.default", {previous});
    previous = {a, b};
  }
  Add(&graph, "sum", "aten.add.Tensor", {{previous[0]}, {previous[1]}});
  const PostGradGraph g(graph);
  EXPECT_THAT(Names(g.UsersThroughViews(*g.Find("x"))), ElementsAre("sum"));
}

}  // namespace
}  // namespace cl

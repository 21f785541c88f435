// LoweredGraphChoice: which post-grad graphs the fusion and roofline passes read, decided as each
// graph is added, and which graphs a later one displaces (the importer frees those graphs' nodes).
#include "capture/torch_trace/lowered_graphs.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Adds one graph; returns what became unread.
std::vector<int> Add(LoweredGraphChoice& choice, uint32_t frame, int compile, int graph,
                     absl::string_view event = "inductor_post_grad_graph") {
  std::vector<int> unread;
  choice.Add({frame, compile, graph, event}, &unread);
  return unread;
}

TEST(LoweredGraphChoiceTest, ATrainingCompileKeepsItsForwardAndBackward) {
  LoweredGraphChoice choice;
  EXPECT_THAT(Add(choice, 0, 0, 0), IsEmpty());
  EXPECT_THAT(Add(choice, 0, 0, 1), IsEmpty());
  EXPECT_THAT(choice.Chosen(), ElementsAre(0, 1));
}

TEST(LoweredGraphChoiceTest, RecompilesOfAFrameAreNotRead) {
  LoweredGraphChoice choice;
  Add(choice, 7, 0, 0);
  EXPECT_THAT(Add(choice, 7, 1, 1), ElementsAre(1));
  EXPECT_THAT(Add(choice, 7, 2, 2), ElementsAre(2));
  // Another frame has its own first compile.
  EXPECT_THAT(Add(choice, 8, 3, 3), IsEmpty());
  EXPECT_THAT(choice.Chosen(), ElementsAre(0, 3));
  // What would be unread at once need not be parsed: a recompile's graph, a before_ copy.
  EXPECT_FALSE(choice.WouldRead({7, 4, 4, "inductor_post_grad_graph"}));
  EXPECT_FALSE(choice.WouldRead({9, 4, 4, "before_post_grad_graph"}));
  EXPECT_TRUE(choice.WouldRead({7, 0, 4, "inductor_post_grad_graph"}));
  EXPECT_TRUE(choice.WouldRead({9, 4, 4, "inductor_post_grad_graph"}));
}

// A frame's first compile can lower after a later one did (its backward runs after the next
// forward): the earlier compile displaces the later one's graphs, and keeps its own.
TEST(LoweredGraphChoiceTest, AnEarlierCompileDisplacesALaterOne) {
  LoweredGraphChoice choice;
  Add(choice, 0, 1, 0);
  Add(choice, 0, 1, 1);
  EXPECT_THAT(Add(choice, 0, 0, 2), ElementsAre(0, 1));
  EXPECT_THAT(Add(choice, 0, 1, 3), ElementsAre(3));
  EXPECT_THAT(choice.Chosen(), ElementsAre(2));
}

// A before_ copy is never read, and a compile that logged only one (cut short in its post-grad
// passes) leaves the frame to the next compile that lowered.
TEST(LoweredGraphChoiceTest, BeforeCopiesAreNeverRead) {
  LoweredGraphChoice choice;
  EXPECT_THAT(Add(choice, 0, 0, 0, "before_post_grad_graph"), ElementsAre(0));
  EXPECT_THAT(Add(choice, 0, 1, 1, "before_post_grad_graph"), ElementsAre(1));
  EXPECT_THAT(Add(choice, 0, 1, 2, "after_post_grad_graph"), IsEmpty());
  EXPECT_THAT(choice.Chosen(), ElementsAre(2));
}

// Newer torch logs the lowered graph as inductor_post_grad_graph and as after_post_grad_graph: the
// preferred event wins whichever comes first, and every graph of it is read.
TEST(LoweredGraphChoiceTest, ThePreferredEventIsRead) {
  LoweredGraphChoice choice;
  Add(choice, 0, 0, 0, "after_post_grad_graph");
  EXPECT_THAT(Add(choice, 0, 0, 1, "inductor_post_grad_graph"), ElementsAre(0));
  EXPECT_THAT(Add(choice, 0, 0, 2, "after_post_grad_graph"), ElementsAre(2));
  EXPECT_THAT(Add(choice, 0, 0, 3, "inductor_post_grad_graph"), IsEmpty());
  EXPECT_THAT(choice.Chosen(), ElementsAre(1, 3));
}

// Graph ids that name no event torch lowers under (a hand-written capture): the compile's last.
TEST(LoweredGraphChoiceTest, OfOtherEventsTheLastGraphIsRead) {
  LoweredGraphChoice choice;
  Add(choice, 0, 0, 0, "");
  EXPECT_THAT(Add(choice, 0, 0, 1, ""), ElementsAre(0));
  EXPECT_THAT(Add(choice, 0, 0, 2, "after_recompile_post_grad"), ElementsAre(1));
  EXPECT_THAT(Add(choice, 0, 0, 3, ""), ElementsAre(3));
  EXPECT_THAT(choice.Chosen(), ElementsAre(2));
}

TEST(LoweredGraphChoiceTest, ChosenIsInCompileOrder) {
  LoweredGraphChoice choice;
  Add(choice, 5, 2, 0);
  Add(choice, 9, 1, 1);
  Add(choice, 5, 2, 2);
  EXPECT_THAT(choice.Chosen(), ElementsAre(1, 0, 2));
}

}  // namespace
}  // namespace cl

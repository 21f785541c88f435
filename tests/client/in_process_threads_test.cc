// InProcessThreads: an in-process analysis of a small session runs on one thread (starting and
// coordinating workers would cost more than the passes), a large one on every hardware thread,
// and what the user asks for is what it gets.
#include <string>

#include "client/analyze_client.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

v1::SessionCapture WithNodes(int nodes, int compiles) {
  v1::SessionCapture c;
  for (int i = 0; i < compiles; ++i) c.add_compiles()->set_id("0/" + std::to_string(i));
  v1::Graph* g = c.add_graphs();
  for (int i = 0; i < nodes; ++i) g->add_nodes()->set_name("n" + std::to_string(i));
  return c;
}

TEST(InProcessThreadsTest, OneForASmallSessionEveryThreadForALargeOne) {
  EXPECT_EQ(InProcessThreads({WithNodes(9000, 40), std::nullopt}, 0), 1);
  EXPECT_EQ(InProcessThreads({WithNodes(20000, 40), std::nullopt}, 0), 0) << "many nodes";
  EXPECT_EQ(InProcessThreads({WithNodes(10, 200), std::nullopt}, 0), 0) << "many compiles";
  EXPECT_EQ(InProcessThreads({WithNodes(10, 1), WithNodes(30000, 1)}, 0), 0) << "a large base";
}

TEST(InProcessThreadsTest, WhatTheUserAsksForIsKept) {
  EXPECT_EQ(InProcessThreads({WithNodes(10, 1), std::nullopt}, 4), 4);
  EXPECT_EQ(InProcessThreads({WithNodes(30000, 1), std::nullopt}, 1), 1);
}

}  // namespace
}  // namespace cl

// cl-server's heap setting (service/heap_init.h), in a binary that links service/heap_init.cc and
// mimalloc as cl-server does. Registered twice (tests/service/CMakeLists.txt): as is, and with
// MIMALLOC_DECOMMIT_DELAY=40 in the environment, which must win.
#include "service/heap_init.h"

#include <mimalloc.h>

#include <cstdlib>

#include "gtest/gtest.h"

namespace cl {
namespace {

TEST(ServerHeap, GivesFreedMemoryBackAfterTheServersDelayUnlessTheEnvironmentSetsOne) {
  const char* set = std::getenv("MIMALLOC_DECOMMIT_DELAY");
  const long expected = set != nullptr ? std::atol(set) : kServerDecommitDelayMs;
  EXPECT_EQ(mi_option_get(mi_option_decommit_delay), expected);
  EXPECT_NE(mi_option_get(mi_option_decommit_delay), 25) << "mimalloc's own default";
}

}  // namespace
}  // namespace cl

// Compiled into cl-server alone (service/CMakeLists.txt), where mimalloc is its allocator: how soon
// the heap gives memory it has freed back to the system (service/heap_init.h).
#include "service/heap_init.h"

#include <cstdlib>

#if CL_HAVE_MIMALLOC
#include <mimalloc.h>
#endif

namespace cl {
namespace {

#if CL_HAVE_MIMALLOC
// Priority 101: before the C++ static initializers, which run at the default priority.
__attribute__((constructor(101))) void SetServerDecommitDelay() {
  if (std::getenv("MIMALLOC_DECOMMIT_DELAY") != nullptr) return;  // the operator decides
  mi_option_set(mi_option_decommit_delay, kServerDecommitDelayMs);
}
#endif

}  // namespace
}  // namespace cl

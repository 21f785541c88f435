// Compiled into cl-client alone (client/CMakeLists.txt): the 2 MiB pages decided before the
// static initializers allocate, so that the heap's first segments get them too, and given up once
// the inputs turn out too large for the machine's free blocks (client/huge_pages.h).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "client/huge_pages.h"

#if CL_HAVE_MIMALLOC
#include <mimalloc.h>
#include <sys/mman.h>
#endif

namespace cl {
namespace {

#if CL_HAVE_MIMALLOC
bool asked = false;  // by DecideHugePages
uint64_t free_huge_bytes = 0;

// Priority 101: before the C++ static initializers, which run at the default priority.
__attribute__((constructor(101))) void DecideHugePages() {
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") != nullptr) return;  // the user decides
  free_huge_bytes = ReadFreeHugeBlockBytes();
  if (!HugePagesFit(0, free_huge_bytes)) return;
  mi_option_set_enabled(mi_option_large_os_pages, true);
  // Nor is what the heap has given back to the kernel, which would split a 2 MiB page into 4 KiB
  // ones to fault in again: a cl-client command is over in seconds, and exits with its heap.
  if (std::getenv("MIMALLOC_ALLOW_DECOMMIT") == nullptr)
    mi_option_disable(mi_option_allow_decommit);
  asked = true;
  // mimalloc made its first segment when it was loaded, before this ran: the segments it makes
  // from now on are madvised for 2 MiB pages, and so is that one here, found by a block in it
  // (segments are aligned to their 32 MiB size). Its untouched 2 MiB ranges fault in whole.
  constexpr uintptr_t kSegmentBytes = uintptr_t{32} << 20;
  void* probe = mi_malloc(8);
  const uintptr_t segment = reinterpret_cast<uintptr_t>(probe) & ~(kSegmentBytes - 1);
  madvise(reinterpret_cast<void*>(segment), kSegmentBytes, MADV_HUGEPAGE);
  mi_free(probe);
}
#endif

}  // namespace

void FitHugePagesTo(const std::vector<std::string>& paths) {
#if CL_HAVE_MIMALLOC
  if (asked && !HugePagesFit(InputBytes(paths), free_huge_bytes)) {
    mi_option_set_enabled(mi_option_large_os_pages, false);
    if (std::getenv("MIMALLOC_ALLOW_DECOMMIT") == nullptr)
      mi_option_enable(mi_option_allow_decommit);
    asked = false;
  }
#else
  (void)paths;
#endif
}

}  // namespace cl

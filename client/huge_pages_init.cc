// Compiled into cl-client alone (client/CMakeLists.txt): the 2 MiB pages taken once the inputs are
// known, where they are large enough to gain from them and the machine's free blocks hold them
// (client/huge_pages.h).
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

void FitHugePagesTo(const std::vector<std::string>& paths) {
#if CL_HAVE_MIMALLOC
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") != nullptr) return;  // the user decides
  const uint64_t input_bytes = InputBytes(paths);
  if (input_bytes < kHugePagesMinInputBytes) return;  // before reading /proc for nothing
  if (!HugePagesFit(input_bytes, ReadFreeHugeBlockBytes())) return;
  mi_option_set_enabled(mi_option_large_os_pages, true);
  // Nor is what the heap has given back to the kernel, which would split a 2 MiB page into 4 KiB
  // ones to fault in again: a cl-client command is over in seconds, and exits with its heap.
  if (std::getenv("MIMALLOC_ALLOW_DECOMMIT") == nullptr)
    mi_option_disable(mi_option_allow_decommit);
  // The segments mimalloc makes from now on are madvised for 2 MiB pages, and so is the one it
  // made when it was loaded, found here by a block in it (segments are aligned to their 32 MiB
  // size): its 2 MiB ranges the static initializers did not touch fault in whole.
  constexpr uintptr_t kSegmentBytes = uintptr_t{32} << 20;
  void* probe = mi_malloc(8);
  const uintptr_t segment = reinterpret_cast<uintptr_t>(probe) & ~(kSegmentBytes - 1);
  madvise(reinterpret_cast<void*>(segment), kSegmentBytes, MADV_HUGEPAGE);
  mi_free(probe);
#else
  (void)paths;
#endif
}

}  // namespace cl

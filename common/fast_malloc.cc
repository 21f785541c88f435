// Compiled into the one-shot binaries that link mimalloc and ask for it (CMakeLists.txt,
// cl_binary's LARGE_PAGES: cl-client): asks mimalloc for 2 MiB pages, before main runs. Not into
// cl-server: mimalloc gives no large page back to the system, so a server would keep its peak for
// good.
//
// An import is allocation-bound, and most of the memory it takes is fresh: on the 73 MB trace, a
// third of `cl-client analyze`'s CPU was the kernel faulting in 4 KiB pages one at a time, and
// mimalloc initialising them. With large OS pages (transparent huge pages where the kernel allows
// them, madvise'd; plain pages where it does not) the same run takes about half the CPU for 4 %
// more peak RSS (bench/README.md, "Against tlparse"). MIMALLOC_LARGE_OS_PAGES in the environment
// still decides, either way.
#include <mimalloc.h>

#include <cstdlib>

namespace {

__attribute__((constructor)) void UseLargeOsPages() {
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") == nullptr)
    mi_option_set_enabled(mi_option_large_os_pages, true);
}

}  // namespace

// Whether cl-client gets 2 MiB pages (transparent huge pages) for its heap.
//
// An import is allocation-bound and nearly all the memory it takes is fresh: on a 73 MB trace the
// kernel faulting it in 4 KiB pages at a time is a third of `analyze`'s CPU, more on a virtual
// machine where a fault is dear; with 2 MiB pages `analyze` takes about two thirds of the CPU, and
// a log of a few hundred KB a quarter less too (bench/README.md, "Link choices"). But under the
// kernel's THP defrag=madvise (Debian's default) a madvised fault with no free 2 MiB block
// compacts memory first, and on a machine whose memory is fragmented that stall costs more than
// the pages save; and on a log of a few KB the one 2 MiB page the heap would fault in costs more
// to clear than the run's 4 KiB faults together. So once cl-client knows its inputs
// (huge_pages_init.cc) it asks mimalloc for large OS pages only for inputs of
// kHugePagesMinInputBytes or more, and only when /proc/buddyinfo shows at least 1 GiB free in
// blocks of 2 MiB or more, four times the inputs' bytes (what an import may take), so that no
// fault has to compact. MIMALLOC_LARGE_OS_PAGES in the environment still decides, either way;
// without mimalloc (the sanitizer tree) nothing changes. Not cl-server: mimalloc returns no large
// page to the system, so a server would keep its peak for good.
#ifndef CLIENT_HUGE_PAGES_H_
#define CLIENT_HUGE_PAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cl {

// The bytes /proc/buddyinfo's text says are free in blocks of 2 MiB or more (order 9 and up, of
// `page_bytes` pages), all zones together; 0 for text that does not read as buddyinfo.
uint64_t FreeHugeBlockBytes(absl::string_view buddyinfo, uint64_t page_bytes);

// Below this much log, 4 KiB pages (bench/README.md, "Every log of the corpus").
inline constexpr uint64_t kHugePagesMinInputBytes = uint64_t{1} << 20;

// Whether 2 MiB pages suit a run over `input_bytes` of log, `free_huge_bytes` being
// FreeHugeBlockBytes of this machine: an input of kHugePagesMinInputBytes or more, 1 GiB free at
// least, and four times the input.
bool HugePagesFit(uint64_t input_bytes, uint64_t free_huge_bytes);

// About how many bytes of log `paths` hold: a file's size (eight times it for a .gz, about what
// torch's logs inflate to), a directory's files' together.
uint64_t InputBytes(const std::vector<std::string>& paths);

// FreeHugeBlockBytes of this machine's /proc/buddyinfo (0 where it does not read).
uint64_t ReadFreeHugeBlockBytes();

// cl-client's own (huge_pages_init.cc, compiled into it alone, where mimalloc is its allocator):
// once the inputs are known, takes 2 MiB pages for the rest of the run where they fit `paths`
// (HugePagesFit). Elsewhere it does nothing.
void FitHugePagesTo(const std::vector<std::string>& paths);

}  // namespace cl

#endif  // CLIENT_HUGE_PAGES_H_

// How soon cl-server's heap (mimalloc) gives the memory it has freed back to the system.
//
// mimalloc keeps each thread's freed spans committed for `decommit_delay` ms (25 by default), and
// gives them back only when that thread next allocates a page after the delay. A raw log's import
// runs on its import thread, its analysis on an analysis thread and gRPC's reads on gRPC's: what
// one of them frees the others never reuse, and a thread that has gone idle never gives it back.
// With 5 ms a 73 MB log's upload peaked at 66 MiB against 71 (12 alternating rounds, the same
// wall time), and cl-load's hero sessions at 83 against 91-97 MiB for the same server CPU a
// session; at 0-3 ms the heap gives back pages it needs again a moment later, and the server took
// up to half as much CPU again (bench/README.md, "The upload"). MIMALLOC_DECOMMIT_DELAY in the
// environment still decides.
#ifndef SERVICE_HEAP_INIT_H_
#define SERVICE_HEAP_INIT_H_

namespace cl {

inline constexpr long kServerDecommitDelayMs = 5;

}  // namespace cl

#endif  // SERVICE_HEAP_INIT_H_

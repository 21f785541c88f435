// What /proc says of a process: CPU seconds used and memory held, for cl-load's cost per session
// (a server's CPU seconds over the sessions it answered) and its RSS figures.
#ifndef BENCH_LOAD_PROC_STATS_H_
#define BENCH_LOAD_PROC_STATS_H_

#include <sys/types.h>

namespace cl::load {

struct ProcStats {
  double cpu_seconds = 0;
  double rss_mib = 0;
  double hwm_mib = 0;
};

// `pid`'s user + system CPU time (/proc/PID/stat), VmRSS and VmHWM (/proc/PID/status); zeros for
// what cannot be read.
ProcStats ReadProc(pid_t pid);
double SelfCpuSeconds();  // this process's

}  // namespace cl::load

#endif  // BENCH_LOAD_PROC_STATS_H_

// What /proc says of a process: CPU seconds used and memory held, for cl-load's cost per session
// (a server's CPU seconds over the sessions it answered) and its RSS figures, and for the tests
// that bound a server's peak memory (hostile_server_test).
#ifndef TESTS_TESTING_PROC_STATS_H_
#define TESTS_TESTING_PROC_STATS_H_

#include <sys/types.h>

namespace cl::testing {

struct ProcStats {
  double cpu_seconds = 0;
  double rss_mib = 0;
  double hwm_mib = 0;
};

// `pid`'s user + system CPU time (/proc/PID/stat), VmRSS and VmHWM (/proc/PID/status); zeros for
// what cannot be read.
ProcStats ReadProc(pid_t pid);
double SelfCpuSeconds();  // this process's

}  // namespace cl::testing

#endif  // TESTS_TESTING_PROC_STATS_H_

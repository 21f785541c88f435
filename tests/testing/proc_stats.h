// What /proc says of a process: CPU seconds used and memory held, for cl-load's cost per session
// (a server's CPU seconds over the sessions it answered) and its RSS figures, and for the tests
// that bound a server's peak memory (hostile_server_test).
#ifndef TESTS_TESTING_PROC_STATS_H_
#define TESTS_TESTING_PROC_STATS_H_

#include <sys/types.h>

// GCC says __SANITIZE_ADDRESS__; clang 14 only answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define CL_TESTING_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CL_TESTING_ASAN 1
#endif
#endif

namespace cl::testing {

// True in an AddressSanitizer build. Its allocator holds freed memory in a quarantine (256 MiB by
// default) and keeps every size class's pages: a process's RSS there measures ASan, not our code.
// Tests that bound RSS check it in the release build; LeakSanitizer checks for leaks here.
#if defined(CL_TESTING_ASAN)
inline constexpr bool kAsan = true;
#else
inline constexpr bool kAsan = false;
#endif

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

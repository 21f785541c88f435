// cl-load's hostile phases (issue 21): what a small hostile request costs cl-server now, and how
// soon a normal session is answered again after it.
//
//   amplify  one TORCH_TRACE log whose str table interns a long file name that every frame names
//            by index (1.1 MB on the wire; 2.1 GB on the server before names were clipped)
//   idle     --max_inflight streams that send the options and then nothing, holding every slot
//
// Each reports the server's peak RSS (VmHWM) and the seconds from the hostile request until a
// normal session (the hero) is answered OK, retrying RESOURCE_EXHAUSTED as cl-client does.
#ifndef BENCH_LOAD_HOSTILE_H_
#define BENCH_LOAD_HOSTILE_H_

#include <string>
#include <utility>
#include <vector>

#include "bench/load/load.h"

namespace cl::load {

struct HostileFigures {
  std::string code;            // how the hostile call ended (OK, RESOURCE_EXHAUSTED, ...)
  double hostile_seconds = 0;  // from its start until it ended
  double normal_seconds = 0;   // from the hostile request until a normal session's answer
  int normal_attempts = 0;     // calls that took (refusals retried)
  double peak_rss_mib = 0;     // the server's VmHWM at the end
  double rss_before_mib = 0;   // its VmRSS before the hostile request
};

// Against a running cl-server at `address` (process `pid`), `normal` the session it must answer.
HostileFigures RunAmplify(const std::string& address, pid_t pid, const Session& normal,
                          size_t name_bytes, int frames);
HostileFigures RunIdle(const std::string& address, pid_t pid, const Session& normal, int streams,
                       const Pacing& pacing);

}  // namespace cl::load

#endif  // BENCH_LOAD_HOSTILE_H_

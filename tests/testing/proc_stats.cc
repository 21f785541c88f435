#include "tests/testing/proc_stats.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cl::testing {

ProcStats ReadProc(pid_t pid) {
  ProcStats p;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Fields after the command (which may hold spaces) start after the last ')'.
  const size_t close = text.rfind(')');
  if (close != std::string::npos) {
    std::vector<std::string> f = absl::StrSplit(text.substr(close + 2), ' ');
    double utime = 0, stime = 0;
    if (f.size() > 12 && absl::SimpleAtod(f[11], &utime) && absl::SimpleAtod(f[12], &stime)) {
      p.cpu_seconds = (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
  }
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(status, line);) {
    double kib = 0;
    absl::string_view v = line;
    if (absl::ConsumePrefix(&v, "VmRSS:") &&
        absl::SimpleAtod(absl::StripSuffix(absl::StripAsciiWhitespace(v), " kB"), &kib)) {
      p.rss_mib = kib / 1024;
    } else if (absl::ConsumePrefix(&v, "VmHWM:") &&
               absl::SimpleAtod(absl::StripSuffix(absl::StripAsciiWhitespace(v), " kB"), &kib)) {
      p.hwm_mib = kib / 1024;
    }
  }
  return p;
}

double SelfCpuSeconds() { return ReadProc(getpid()).cpu_seconds; }

}  // namespace cl::testing

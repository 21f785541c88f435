#include "client/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "absl/strings/str_cat.h"

namespace cl {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

std::atomic<pid_t> child_pid{0};

// Passes a signal someone sent this process (kill: SI_USER, sigqueue: SI_QUEUE) on to the child. A
// signal the terminal raised (SI_KERNEL) went to the child as well, so it is not sent again.
void Forward(int signo, siginfo_t* info, void*) {
  const pid_t pid = child_pid.load();
  if (pid <= 0) return;
  if (info != nullptr && info->si_code != SI_USER && info->si_code != SI_QUEUE) return;
  kill(pid, signo);
}

}  // namespace

absl::StatusOr<ChildExit> RunChild(const std::vector<std::string>& argv,
                                   const std::vector<std::pair<std::string, std::string>>& env) {
  if (argv.empty()) return absl::InvalidArgumentError("no command to run");
  // The exec's errno comes back through a pipe that closes on a successful exec.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0)
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));

  struct sigaction forward = {}, previous[std::size(kForwarded)] = {};
  forward.sa_sigaction = Forward;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  for (size_t i = 0; i < std::size(kForwarded); ++i)
    sigaction(kForwarded[i], &forward, &previous[i]);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    // The child: the default dispositions back, then exec.
    for (size_t i = 0; i < std::size(kForwarded); ++i) signal(kForwarded[i], SIG_DFL);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    execvp(args[0], args.data());
    const int error = errno;
    (void)!write(report[1], &error, sizeof error);
    _exit(127);
  }
  close(report[1]);
  auto restore = [&] {
    child_pid.store(0);
    for (size_t i = 0; i < std::size(kForwarded); ++i)
      sigaction(kForwarded[i], &previous[i], nullptr);
  };
  if (pid < 0) {
    close(report[0]);
    restore();
    return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  }
  child_pid.store(pid);
  int exec_error = 0;
  ssize_t n;
  do {
    n = read(report[0], &exec_error, sizeof exec_error);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  restore();
  if (n == sizeof exec_error) {
    return absl::NotFoundError(absl::StrCat(argv[0], ": cannot run it: ", strerror(exec_error)));
  }
  ChildExit out;
  if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
    out.code = 128 + out.signal;
  } else {
    out.code = WEXITSTATUS(status);
  }
  return out;
}

}  // namespace cl

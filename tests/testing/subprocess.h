// Runs the project's real binaries from tests: a child with its stderr on a pipe, so a test can
// read the address a server printed, send it a signal and wait for its exit code.
#ifndef TESTS_TESTING_SUBPROCESS_H_
#define TESTS_TESTING_SUBPROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cl::testing {

class Subprocess {
 public:
  // Starts argv[0] with `argv`; stdout goes to `stdout_path` when given (else /dev/null).
  explicit Subprocess(const std::vector<std::string>& argv, const std::string& stdout_path = "");
  ~Subprocess();  // kills the child if it is still running

  // Reads stderr up to the next newline (without it); empty at end of stream.
  std::string ReadStderrLine();
  // The next stderr line without `prefix` (cl-server's "cl-server: listening on " and
  // "cl-server: metrics on "), or an error quoting the line that came instead.
  absl::StatusOr<std::string> ReadAnnounced(absl::string_view prefix);
  // The rest of stderr, until the child closes it.
  std::string ReadStderrToEnd();
  void Signal(int signal);
  // The exit code, or 128 + signal number when a signal ended it.
  int Wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  std::string buffer_;
};

struct RunResult {
  int exit_code = -1;
  std::string stdout_text;
  std::string stderr_text;
};

// Runs a command to completion.
RunResult RunCommand(const std::vector<std::string>& argv);

}  // namespace cl::testing

#endif  // TESTS_TESTING_SUBPROCESS_H_

// Running a user's command under cl-client run: it inherits the terminal (stdin, stdout, stderr)
// and the environment plus what run sets (TORCH_TRACE), and the signals cl-client is sent reach it.
#ifndef CLIENT_CHILD_PROCESS_H_
#define CLIENT_CHILD_PROCESS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace cl {

struct ChildExit {
  int code = 0;    // the exit status, or 128 + the signal that ended it (as a shell reports it)
  int signal = 0;  // the signal that ended it; 0 when it exited
};

// Runs `argv` (argv[0] looked up on PATH) with `env` added to this process's environment, and
// waits for it. While it runs, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process (kill,
// a CI runner cancelling a job) are passed on to it; the terminal's own Ctrl-C reaches it
// directly, as it is in the terminal's foreground process group, and is not sent twice.
// NOT_FOUND when the command cannot be started (no such program, not executable).
absl::StatusOr<ChildExit> RunChild(const std::vector<std::string>& argv,
                                   const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace cl

#endif  // CLIENT_CHILD_PROCESS_H_

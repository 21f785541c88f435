#include "tests/testing/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

extern char** environ;

namespace cl::testing {

Subprocess::Subprocess(const std::vector<std::string>& argv, const std::string& stdout_path) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO,
                                   stdout_path.empty() ? "/dev/null" : stdout_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  stderr_fd_ = pipe_fds[0];
}

Subprocess::~Subprocess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (stderr_fd_ >= 0) close(stderr_fd_);
}

absl::StatusOr<std::string> Subprocess::ReadAnnounced(absl::string_view prefix) {
  const std::string line = ReadStderrLine();
  absl::string_view rest = line;
  if (!absl::ConsumePrefix(&rest, prefix)) {
    return absl::UnavailableError(
        absl::StrCat("expected \"", prefix, "...\" on stderr, got: ", line));
  }
  return std::string(rest);
}

std::string Subprocess::ReadStderrLine() {
  while (true) {
    if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    char chunk[4096];
    const ssize_t n = read(stderr_fd_, chunk, sizeof(chunk));
    if (n <= 0) return std::exchange(buffer_, {});
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::string Subprocess::ReadStderrToEnd() {
  std::string out = std::exchange(buffer_, {});
  char chunk[4096];
  for (ssize_t n; (n = read(stderr_fd_, chunk, sizeof(chunk))) > 0;)
    out.append(chunk, static_cast<size_t>(n));
  return out;
}

void Subprocess::Signal(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

int Subprocess::Wait() {
  if (pid_ <= 0) return -1;
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

RunResult RunCommand(const std::vector<std::string>& argv) {
  char path[] = "/tmp/cl-run-stdout-XXXXXX";
  const int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  RunResult result;
  {
    Subprocess p(argv, path);
    result.stderr_text = p.ReadStderrToEnd();
    result.exit_code = p.Wait();
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  result.stdout_text = ss.str();
  std::remove(path);
  return result;
}

}  // namespace cl::testing

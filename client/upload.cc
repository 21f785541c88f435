#include "client/upload.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capture/capture_io.h"
#include "common/digest.h"
#include "common/proto_json.h"

namespace cl {

bool IsRetryable(const absl::Status& status) {
  // CANCELLED is the server's doing: the client library cancels only on its own failures, which
  // it reports as such. A server shutting down cancels the calls that reach it as it stops
  // accepting, before any of our code has seen them (drain_test): never analyzed, safe to resend.
  return status.code() == absl::StatusCode::kUnavailable ||
         status.code() == absl::StatusCode::kCancelled ||
         status.code() == absl::StatusCode::kResourceExhausted ||
         status.code() == absl::StatusCode::kAborted ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

bool IsRefusedCapture(const absl::Status& status) {
  return status.code() == absl::StatusCode::kInvalidArgument;
}

UploadOutcome WithRetry(
    const RemoteOptions& remote, const RetryPolicy& policy,
    absl::FunctionRef<absl::StatusOr<v1::AnalyzeResponse>(const RemoteOptions&)> attempt_once) {
  const absl::Time end = absl::Now() + policy.deadline;
  absl::BitGen jitter;
  absl::Duration backoff = policy.initial_backoff;
  UploadOutcome out;
  while (true) {
    RemoteOptions attempt = remote;
    attempt.deadline = end - absl::Now();
    if (attempt.deadline <= absl::ZeroDuration()) {
      if (out.attempts == 0)
        out.response = absl::DeadlineExceededError("no time left for an attempt");
      return out;
    }
    ++out.attempts;
    out.response = attempt_once(attempt);
    if (out.response.ok() || !IsRetryable(out.response.status())) return out;
    // Full jitter: a fleet of jobs tearing down at once must not retry in lockstep.
    const absl::Duration wait =
        std::min(backoff * absl::Uniform(jitter, 0.0, 1.0), end - absl::Now());
    if (wait <= absl::ZeroDuration()) return out;
    absl::SleepFor(wait);
    backoff = std::min(backoff * policy.multiplier, policy.max_backoff);
  }
}

UploadOutcome AnalyzeWithRetry(const AssembledCaptures& captures, const v1::AnalyzeOptions& options,
                               const RemoteOptions& remote, const RetryPolicy& policy) {
  return WithRetry(remote, policy, [&](const RemoteOptions& attempt) {
    return AnalyzeRemote(captures, options, attempt);
  });
}

std::string SpoolDir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("CL_SPOOL_DIR"); env != nullptr && *env != '\0') return env;
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : ".", "/.cache/compile-lens/spool");
}

namespace {

constexpr absl::string_view kSpoolSuffix = ".cls.pb";

// The session id as a file name, so that a session spooled twice is one file, and two sessions
// never one: each rank of a job (one session id) has its own, and an id the name cannot spell
// as it is (empty, characters outside [A-Za-z0-9._-], over 200 bytes) gets a digest of itself, or
// of the capture when it has no id.
std::string FileNameFor(const v1::SessionCapture& capture) {
  const std::string& id = capture.session().id();
  std::string name = id.empty() ? "session" : id.substr(0, 200);
  for (char& c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (name.front() == '.') name.front() = '_';
  if (id.empty()) {
    absl::StrAppend(&name, "-", Md5Hex(DeterministicBytes(capture)).substr(0, 16));
  } else if (name != id) {
    absl::StrAppend(&name, "-", Md5Hex(id).substr(0, 16));
  }
  if (capture.session().world_size() > 1 || capture.session().rank() != 0) {
    absl::StrAppend(&name, ".rank", capture.session().rank());
  }
  return absl::StrCat(name, kSpoolSuffix);
}

}  // namespace

absl::StatusOr<std::string> SpoolCapture(const std::string& dir,
                                         const v1::SessionCapture& capture) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::FailedPreconditionError(absl::StrCat("spool ", dir, ": ", ec.message()));
  const std::string path = (std::filesystem::path(dir) / FileNameFor(capture)).string();
  if (absl::Status s = WriteCaptureFile(path, capture); !s.ok()) return s;
  return path;
}

absl::StatusOr<std::vector<std::string>> SpooledFiles(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && absl::EndsWith(name, kSpoolSuffix))
      out.push_back(entry.path().string());
  }
  if (ec) return absl::FailedPreconditionError(absl::StrCat("spool ", dir, ": ", ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

FlushResult FlushSpool(const std::string& dir, const v1::AnalyzeOptions& options,
                       const RemoteOptions& remote, const RetryPolicy& policy) {
  FlushResult result;
  absl::StatusOr<std::vector<std::string>> files = SpooledFiles(dir);
  if (!files.ok()) {
    result.errors.push_back(std::string(files.status().message()));
    return result;
  }
  for (size_t i = 0; i < files->size(); ++i) {
    const std::string& path = (*files)[i];
    absl::StatusOr<v1::SessionCapture> capture = ReadCaptureFile(path);
    absl::Status failure = capture.status();
    bool rejected = !capture.ok();  // a spool file that does not read never will
    if (capture.ok()) {
      UploadOutcome outcome =
          AnalyzeWithRetry({*std::move(capture), std::nullopt}, options, remote, policy);
      failure = outcome.response.status();
      rejected = IsRefusedCapture(failure);
    }
    std::error_code ec;
    if (failure.ok()) {
      std::filesystem::remove(path, ec);
      ++result.delivered;
      continue;
    }
    if (!rejected && !IsRetryable(failure)) {
      result.remaining += static_cast<int>(files->size() - i);
      result.errors.push_back(absl::StrCat(path, ": ", absl::StatusCodeToString(failure.code()),
                                           ": ", failure.message(),
                                           " (flush stopped: every session stays in the spool)"));
      break;
    }
    ++result.remaining;
    if (rejected) std::filesystem::rename(path, absl::StrCat(path, ".rejected"), ec);
    result.errors.push_back(absl::StrCat(path, ": ", absl::StatusCodeToString(failure.code()), ": ",
                                         failure.message(),
                                         rejected ? " (moved to .rejected)" : ""));
  }
  return result;
}

}  // namespace cl

// Uploads that never lose a session: retries with backoff while the server is unavailable or
// overloaded, and a spool on disk for what still could not be delivered.
//
// A training job calls `cl-client upload` at teardown: it must finish within its deadline whatever
// the server does, and the session must reach the server eventually. Retryable failures
// (UNAVAILABLE, RESOURCE_EXHAUSTED, ABORTED — the same session is being analyzed by another call —
// and an attempt's DEADLINE_EXCEEDED while time is left) are
// retried with exponential backoff and full jitter until the overall deadline; when that runs out,
// the capture goes to the spool, one file per session (`<session id>.cls.pb`, written to a
// temporary name and renamed, so a reader never sees half a file). `cl-client spool flush` sends
// the spooled sessions later and removes each file only after the server analyzed it. A capture
// the server refuses as malformed (INVALID_ARGUMENT) is never spooled: it would be refused again.
// Any other failure (the client's own setup: a token or TLS file it cannot read; the server
// refusing the credentials; not a cl-server) spools it too: the capture is fine, and once the
// setup is fixed `spool flush` delivers it. (cl-client streams a log file as it is, and imports it
// into a capture only to spool it: client/main.cc.)
#ifndef CLIENT_UPLOAD_H_
#define CLIENT_UPLOAD_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/analyze_client.h"

namespace cl {

struct RetryPolicy {
  absl::Duration deadline =
      absl::Seconds(120);  // every attempt and wait together (cl-client --deadline)
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(5);
  double multiplier = 2.0;
};

// Whether a failed attempt is worth another try.
bool IsRetryable(const absl::Status& status);
// Whether the server refused the capture itself (INVALID_ARGUMENT): sending it again cannot help.
// Errors of the client's setup are never INVALID_ARGUMENT (they are FAILED_PRECONDITION).
bool IsRefusedCapture(const absl::Status& status);

struct UploadOutcome {
  absl::StatusOr<v1::AnalyzeResponse> response = absl::UnknownError("not attempted");
  int attempts = 0;
};

// Calls `attempt_once` until it succeeds or fails for good (not IsRetryable), waiting between tries
// under `policy`; each try gets `remote` with what is left of policy.deadline as its deadline.
UploadOutcome WithRetry(
    const RemoteOptions& remote, const RetryPolicy& policy,
    absl::FunctionRef<absl::StatusOr<v1::AnalyzeResponse>(const RemoteOptions&)> attempt_once);

// Analyze on `remote.target`, retried under `policy` (remote.deadline is ignored: each attempt gets
// what is left of policy.deadline).
UploadOutcome AnalyzeWithRetry(const AssembledCaptures& captures, const v1::AnalyzeOptions& options,
                               const RemoteOptions& remote, const RetryPolicy& policy);

// The spool folder: `flag` when given, else $CL_SPOOL_DIR, else ~/.cache/compile-lens/spool.
std::string SpoolDir(const std::string& flag);

// Writes the session to `dir` (created when missing) and returns the file's path. The name is the
// session id (characters outside [A-Za-z0-9._-] replaced), so a session spooled twice is one file;
// `.rank<N>` follows it in a job of several ranks, and a digest (of the id, or of the capture when
// it has none) when the name could not spell the id as it is, so two sessions are never one file.
absl::StatusOr<std::string> SpoolCapture(const std::string& dir, const v1::SessionCapture& capture);

// The spooled sessions in `dir`, oldest name first; a missing folder is an empty spool.
absl::StatusOr<std::vector<std::string>> SpooledFiles(const std::string& dir);

struct FlushResult {
  int delivered = 0;
  int remaining = 0;
  std::vector<std::string> errors;  // one line per session that stayed
};

// Sends every spooled session (each under `policy`), removing a file once the server analyzed it.
// A session the server refuses as bad input (IsRefusedCapture), or a file that does not read as a
// capture, is moved aside to `<name>.rejected`, never retried. A failure that is neither that nor
// retryable (the client's setup, the server refusing the credentials) stops the flush with every
// file left where it was: each would fail alike.
FlushResult FlushSpool(const std::string& dir, const v1::AnalyzeOptions& options,
                       const RemoteOptions& remote, const RetryPolicy& policy);

}  // namespace cl

#endif  // CLIENT_UPLOAD_H_

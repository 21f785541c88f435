// The reports of sessions analyzed lately, so that a session sent twice is analyzed once.
//
// Uploads retry: a client whose deadline passed after the server had analyzed its session sends
// it again. The second call gets the first call's response, not a second analysis (which would
// count the session twice in the fleet metrics). While the first analysis still runs, a duplicate
// is told ABORTED (retry shortly) rather than analyzed alongside. Keyed by the head session id and
// labels, the base session id, the request options, and the upload's size and a hash of its bytes
// (the same session sent again the same way: an edited capture under the same id is analyzed
// anew, and nobody gets another upload's answer by naming its id and size); bounded in entries
// and bytes, oldest out first. Answers are kept as the serialized bytes the first call sent (a
// ByteBuffer's slices are shared, not copied).
#ifndef SERVICE_SERVER_RECENT_SESSIONS_H_
#define SERVICE_SERVER_RECENT_SESSIONS_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "capture/stream/capture_assembler.h"
#include "compile_lens/v1/service.pb.h"
#include "grpcpp/support/byte_buffer.h"

namespace cl {

class RecentSessions {
 public:
  RecentSessions(size_t max_entries, size_t max_bytes)
      : max_entries_(max_entries), max_bytes_(max_bytes) {}

  // The dedupe key of a request; empty (never deduplicated) when the head has no session id.
  // upload_hash: of the upload's bytes (a StreamHash of its part-carrying messages).
  static std::string Key(CaptureRefs captures, const v1::AnalyzeOptions& options,
                         uint64_t upload_bytes, uint64_t upload_hash);

  enum class Claim { kNew, kDone, kRunning };
  // kNew: the caller analyzes and then calls Done or Abandon. kDone: *response is the earlier
  // answer (a serialized AnalyzeResponse). kRunning: another call is analyzing the same session
  // now.
  Claim Begin(const std::string& key, grpc::ByteBuffer* response) ABSL_LOCKS_EXCLUDED(mu_);
  void Done(const std::string& key, const grpc::ByteBuffer& response) ABSL_LOCKS_EXCLUDED(mu_);
  void Abandon(const std::string& key) ABSL_LOCKS_EXCLUDED(mu_);  // the analysis failed

 private:
  struct Entry {
    grpc::ByteBuffer response;
    size_t bytes = 0;
    std::list<std::string>::iterator age;
  };
  const size_t max_entries_;
  const size_t max_bytes_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> done_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> oldest_first_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> running_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace cl

#endif  // SERVICE_SERVER_RECENT_SESSIONS_H_

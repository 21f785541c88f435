#include "service/server/recent_sessions.h"

#include <map>

#include "absl/strings/str_cat.h"

namespace cl {

std::string RecentSessions::Key(CaptureRefs captures, const v1::AnalyzeOptions& options,
                                uint64_t upload_bytes, uint64_t upload_hash) {
  const v1::Session& session = captures.head->session();
  if (session.id().empty()) return "";
  std::string opts;
  options.SerializeToString(&opts);  // no map fields: deterministic within one server binary
  // Labels can be set per upload (cl-client --label): another labelling is another request.
  const std::map<std::string, std::string> labels(session.labels().begin(), session.labels().end());
  std::string key = absl::StrCat(session.id(), "\x1f",
                                 captures.base != nullptr ? captures.base->session().id() : "",
                                 "\x1f", upload_bytes, "\x1f", upload_hash, "\x1f", opts);
  for (const auto& [k, v] : labels) absl::StrAppend(&key, "\x1f", k, "=", v);
  return key;
}

RecentSessions::Claim RecentSessions::Begin(const std::string& key, grpc::ByteBuffer* response) {
  absl::MutexLock lock(&mu_);
  if (auto it = done_.find(key); it != done_.end()) {
    *response = it->second.response;
    return Claim::kDone;
  }
  if (!running_.insert(key).second) return Claim::kRunning;
  return Claim::kNew;
}

void RecentSessions::Done(const std::string& key, const grpc::ByteBuffer& response) {
  const size_t bytes = response.Length() + key.size();
  absl::MutexLock lock(&mu_);
  running_.erase(key);
  if (bytes > max_bytes_ || max_entries_ == 0)
    return;  // too big to keep: a duplicate is analyzed again
  oldest_first_.push_back(key);
  done_[key] = {response, bytes, std::prev(oldest_first_.end())};
  bytes_ += bytes;
  while (done_.size() > max_entries_ || bytes_ > max_bytes_) {
    auto it = done_.find(oldest_first_.front());
    bytes_ -= it->second.bytes;
    done_.erase(it);
    oldest_first_.pop_front();
  }
}

void RecentSessions::Abandon(const std::string& key) {
  absl::MutexLock lock(&mu_);
  running_.erase(key);
}

}  // namespace cl

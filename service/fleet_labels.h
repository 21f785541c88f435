// Metric labels taken from user data, kept bounded.
//
// A session's labels (`session.labels`: cluster, model, ...) are what a fleet dashboard groups by,
// but they come from the training job, so nothing bounds them. FleetLabels passes through only the
// allowlisted keys. A key given its values (an allowlist, --metrics_label_allow) keeps those and
// no other; a key given none keeps the first `max_values` distinct values it sees. The rest, values
// over 64 bytes and values that are not UTF-8 become "other", and each is counted as folded. The
// worst case is therefore (max_values + 1) ^ keys label tuples, whatever the fleet sends. Keys that
// name ids or paths are refused when the allowlist is made. Thread-safe.
#ifndef SERVICE_FLEET_LABELS_H_
#define SERVICE_FLEET_LABELS_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/map.h"

namespace cl {

// The value every label falls back to once its cap is reached.
inline constexpr char kOverflowLabelValue[] = "other";

// The first `max_values` distinct values of one label, or exactly the `allowed` ones when given;
// the rest map to kOverflowLabelValue. The empty value (label absent) is always kept and does not
// count.
class BoundedLabelValues {
 public:
  explicit BoundedLabelValues(size_t max_values, std::vector<std::string> allowed = {});

  std::string Map(absl::string_view value) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const size_t max_values_;
  const bool fixed_;  // the values are the allowlist's, not the first ones seen
  absl::Mutex mu_;
  absl::flat_hash_set<std::string> seen_ ABSL_GUARDED_BY(mu_);
};

// The values allowed per key, from --metrics_label_allow ("team=infra|research"): KEY=V1|V2|...,
// one key per entry. INVALID_ARGUMENT, naming the entry, for one without "=" or values, a value
// that could never be a label value (empty, over 64 bytes, not UTF-8, "other"), or a key given
// twice.
absl::StatusOr<std::vector<std::pair<std::string, std::vector<std::string>>>> ParseLabelAllowlist(
    const std::vector<std::string>& entries);

class FleetLabels {
 public:
  using Allowlist = std::vector<std::pair<std::string, std::vector<std::string>>>;

  // INVALID_ARGUMENT for a key that is not a Prometheus label name, is reserved by the service's
  // own metrics, names an id or a path, or comes twice; and for an `allowed` key that is not one of
  // `keys`.
  static absl::StatusOr<std::unique_ptr<FleetLabels>> Create(std::vector<std::string> keys,
                                                             size_t max_values,
                                                             const Allowlist& allowed = {});

  const std::vector<std::string>& keys() const { return keys_; }

  // One value per key, in key order: the session's value through the key's cap, "" when absent.
  // `folded`, when given, gets one flag per key: the session had a value that became "other".
  std::vector<std::string> Resolve(const google::protobuf::Map<std::string, std::string>& labels,
                                   std::vector<bool>* folded = nullptr);

 private:
  FleetLabels(std::vector<std::string> keys, size_t max_values, const Allowlist& allowed);

  const std::vector<std::string> keys_;
  std::vector<std::unique_ptr<BoundedLabelValues>> values_;  // parallel to keys_
};

}  // namespace cl

#endif  // SERVICE_FLEET_LABELS_H_

#include "service/fleet_labels.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/utf8.h"

namespace cl {
namespace {

constexpr size_t kMaxValueBytes = 64;

// Labels the service's own metrics (and Prometheus's target labels) already use.
constexpr absl::string_view kReserved[] = {"outcome",   "category",     "severity",    "verdict",
                                           "pattern",   "pass",         "reason",      "le",
                                           "quantile",  "job",          "instance",    "label",
                                           "grpc_type", "grpc_service", "grpc_method", "grpc_code"};

bool IsLabelName(absl::string_view key) {
  if (key.empty() || absl::ascii_isdigit(key[0]) || absl::StartsWith(key, "__")) return false;
  for (char c : key) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// "never ids or paths": a label that identifies a session, a file or a machine makes a series per
// session. Judged by the key's words: session_id, run_uuid, log_path, source_file, host, ...
bool NamesAnIdOrPath(absl::string_view key) {
  constexpr absl::string_view kWords[] = {"id",       "uuid", "path", "file",
                                          "filename", "dir",  "host", "hostname"};
  const std::string lower = absl::AsciiStrToLower(key);
  for (absl::string_view word : absl::StrSplit(lower, '_')) {
    for (absl::string_view bad : kWords) {
      if (word == bad) return true;
    }
  }
  return false;
}

}  // namespace

BoundedLabelValues::BoundedLabelValues(size_t max_values, std::vector<std::string> allowed)
    : max_values_(max_values), fixed_(!allowed.empty()) {
  absl::MutexLock lock(&mu_);
  for (std::string& value : allowed) seen_.insert(std::move(value));
}

std::string BoundedLabelValues::Map(absl::string_view value) {
  if (value.empty()) return "";
  if (value.size() > kMaxValueBytes || !IsValidUtf8(value)) return kOverflowLabelValue;
  absl::MutexLock lock(&mu_);
  if (seen_.contains(value)) return std::string(value);
  if (fixed_ || seen_.size() >= max_values_) return kOverflowLabelValue;
  seen_.emplace(value);
  return std::string(value);
}

absl::StatusOr<FleetLabels::Allowlist> ParseLabelAllowlist(
    const std::vector<std::string>& entries) {
  FleetLabels::Allowlist allowed;
  absl::flat_hash_set<std::string> keys;
  for (const std::string& entry : entries) {
    const size_t eq = entry.find('=');
    const auto refuse = [&entry](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics label allowlist \"", entry, "\": ", why));
    };
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size())
      return refuse("expected KEY=VALUE|VALUE|...");
    std::string key = entry.substr(0, eq);
    if (!keys.insert(key).second) return refuse(absl::StrCat("\"", key, "\" is given twice"));
    std::vector<std::string> values = absl::StrSplit(entry.substr(eq + 1), '|');
    absl::flat_hash_set<std::string> unique;
    for (const std::string& value : values) {
      if (value.empty()) return refuse("an empty value (an absent label is always kept)");
      if (value.size() > kMaxValueBytes || !IsValidUtf8(value))
        return refuse(absl::StrCat("a value over ", kMaxValueBytes, " bytes or not UTF-8"));
      if (value == kOverflowLabelValue)
        return refuse(absl::StrCat("\"", kOverflowLabelValue, "\" is what other values become"));
      if (!unique.insert(value).second)
        return refuse(absl::StrCat("\"", value, "\" is listed twice"));
    }
    allowed.emplace_back(std::move(key), std::move(values));
  }
  return allowed;
}

absl::StatusOr<std::unique_ptr<FleetLabels>> FleetLabels::Create(std::vector<std::string> keys,
                                                                 size_t max_values,
                                                                 const Allowlist& allowed) {
  absl::flat_hash_set<std::string> unique;
  for (const std::string& key : keys) {
    if (!IsLabelName(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics label \"", key, "\" is not a Prometheus label name"));
    }
    for (absl::string_view reserved : kReserved) {
      if (key == reserved) {
        return absl::InvalidArgumentError(
            absl::StrCat("metrics label \"", key, "\" is reserved by the service's own metrics"));
      }
    }
    if (NamesAnIdOrPath(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics label \"", key,
                       "\" names an id, a path or a host: one series per session is not a metric"));
    }
    if (!unique.insert(key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics label \"", key, "\" is listed twice"));
    }
  }
  for (const auto& [key, values] : allowed) {
    if (!unique.contains(key)) {
      return absl::InvalidArgumentError(absl::StrCat("metrics label allowlist names \"", key,
                                                     "\", which is not one of the metrics labels (",
                                                     absl::StrJoin(keys, ","), ")"));
    }
  }
  return std::unique_ptr<FleetLabels>(new FleetLabels(std::move(keys), max_values, allowed));
}

FleetLabels::FleetLabels(std::vector<std::string> keys, size_t max_values, const Allowlist& allowed)
    : keys_(std::move(keys)) {
  for (const std::string& key : keys_) {
    std::vector<std::string> fixed;
    for (const auto& [allowed_key, values] : allowed) {
      if (allowed_key == key) fixed = values;
    }
    values_.push_back(std::make_unique<BoundedLabelValues>(max_values, std::move(fixed)));
  }
}

std::vector<std::string> FleetLabels::Resolve(
    const google::protobuf::Map<std::string, std::string>& labels, std::vector<bool>* folded) {
  std::vector<std::string> out;
  out.reserve(keys_.size());
  if (folded != nullptr) folded->assign(keys_.size(), false);
  for (size_t i = 0; i < keys_.size(); ++i) {
    auto it = labels.find(keys_[i]);
    out.push_back(it == labels.end() ? std::string() : values_[i]->Map(it->second));
    // A session that sent "other" itself is not folded; one whose value became it is.
    if (folded != nullptr && out.back() == kOverflowLabelValue && it->second != kOverflowLabelValue)
      (*folded)[i] = true;
  }
  return out;
}

}  // namespace cl

#include "capture/torch_trace/guard_tree.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace cl {
namespace {

constexpr absl::string_view kSource = ": source=";
constexpr absl::string_view kAccessedBy = ", accessed_by";
constexpr absl::string_view kGlobalState = "GLOBAL_STATE";

// "GuardManager", "KeyManager: GuardManager": node labels, nothing of a guard's expression.
bool IsLabels(absl::string_view text) {
  if (text.empty()) return false;
  for (absl::string_view label : absl::StrSplit(text, ": ")) {
    if (label.empty()) return false;
    for (char ch : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
    }
  }
  return true;
}

}  // namespace

GuardTreeSources ReadGuardSources(absl::string_view payload) {
  GuardTreeSources out;
  absl::flat_hash_set<std::string> seen;
  auto add = [&](absl::string_view source) {
    if (seen.insert(std::string(source)).second) out.sources.emplace_back(source);
  };
  size_t index = 0;
  for (absl::string_view line : absl::StrSplit(payload, '\n')) {
    const size_t line_index = index++;
    // A node is "+- LABEL: ..." after the "| " columns of its ancestors.
    const size_t node = line.find("+- ");
    if (node == absl::string_view::npos) continue;
    out.has_tree = true;
    absl::string_view text = line.substr(node + 3);
    if (absl::StartsWith(text, kGlobalState) &&
        absl::StartsWith(text.substr(kGlobalState.size()), ":")) {
      add(kGlobalState);
      continue;
    }
    // "GuardManager: source=X", "DictGuardManager: source=X", "KeyManager: GuardManager: source=X".
    // A guard's own expression never starts with "source=", so the label is what tells them apart.
    const size_t at = text.find(kSource);
    if (at == absl::string_view::npos || !IsLabels(text.substr(0, at))) continue;
    absl::string_view source = text.substr(at + kSource.size());
    if (const size_t end = source.find(kAccessedBy); end != absl::string_view::npos) {
      source = source.substr(0, end);
    }
    source = absl::StripAsciiWhitespace(source);
    if (source.empty()) {
      out.problems.push_back({line_index, "a guard manager line names an empty source"});
      continue;
    }
    add(source);
  }
  return out;
}

}  // namespace cl

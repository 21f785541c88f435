// Any bytes as a correctness DB (correctness.toml): a DB or an INVALID_ARGUMENT that names the
// line, never a crash. A DB that loads holds what its loader promises: ids that match
// ^[a-z][a-z0-9_]*$ and do not repeat (Find gives each back), confidences within 0–1, and an issue
// link on every error-severity pattern.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "lint/correctness_db.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool ValidId(const std::string& id) {
  if (id.empty() || id[0] < 'a' || id[0] > 'z') return false;
  for (char c : id) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<cl::lint::CorrectnessDb> db = cl::lint::CorrectnessDb::Parse(text);
  if (!db.ok()) {
    CL_FUZZ_CHECK(db.status().code() == absl::StatusCode::kInvalidArgument);
    CL_FUZZ_CHECK(absl::StartsWith(db.status().message(), "correctness DB line "));
    return 0;
  }
  std::set<std::string> ids;
  for (const cl::lint::PatternSpec& p : db->patterns()) {
    CL_FUZZ_CHECK(ValidId(p.id) && ids.insert(p.id).second);
    CL_FUZZ_CHECK(db->Find(p.id) == &p);
    CL_FUZZ_CHECK(p.confidence >= 0 && p.confidence <= 1);
    CL_FUZZ_CHECK(p.severity != cl::lint::Severity::kError || !p.issues.empty());
  }
  return 0;
}

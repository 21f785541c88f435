// Any bytes as a recompile reason (or a cache-limit message): failures, never a crash or a
// quadratic blow-up. Every reason gives at least one failure; every failure has a known category
// and a rule, one-line check text, and classifies the same way again from its own check; a log
// prefix strip only ever removes a prefix; a cache-limit message always names its limit.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analyzers/recompile/reason.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using ::compile_lens::v1::RecompileCategory;

// A category a guard failure may have: any the report defines but UNSPECIFIED (unset) and
// CACHE_LIMIT (a suggestion's).
bool KnownCategory(RecompileCategory::Value c) {
  return RecompileCategory::Value_IsValid(c) && c != RecompileCategory::UNSPECIFIED &&
         c != RecompileCategory::CACHE_LIMIT;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<cl::GuardFailure> failures = cl::ParseRecompileReason(text);
  CL_FUZZ_CHECK(!failures.empty());
  for (const cl::GuardFailure& f : failures) {
    CL_FUZZ_CHECK(KnownCategory(f.category));
    CL_FUZZ_CHECK(!f.rule.empty());
    CL_FUZZ_CHECK(f.check.find('\n') == std::string::npos);
    (void)f.Axis();
    if (cl::StripLocalScope(f.check) == f.check) {
      const cl::GuardFailure again = cl::ClassifyGuardCheck(f.check);
      CL_FUZZ_CHECK(again.rule == f.rule && again.category == f.category &&
                    again.variable == f.variable);
    }
  }
  const absl::string_view rest = cl::StripLogPrefix(text);
  CL_FUZZ_CHECK(rest.size() <= text.size() && text.substr(text.size() - rest.size()) == rest);
  if (auto limit = cl::ParseCacheLimitMessage(text)) {
    CL_FUZZ_CHECK(!limit->limit.empty());
    if (!limit->last_reason.empty())
      CL_FUZZ_CHECK(!cl::ParseRecompileReason(limit->last_reason).empty());
  }
  return 0;
}

// Any bytes as a dynamo_cpp_guards_str payload: sources and problems, never a crash. The sources
// are distinct, non-empty, trimmed single lines taken from the text (or GLOBAL_STATE); problems
// name lines that exist; text with no tree node yields nothing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "capture/torch_trace/guard_tree.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const cl::GuardTreeSources out = cl::ReadGuardSources(text);
  if (!out.has_tree) CL_FUZZ_CHECK(out.sources.empty() && out.problems.empty());
  std::set<std::string> seen;
  for (const std::string& s : out.sources) {
    CL_FUZZ_CHECK(seen.insert(s).second);
    CL_FUZZ_CHECK(!s.empty() && absl::StripAsciiWhitespace(s) == s);
    CL_FUZZ_CHECK(s.find('\n') == std::string::npos);
    CL_FUZZ_CHECK(s == "GLOBAL_STATE" || absl::StrContains(text, s));
  }
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (const cl::GuardTreeProblem& p : out.problems)
    CL_FUZZ_CHECK(p.line < lines && !p.what.empty());
  return 0;
}

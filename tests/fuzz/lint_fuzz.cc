// Any bytes as a captured Python source, and as a correctness DB: findings or diagnostics, never a
// crash, a hang or a finding outside the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lint/correctness_db.h"
#include "lint/linter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  cl::lint::LintOptions options;
  options.limits.timeout_micros = 2'000'000;
  const cl::lint::LintResult r = cl::lint::Lint({{"/p/fuzz.py", text}}, options);
  for (const cl::lint::Finding& f : r.findings) {
    if (f.line == 0 || f.file != "/p/fuzz.py") __builtin_trap();
  }
  (void)cl::lint::CorrectnessDb::Parse(text);
  return 0;
}

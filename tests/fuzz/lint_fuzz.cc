// Any bytes as a captured Python source, linted against the repository's correctness DB (so the
// rating path runs too): findings or diagnostics, never a crash or a hang. Every finding is in the
// file, on a line it has, with a one-line snippet and a confidence within 0–1; linting is
// deterministic, and a file the parse cache kept lints the same as the fresh parse that filled it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "lint/correctness_db.h"
#include "lint/linter.h"
#include "lint/parse_cache.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

const cl::lint::CorrectnessDb* RepositoryDb() {
  static const cl::lint::CorrectnessDb* db = [] {
    std::ifstream in(CL_SOURCE_DIR "/lint/correctness.toml");
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = cl::lint::CorrectnessDb::Parse(text.str());
    CL_FUZZ_CHECK(parsed.ok());
    return new cl::lint::CorrectnessDb(*std::move(parsed));
  }();
  return db;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  cl::lint::LintOptions options;
  options.db = RepositoryDb();
  options.torch_version = "2.6.0";
  options.limits.timeout_micros = 2'000'000;
  // The first scan parses and fills the cache (unless libFuzzer ran this input before); the second
  // takes the cached tree and index. A few entries bound the fuzzer's memory.
  static cl::lint::ParseCache cache(/*max_entries=*/4, /*max_source_bytes=*/1 << 20);
  options.cache = &cache;
  const cl::lint::LintResult r = cl::lint::Lint({{"/p/fuzz.py", text}}, options);
  const uint32_t lines = static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (const cl::lint::Finding& f : r.findings) {
    CL_FUZZ_CHECK(f.file == "/p/fuzz.py");
    CL_FUZZ_CHECK(f.line >= 1 && f.line <= lines);
    CL_FUZZ_CHECK(f.snippet.find('\n') == std::string::npos);
    CL_FUZZ_CHECK(f.confidence >= 0 && f.confidence <= 1);
  }
  // A parse that ran out of its time budget is the one thing allowed to differ between two runs.
  auto timed_out = [](const cl::lint::LintResult& result) {
    for (const cl::lint::LintDiagnostic& d : result.diagnostics) {
      if (d.message.find("longer than its") != std::string::npos) return true;
    }
    return false;
  };
  const cl::lint::LintResult again = cl::lint::Lint({{"/p/fuzz.py", text}}, options);
  if (timed_out(r) || timed_out(again)) return 0;
  CL_FUZZ_CHECK(again.findings.size() == r.findings.size());
  for (size_t i = 0; i < r.findings.size(); ++i) {
    CL_FUZZ_CHECK(again.findings[i].pattern == r.findings[i].pattern &&
                  again.findings[i].line == r.findings[i].line);
  }
  return 0;
}

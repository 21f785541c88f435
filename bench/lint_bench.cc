// Lint throughput on the Python standard library as Debian installs it (/usr/lib/python3.11, or
// CL_LINT_BENCH_DIR): every .py file, read into memory first, then scanned on one thread.
//
//   BM_ParseOnly      tree-sitter parsing and the arena copy alone (the floor)
//   BM_LintPerFile    each file linted on its own (parse, index, region, every detector)
//   BM_LintAsProject  all files in one Lint() call (cross-file resolution; everything held at once)
//
// The stdlib has no torch.compile roots, so every file runs in "assume compiled" mode: every
// function goes through every region detector, the scan's worst case. Counters: lines/s and
// bytes/s (rates over the timed iterations) and the process's peak RSS. Peak RSS is per process:
// run one benchmark per process (--benchmark_filter=BM_LintPerFile) to read its own peak.
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "lint/linter.h"
#include "lint/python_parser.h"

namespace {

struct Corpus {
  std::vector<std::pair<std::string, std::string>> files;
  uint64_t lines = 0;
  uint64_t bytes = 0;
};

const Corpus& Stdlib() {
  static const Corpus* const kCorpus = [] {
    auto* c = new Corpus;
    const char* env = std::getenv("CL_LINT_BENCH_DIR");
    const std::filesystem::path root = env != nullptr && *env != '\0' ? env : "/usr/lib/python3.11";
    std::error_code ec;
    std::vector<std::filesystem::path> paths;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".py") paths.push_back(it->path());
    }
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      std::ifstream in(p, std::ios::binary);
      std::stringstream s;
      s << in.rdbuf();
      std::string text = s.str();
      c->lines += static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
      c->bytes += text.size();
      c->files.emplace_back(p.string(), std::move(text));
    }
    return c;
  }();
  return *kCorpus;
}

double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

void Report(benchmark::State& state, size_t findings) {
  const Corpus& c = Stdlib();
  state.counters["files"] = static_cast<double>(c.files.size());
  state.counters["lines"] = static_cast<double>(c.lines);
  state.counters["lines/s"] =
      benchmark::Counter(static_cast<double>(c.lines) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["MB/s"] = benchmark::Counter(
      static_cast<double>(c.bytes) * static_cast<double>(state.iterations()) / 1e6,
      benchmark::Counter::kIsRate);
  state.counters["findings"] = static_cast<double>(findings);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

void BM_ParseOnly(benchmark::State& state) {
  const Corpus& c = Stdlib();
  if (c.files.empty()) state.SkipWithError("no .py files (set CL_LINT_BENCH_DIR)");
  cl::lint::PythonParser parser;
  size_t nodes = 0;
  for (auto _ : state) {
    for (const auto& [path, text] : c.files) nodes += parser.Parse(text).tree.size();
  }
  benchmark::DoNotOptimize(nodes);
  Report(state, 0);
}
BENCHMARK(BM_ParseOnly)->Unit(benchmark::kMillisecond)->MinTime(3);

void BM_LintPerFile(benchmark::State& state) {
  const Corpus& c = Stdlib();
  if (c.files.empty()) state.SkipWithError("no .py files (set CL_LINT_BENCH_DIR)");
  size_t findings = 0;
  for (auto _ : state) {
    findings = 0;
    for (const auto& [path, text] : c.files) {
      findings += cl::lint::Lint({{path, text}}, cl::lint::LintOptions()).findings.size();
    }
  }
  Report(state, findings);
}
BENCHMARK(BM_LintPerFile)->Unit(benchmark::kMillisecond)->MinTime(3);

void BM_LintAsProject(benchmark::State& state) {
  const Corpus& c = Stdlib();
  if (c.files.empty()) state.SkipWithError("no .py files (set CL_LINT_BENCH_DIR)");
  std::vector<cl::lint::LintSource> sources;
  for (const auto& [path, text] : c.files) sources.push_back({path, text});
  size_t findings = 0;
  for (auto _ : state) findings = cl::lint::Lint(sources, cl::lint::LintOptions()).findings.size();
  Report(state, findings);
}
BENCHMARK(BM_LintAsProject)->Unit(benchmark::kMillisecond)->MinTime(3);

}  // namespace

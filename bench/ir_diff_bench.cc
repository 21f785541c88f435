// The IR diff at scale: the ir_diff pass on one graph of N nodes per side, for N = 1k, 10k, 100k.
// The head is the base re-listed as another trace would list it (every node renamed, another
// topological order) with N/1000 random edits (tests/analyzers/ir_diff/synthetic_graphs.h), so
// every round of the matcher has work. Two kinds of graph: a transformer-like stack of identical
// blocks (the shape of real models) and a random DAG.
//
// Counters: captures_MiB is the heap the two captures hold, diff_peak_MiB the most heap the diff
// used on top of them, peak_rss_MiB the process's peak resident set (generators included; run one
// size per process, --benchmark_filter=.../100000, to read it per size).
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#include "analyzers/ir_diff/ir_diff.h"
#include "benchmark/benchmark.h"
#include "tests/analyzers/ir_diff/synthetic_graphs.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;

// The heap the diff itself uses: every allocation of this binary goes through the counting
// operator new below, and the benchmark reads the peak of live bytes above what the captures
// already hold. (Resident-set figures would also count the generators' garbage, which the
// allocator keeps.)
std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> peak_bytes{0};

// Out of line, so that GCC does not see malloc and free inside operator new and delete (and warn
// that they mismatch).
[[gnu::noinline]] void* Allocate(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  const auto size = static_cast<int64_t>(malloc_usable_size(p));
  const int64_t live = live_bytes.fetch_add(size) + size;
  int64_t peak = peak_bytes.load();
  while (live > peak && !peak_bytes.compare_exchange_weak(peak, live)) {
  }
  return p;
}

[[gnu::noinline]] void Release(void* p) {
  if (p == nullptr) return;
  live_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}

double PeakResidentMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // kilobytes on Linux
}

}  // namespace
}  // namespace cl

void* operator new(std::size_t n) { return cl::Allocate(n); }
void* operator new[](std::size_t n) { return cl::Allocate(n); }
void operator delete(void* p) noexcept { cl::Release(p); }
void operator delete[](void* p) noexcept { cl::Release(p); }
void operator delete(void* p, std::size_t) noexcept { cl::Release(p); }
void operator delete[](void* p, std::size_t) noexcept { cl::Release(p); }

namespace cl {
namespace {

enum class Shape { kLayered, kRandom };

struct Captures {
  v1::SessionCapture base;
  v1::SessionCapture head;
};

Captures MakeCaptures(Shape shape, int n) {
  v1::Graph base =
      shape == Shape::kLayered ? testing::LayeredGraph(n) : testing::RandomGraph(n, /*seed=*/42);
  v1::Graph edited = base;
  testing::ApplyRandomEdits(&edited, std::max(1, n / 1000), /*seed=*/7);
  return {testing::CaptureOf(std::move(base)),
          testing::CaptureOf(testing::ShuffleAndRename(edited, /*seed=*/3))};
}

void BM_IrDiff(benchmark::State& state, Shape shape) {
  const int n = static_cast<int>(state.range(0));
  const Captures captures = MakeCaptures(shape, n);
  const int64_t held = live_bytes.load();
  peak_bytes.store(held);
  const v1::SessionCapture& base_capture = captures.base;
  const v1::SessionCapture& head_capture = captures.head;

  const IrDiffPass pass;
  const PassOptions options;
  const PassInput in{head_capture, &base_capture, options};
  int changes = 0;
  for (auto _ : state) {
    v1::AnalysisReport report;
    if (!pass.Run(in, &report).ok() || report.ir_diff().status() != v1::OK) {
      state.SkipWithError("the diff failed");
      return;
    }
    changes = report.ir_diff().added_size() + report.ir_diff().removed_size() +
              report.ir_diff().modified_size();
    benchmark::DoNotOptimize(report);
  }
  state.counters["nodes"] = n;
  state.counters["changes"] = changes;
  state.counters["captures_MiB"] = static_cast<double>(held) / (1 << 20);
  state.counters["diff_peak_MiB"] = static_cast<double>(peak_bytes.load() - held) / (1 << 20);
  state.counters["peak_rss_MiB"] = PeakResidentMiB();
  state.SetComplexityN(n);
}

BENCHMARK_CAPTURE(BM_IrDiff, layered, Shape::kLayered)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();
BENCHMARK_CAPTURE(BM_IrDiff, random, Shape::kRandom)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace
}  // namespace cl

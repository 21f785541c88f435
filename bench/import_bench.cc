// TORCH_TRACE import throughput (MB/s, one core) and peak memory, on the largest fixture and on a
// large real trace (bench/large_trace/make_large_trace.sh writes it; CL_LARGE_TRACE overrides the
// path). Streaming means the peak RSS grows with the capture, not with the log: the counters show
// both the log size and the process's peak RSS.
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "capture/torch_trace/importer.h"
#include "capture/torch_trace/tokenizer.h"
#include "common/digest.h"
#include "common/file_io.h"
#include "common/md5_batch.h"
#include "common/status_macros.h"
#include "tests/testing/fixtures.h"

namespace cl {
namespace {

double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

void ImportFile(benchmark::State& state, const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    state.SkipWithError(("missing " + path).c_str());
    return;
  }
  ImportOptions options;
  options.read_sources = false;
  size_t graphs = 0, capture_bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(path, options);
    benchmark::DoNotOptimize(c);
    // Measuring the capture and freeing it are not the import: keep them off the clock.
    state.PauseTiming();
    if (!c.ok()) {
      state.SkipWithError(std::string(c.status().message()).c_str());
    } else {
      graphs = c->graphs_size();
      capture_bytes = c->ByteSizeLong();
    }
    c = absl::UnknownError("freed");
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
  state.counters["log_MiB"] = static_cast<double>(size) / (1 << 20);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
  state.counters["graphs"] = static_cast<double>(graphs);
  state.counters["capture_MiB"] = static_cast<double>(capture_bytes) / (1 << 20);  // encoded size
}

// The large real trace: CL_LARGE_TRACE, else where bench/large_trace/make_large_trace.sh writes it.
std::string LargeTracePath() {
  const char* env = std::getenv("CL_LARGE_TRACE");
  return env != nullptr ? env : "/var/tmp/compile-lens-bench/large.log";
}

// The large trace in memory, or nullopt (and the benchmark skipped) when it does not read.
std::optional<std::string> ReadLargeTrace(benchmark::State& state) {
  absl::StatusOr<std::string> log = ReadFile(LargeTracePath());
  if (!log.ok()) {
    state.SkipWithError(std::string(log.status().message()).c_str());
    return std::nullopt;
  }
  return std::move(*log);
}

// The largest fixture as torch wrote it. The repository stores it gzipped, so it is inflated once
// into a plain file, which the import reads as it reads a fresh log: through a mapping.
absl::StatusOr<std::string> InflateLargestFixture() {
  const std::string name = "dedicated_log_torch_trace_rank_1.log";
  CL_ASSIGN_OR_RETURN(const std::string log,
                      testing::ReadFixture(testing::FixturePath(
                          "torch_trace/tlparse-corpus/tlparse/multi_rank_logs/" + name)));
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  CL_RETURN_IF_ERROR(WriteFile(path, log));
  return path;
}

void BM_ImportLargestFixture(benchmark::State& state) {
  static const auto* const plain = new absl::StatusOr<std::string>(InflateLargestFixture());
  if (!plain->ok()) {
    state.SkipWithError(std::string(plain->status().message()).c_str());
    return;
  }
  ImportFile(state, **plain);
}
BENCHMARK(BM_ImportLargestFixture)->Unit(benchmark::kMillisecond);

void BM_ImportLargeTrace(benchmark::State& state) { ImportFile(state, LargeTracePath()); }
BENCHMARK(BM_ImportLargeTrace)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ImportLargeTraceGz(benchmark::State& state) { ImportFile(state, LargeTracePath() + ".gz"); }
BENCHMARK(BM_ImportLargeTraceGz)->Unit(benchmark::kMillisecond)->Iterations(3);

// The tokenizer alone (records cut out, payload md5s checked, nothing parsed) on the log already in
// memory: what the parser adds is the difference to BM_ImportLargeTrace.
void BM_TokenizeLargeTrace(benchmark::State& state) {
  const std::optional<std::string> log = ReadLargeTrace(state);
  if (!log) return;
  size_t records = 0;
  for (auto _ : state) {
    TraceTokenizer tokenizer;
    const auto sink = [&](TraceRecord&& r) {
      benchmark::DoNotOptimize(r);
      ++records;
    };
    tokenizer.Feed(*log, sink);
    tokenizer.Finish(sink);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log->size()));
  state.counters["records"] = static_cast<double>(records / state.iterations());
}
BENCHMARK(BM_TokenizeLargeTrace)->Unit(benchmark::kMillisecond)->Iterations(3);

// Checking the large trace's payload md5s: one at a time with OpenSSL (arg 0), or in Md5Batch's
// lanes (arg 1), all payloads in one batch.
void BM_Md5LargeTracePayloads(benchmark::State& state) {
  const std::optional<std::string> log = ReadLargeTrace(state);
  if (!log) return;
  std::vector<std::string> payloads;
  TraceTokenizer tokenizer;
  const auto sink = [&](TraceRecord&& r) {
    if (r.has_payload) payloads.push_back(std::move(r.payload));
  };
  tokenizer.Feed(*log, sink);
  tokenizer.Finish(sink);
  const std::vector<absl::string_view> views(payloads.begin(), payloads.end());
  std::vector<Md5Digest> digests(views.size());
  size_t bytes = 0;
  for (absl::string_view v : views) bytes += v.size();
  for (auto _ : state) {
    if (state.range(0) == 0) {
      for (absl::string_view v : views) benchmark::DoNotOptimize(Md5Hex(v));
    } else {
      Md5Batch(views, absl::MakeSpan(digests));
      benchmark::DoNotOptimize(digests);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["payloads"] = static_cast<double>(views.size());
}
BENCHMARK(BM_Md5LargeTracePayloads)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cl

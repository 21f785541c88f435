// Splitting a capture into stream parts and assembling it back, for a graph of N nodes: the
// per-session CPU cost of the upload path on both ends.
#include "benchmark/benchmark.h"
#include "capture/stream/capture_assembler.h"
#include "capture/stream/capture_splitter.h"
#include "tests/testing/captures.h"

namespace cl {
namespace {

v1::SessionCapture WithGraph(int nodes) {
  v1::SessionCapture c;
  c.set_schema("0.5.0");
  ::cl::testing::AddChainGraph(c, "g", nodes);
  return c;
}

void BM_SplitAndAssemble(benchmark::State& state) {
  const v1::SessionCapture c = WithGraph(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    CaptureAssembler assembler(~uint64_t{0});
    absl::Status s = SplitCapture(c, v1::HEAD, kDefaultPartBudget, [&](v1::CapturePart&& p) {
      return assembler.Add(std::move(p));
    });
    v1::EndOfCapture end;
    end.set_parts(assembler.parts());
    auto out = assembler.Finish(end);
    if (!s.ok() || !out.ok()) state.SkipWithError("round trip failed");
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.ByteSizeLong()));
}
BENCHMARK(BM_SplitAndAssemble)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cl

// The whole in-process analysis of the hero session (every registered pass, HTML rendered):
// sessions per second per core, the capacity figure deploy/README.md builds on. Arg 0: without
// the HTML, as bench/load's sessions ask (the passes and the report alone, no parsing).
#include "benchmark/benchmark.h"
#include "capture/capture_io.h"
#include "service/analysis.h"

namespace cl {
namespace {

void BM_AnalyzeHero(benchmark::State& state) {
  absl::StatusOr<v1::SessionCapture> head =
      ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/head.cls.json");
  absl::StatusOr<v1::SessionCapture> base =
      ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/base.cls.json");
  if (!head.ok() || !base.ok()) {
    state.SkipWithError("cannot read the hero captures");
    return;
  }
  AssembledCaptures captures{*head, *base};
  ThreadPool pool(1, 16);
  Engine engine(&pool);
  v1::AnalyzeOptions options;
  options.set_render_html(state.range(0) != 0);
  for (auto _ : state) {
    auto response = RunAnalysis(engine, captures, options, nullptr);
    if (!response.ok()) state.SkipWithError("analysis failed");
    benchmark::DoNotOptimize(response);
  }
}
BENCHMARK(BM_AnalyzeHero)->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace cl

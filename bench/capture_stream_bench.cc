// Splitting a capture into stream parts and assembling it back, for a graph of N nodes: the
// per-session CPU cost of the upload path on both ends. And the server's side of one hero session
// as cl-server takes it (bench/load): the wire messages parsed onto the call's arena, assembled,
// validated, and the arena freed.
#include <optional>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "capture/schema.h"
#include "capture/stream/capture_assembler.h"
#include "capture/stream/capture_splitter.h"
#include "capture/stream/chunk_kind.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "tests/testing/captures.h"

namespace cl {
namespace {

v1::SessionCapture WithGraph(int nodes) {
  v1::SessionCapture c;
  c.set_schema(SchemaVersion());
  ::cl::testing::AddChainGraph(c, "g", nodes);
  return c;
}

void BM_SplitAndAssemble(benchmark::State& state) {
  const v1::SessionCapture c = WithGraph(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    CaptureAssembler assembler(~uint64_t{0});
    absl::Status s = SplitCapture(c, v1::HEAD, kDefaultPartBudget,
                                  [&](v1::CapturePart&& p) { return assembler.Add(std::move(p)); });
    v1::EndOfCapture end;
    end.set_parts(assembler.parts());
    auto out = assembler.Finish(end);
    if (!s.ok() || !out.ok()) state.SkipWithError("round trip failed");
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.ByteSizeLong()));
}
BENCHMARK(BM_SplitAndAssemble)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_HeroIngest(benchmark::State& state) {
  const std::vector<std::string> messages = ::cl::testing::HeroStreamMessages();
  if (messages.empty()) return state.SkipWithError("examples/hero did not load");
  size_t bytes = 0;
  for (const std::string& m : messages) bytes += m.size();
  for (auto _ : state) {
    google::protobuf::ArenaOptions options;
    if (state.range(0) > 0) {
      options.start_block_size = static_cast<size_t>(state.range(0));
      options.max_block_size = static_cast<size_t>(state.range(1));
    }
    google::protobuf::Arena arena(options);
    CaptureAssembler assembler(~uint64_t{0}, &arena);
    bool ok = true;
    for (size_t i = 0; i < messages.size(); ++i) {
      const std::string& m = messages[i];
      // As cl-server takes a message: its kind from its tags, its bytes counted off the wire, then
      // (in the analysis task) parsed and its parts assembled.
      google::protobuf::io::ArrayInputStream wire(m.data(), static_cast<int>(m.size()));
      const std::optional<v1::AnalyzeChunk::KindCase> kind = ChunkKindOnWire(&wire);
      auto* chunk = google::protobuf::Arena::CreateMessage<v1::AnalyzeChunk>(&arena);
      ok &= kind.has_value() && chunk->ParseFromString(m);
      if (kind == v1::AnalyzeChunk::kEnd) {
        ok &= assembler.FinishInPlace(chunk->end()).ok();
        continue;
      }
      ok &= assembler.CountBytes(m.size(), [] { return std::string("message"); }).ok();
      ok &= assembler.AddCountedMessage(*chunk, i + 2).ok();  // message 1 is the options
    }
    if (!ok) return state.SkipWithError("the hero session did not assemble");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
// Args: the arena's start and max block sizes; 0: protobuf's defaults (256 B to 8 KiB). cl-server's
// calls use 16 KiB to 64 KiB (CallUpload, service/server/analysis_task.h).
BENCHMARK(BM_HeroIngest)
    ->Args({0, 0})
    ->Args({16 << 10, 64 << 10})
    ->Args({16 << 10, 256 << 10})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cl

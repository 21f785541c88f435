// The analysis engine: runs the selected passes over a session, in parallel, into one report.
//
// Passes are fanned out on the shared bounded ThreadPool. The calling thread works too — it claims
// passes alongside the pool's helpers — so an analysis finishes even when the pool's queue is full
// and a pool thread waiting on its own passes can never deadlock the pool. Each pass is timed; a
// failing pass (error status or exception) marks its own section ERROR while the rest of the report
// comes back. Sections no selected pass fills are marked SKIPPED with the reason. Every string in
// the report is at most kMaxReportStringBytes long.
#ifndef SERVICE_ENGINE_H_
#define SERVICE_ENGINE_H_

#include <atomic>
#include <cstddef>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzers/pass.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"
#include "compile_lens/v1/service.pb.h"
#include "service/thread_pool.h"

namespace cl {

// The longest string a report echoes back (a frame name, a recompile reason, a source line): a
// longer one is clipped, and says how long it was. An upload may hold strings of any length; the
// report, its HTML and its text must not repeat them whole.
inline constexpr size_t kMaxReportStringBytes = 16 << 10;

struct EngineResult {
  v1::AnalysisReport report;
  std::vector<v1::PassTiming> timings;  // in pass order
};

class Engine {
 public:
  // `pool` is not owned and must outlive the engine; null runs every pass on the calling thread.
  // `passes` defaults to the registry.
  explicit Engine(ThreadPool* pool);
  Engine(ThreadPool* pool, std::vector<const Pass*> passes);

  // What the passes made of the server's own options (PrepareOptions on cl-server's flags), for
  // the requests that leave them unset. Set before serving; by default, nothing.
  void SetPassDefaults(PassOptions defaults) { pass_defaults_ = std::move(defaults); }

  // INVALID_ARGUMENT for an unknown pass name in `options.passes` or options a pass refuses in its
  // Prepare (whichever passes were selected); CANCELLED when `cancelled` flips before the report
  // is done. Pass failures are not errors here: they are ERROR sections. `head_lowered`, when
  // the head was imported keeping it instead of its lowered graphs' nodes, is what the passes read
  // of them (PassInput::head_lowered).
  absl::StatusOr<EngineResult> Analyze(const v1::SessionCapture& head,
                                       const v1::SessionCapture* base,
                                       const v1::AnalyzeOptions& options,
                                       const std::atomic<bool>* cancelled,
                                       const LoweredFacts* head_lowered = nullptr) const;

 private:
  ThreadPool* const pool_;
  PassOptions pass_defaults_;
  const std::vector<const Pass*> passes_;
};

}  // namespace cl

#endif  // SERVICE_ENGINE_H_

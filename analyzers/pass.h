// The analysis pass interface.
//
// A pass is a pure function of the session: it reads the head capture (and the base capture when
// the request has one) and fills its own section of an AnalysisReport. It never does I/O, never
// touches metrics and never sees gRPC types. The engine (service/engine.h) runs passes in parallel,
// each into a report of its own, and merges the sections; a pass that fails gets its section marked
// ERROR while the rest of the report still comes back.
//
// To add a pass: implement Pass in analyzers/<name>.{h,cc}, give it the name of the report section
// it fills (a field of AnalysisReport whose message has `status` and `reason`), and list it in
// analyzers/registry.cc. That list is the only place passes are registered.
//
// Facts about the session itself (its GPU, labels, versions) are not options: they are the
// capture's `session`, which the client's flags override there, so that every pass and the
// report's metadata read one value.
#ifndef ANALYZERS_PASS_H_
#define ANALYZERS_PASS_H_

#include <atomic>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {
namespace lint {
class CorrectnessDb;
}  // namespace lint

namespace v1 = ::compile_lens::v1;

// Per-request settings a pass may read.
struct PassOptions {
  // The correctness DB that rates lint findings, parsed once by the engine: the request's, else
  // the server's (cl-server --correctness_db); null when there is neither.
  std::shared_ptr<const lint::CorrectnessDb> correctness_db;
};

// What a pass reads. The captures outlive the pass; `cancelled` flips when the caller gives up,
// and a long pass should poll it and return absl::CancelledError().
struct PassInput {
  const v1::SessionCapture& head;
  const v1::SessionCapture* base = nullptr;  // null: no base capture in this request
  const PassOptions& options;
  const std::atomic<bool>* cancelled = nullptr;

  bool Cancelled() const { return cancelled != nullptr && cancelled->load(std::memory_order_relaxed); }
};

class Pass {
 public:
  virtual ~Pass() = default;

  // The pass's name on the command line (`--passes recompile,...`) and in timings.
  virtual absl::string_view Name() const = 0;
  // The AnalysisReport field this pass fills ("recompile", "ir_diff", ...).
  virtual absl::string_view Section() const = 0;
  // Fills `out`'s section (and may append to `out->diagnostics`). An error status becomes the
  // section's ERROR reason; whatever else the pass wrote is discarded.
  virtual absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const = 0;
};

}  // namespace cl

#endif  // ANALYZERS_PASS_H_

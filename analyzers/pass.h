// The analysis pass interface.
//
// A pass is a pure function of the session: it reads the head capture (and the base capture when
// the request has one) and fills its own section of an AnalysisReport. It never does I/O, never
// touches metrics and never sees gRPC types. The engine (service/engine.h) runs passes in parallel,
// each into a report of its own, and merges the sections; a pass that fails gets its section marked
// ERROR while the rest of the report still comes back.
//
// To add a pass: implement Pass in analyzers/<family>/<name>.{h,cc}, give it the name of the report
// section it fills (a field of AnalysisReport whose message has `status` and `reason`), and list it
// in analyzers/registry.cc. That list is the only place passes are registered.
//
// A pass that takes settings from the request (a field of AnalyzeOptions) parses them itself, in
// Prepare, into a field of PassOptions that names it as the filler; Run reads that field. Prepare
// runs for every registered pass before any pass runs, on the request's options over the server's
// own (cl-server's flags, prepared the same way at its start), so an option that does not parse
// refuses the request (INVALID_ARGUMENT naming it) whichever passes were selected, and a server
// whose flags do not parse does not start. The lint pass's correctness DB is the example.
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
#include "compile_lens/v1/service.pb.h"

namespace cl {
namespace lint {
class CorrectnessDb;
}  // namespace lint
class LoweredFacts;

namespace v1 = ::compile_lens::v1;

// What the passes made of a request's options (Pass::Prepare), read-only while they run. Each
// field is filled by one pass's Prepare and read by that pass alone.
struct PassOptions {
  // LintPass: the correctness DB that rates the findings, the request's (AnalyzeOptions
  // .correctness_db), else the server's (cl-server --correctness_db); null when there is neither.
  std::shared_ptr<const lint::CorrectnessDb> correctness_db;
};

// What a pass reads. The captures outlive the pass; `cancelled` flips when the caller gives up,
// and a long pass should poll it and return absl::CancelledError().
struct PassInput {
  const v1::SessionCapture& head;
  const v1::SessionCapture* base = nullptr;  // null: no base capture in this request
  const PassOptions& options;
  const std::atomic<bool>* cancelled = nullptr;
  // What the passes read of the head's lowered post-grad graphs' nodes, when the import kept that
  // instead of the nodes (analyzers/lowered_facts.h); null: the passes read the nodes.
  const LoweredFacts* head_lowered = nullptr;

  bool Cancelled() const {
    return cancelled != nullptr && cancelled->load(std::memory_order_relaxed);
  }
};

class Pass {
 public:
  virtual ~Pass() = default;

  // The pass's name on the command line (`--passes recompile,...`) and in timings.
  virtual absl::string_view Name() const = 0;
  // The AnalysisReport field this pass fills ("recompile", "ir_diff", ...).
  virtual absl::string_view Section() const = 0;
  // Parses the settings this pass takes from `request` into its own field of `*options`, which
  // holds what the server's options gave (or nothing) when called: a field the request leaves unset
  // keeps that. An error refuses the request, so it names the option and what is wrong with it.
  // Most passes take no settings and keep this default.
  virtual absl::Status Prepare(const v1::AnalyzeOptions& request, PassOptions* options) const {
    return absl::OkStatus();
  }
  // Fills `out`'s section (and may append to `out->diagnostics`). An error status becomes the
  // section's ERROR reason; whatever else the pass wrote is discarded.
  virtual absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const = 0;
};

}  // namespace cl

#endif  // ANALYZERS_PASS_H_

// The cache-stability pass: compiled artifacts that went silently stale — state the compiled code
// depends on changed, no recompile followed, and the cached entry kept serving calls
// (docs/design.md §5.3, docs/torch-semantics.md §4.3).
//
// It reads the iterations compile_lens.track recorded: per call, the cache entry that served it
// (compile_id), whether the call compiled it (recompiled), a fingerprint map of the state that
// could affect codegen, and, when an eager reference ran, its verdict (output_diverged).
//
// Per frame, each cache entry c has a baseline: the state of the iteration that compiled c, or
// when the log has none, the first iteration c served. Every later call served by c without a
// recompile is compared with that baseline, key by key (a key on one side only counts as changed),
// leaving out the keys that change every step by design (RNG state, `._version` counters, step
// counts), which are only listed as context (noisy_keys). A changed key is
//   STALE       when the call's output diverged from eager while the entry matched eager when it
//               was compiled (or was not checked then): the error this section exists for;
//   SUSPICIOUS  when no eager reference ran for the call and the serving entry's guards do not
//               read the key (analyzers/recompile/guard_sources.h), so nothing would have noticed;
//               not said when the log recorded no guards for the entry;
// and otherwise (the eager check passed) not a finding. Each (frame, entry, key, verdict) is
// reported once, at its first iteration, with the number of later iterations that repeat it.
// Confidence is 1 / the number of keys that changed at that call. State changes a recompile
// followed are counted as benign_changes: the recompile section explains those.
#ifndef ANALYZERS_RUNTIME_CACHE_STABILITY_H_
#define ANALYZERS_RUNTIME_CACHE_STABILITY_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analyzers/pass.h"

namespace cl {

class CacheStabilityPass : public Pass {
 public:
  absl::string_view Name() const override { return "cache_stability"; }
  absl::string_view Section() const override { return "cache_stability"; }
  // SKIPPED when the head capture tracked no iterations; CancelledError when `in` is cancelled.
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override;
};

}  // namespace cl

#endif  // ANALYZERS_RUNTIME_CACHE_STABILITY_H_

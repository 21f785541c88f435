// The divergence pass: where the compiled model first leaves eager, and what the compiler bisect
// blamed (docs/design.md §5.4).
//
// It reads the check compile_lens.check_divergence recorded (SessionCapture.divergence): one entry
// per layer in forward order, each the layer's isolated comparison (the eager input of the layer
// fed to the compiled layer, so upstream error does not count against it) and the accumulated one,
// and the bisect that toggled backends, passes and configs until the verdict flipped. The first
// layer that failed its tolerance, or produced NaN / Inf, is the first divergent layer; its figures
// and the bisect's culprit and steps are the section. Severity says whether it is a bug: a culprit
// of config `fallback_random` is RNG parity (INFO), `emulate_precision_casts` expected
// low-precision rounding (LOW); any other divergence is an ERROR.
#ifndef ANALYZERS_RUNTIME_DIVERGENCE_H_
#define ANALYZERS_RUNTIME_DIVERGENCE_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analyzers/pass.h"

namespace cl {

class DivergencePass : public Pass {
 public:
  absl::string_view Name() const override { return "divergence"; }
  absl::string_view Section() const override { return "divergence"; }
  // SKIPPED when the head capture carries no divergence check.
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override;
};

}  // namespace cl

#endif  // ANALYZERS_RUNTIME_DIVERGENCE_H_

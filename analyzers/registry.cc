#include "analyzers/registry.h"

#include "analyzers/compile_time/compile_time.h"
#include "analyzers/failures/failures.h"
#include "analyzers/fusion/fusion.h"
#include "analyzers/ir_diff/ir_diff.h"
#include "analyzers/lint/lint.h"
#include "analyzers/ranks/cross_rank.h"
#include "analyzers/recompile/recompile.h"
#include "analyzers/roofline/roofline.h"
#include "analyzers/runtime/cache_stability.h"
#include "analyzers/runtime/divergence.h"

namespace cl {

const std::vector<const Pass*>& RegisteredPasses() {
  // The one place passes are registered: add a new pass here, in report order.
  static const auto* const kPasses = new std::vector<const Pass*>{
      new FailuresPass(),    new CrossRankPass(),      new IrDiffPass(),     new RecompilePass(),
      new CompileTimePass(), new CacheStabilityPass(), new DivergencePass(), new LintPass(),
      new FusionPass(),      new RooflinePass(),
  };
  return *kPasses;
}

const Pass* FindPass(absl::string_view name) {
  for (const Pass* pass : RegisteredPasses()) {
    if (pass->Name() == name) return pass;
  }
  return nullptr;
}

absl::StatusOr<PassOptions> PrepareOptions(const std::vector<const Pass*>& passes,
                                           const v1::AnalyzeOptions& request,
                                           PassOptions defaults) {
  for (const Pass* pass : passes) {
    if (absl::Status status = pass->Prepare(request, &defaults); !status.ok()) return status;
  }
  return defaults;
}

}  // namespace cl

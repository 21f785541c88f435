#include "analyzers/registry.h"

#include "analyzers/cache_stability.h"
#include "analyzers/cross_rank.h"
#include "analyzers/divergence.h"
#include "analyzers/fusion.h"
#include "analyzers/ir_diff.h"
#include "analyzers/lint.h"
#include "analyzers/recompile.h"
#include "analyzers/roofline.h"

namespace cl {

const std::vector<const Pass*>& RegisteredPasses() {
  // The one place passes are registered: add a new pass here, in report order.
  static const auto* const kPasses = new std::vector<const Pass*>{
      new CrossRankPass(),
      new IrDiffPass(),
      new RecompilePass(),
      new CacheStabilityPass(),
      new DivergencePass(),
      new LintPass(),
      new FusionPass(),
      new RooflinePass(),
  };
  return *kPasses;
}

const Pass* FindPass(absl::string_view name) {
  for (const Pass* pass : RegisteredPasses()) {
    if (pass->Name() == name) return pass;
  }
  return nullptr;
}

}  // namespace cl

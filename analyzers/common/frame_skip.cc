#include "analyzers/common/frame_skip.h"

#include "capture/guarded_sources.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

bool CompiledNothing(const v1::Compile& compile) {
  if (compile.status() != v1::Compile::OK && compile.status() != v1::Compile::EMPTY_GRAPH)
    return false;
  if (compile.graph_breaks().empty() || !compile.graph_ids().empty() || compile.guard_count() > 0 ||
      GuardedSourceCount(compile) > 0)
    return false;
  // Null, not missing: a torch whose metrics have no such field says nothing either way.
  const auto& metrics = compile.metrics().fields();
  const auto null = [&metrics](const char* name) {
    auto it = metrics.find(name);
    return it != metrics.end() && it->second.has_null_value();
  };
  return null("guard_count") && null("graph_op_count");
}

}  // namespace cl

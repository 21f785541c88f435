#include "analyzers/common/frame_skip.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

bool CompiledNothing(const v1::Compile& compile) {
  if (compile.status() != v1::Compile::OK && compile.status() != v1::Compile::EMPTY_GRAPH)
    return false;
  if (compile.graph_breaks().empty() || !compile.graph_ids().empty() || compile.guard_count() > 0 ||
      !compile.guarded_sources().empty())
    return false;
  const auto& metrics = compile.metrics().fields();
  if (metrics.empty()) return false;
  const auto unset = [&metrics](const char* name) {
    auto it = metrics.find(name);
    return it == metrics.end() || it->second.has_null_value();
  };
  return unset("guard_count") && unset("graph_op_count");
}

}  // namespace cl

// Reads which sources a cache entry's guards read from torch's guard tree text, the payload of
// the `dynamo_cpp_guards_str` record:
//
//   TREE_GUARD_MANAGER:
//   +- RootGuardManager
//   | +- GLOBAL_STATE: ___check_global_state()
//   | +- GuardManager: source=L['x'], accessed_by=DictGetItemGuardAccessor('x')
//   | | +- TENSOR_MATCH: check_tensor(L['x'], ...)
//
// Every manager node names its source (`source=X`, up to `, accessed_by` or the end of the line);
// the guards under it only check it. A GLOBAL_STATE guard covers grad mode, autocast and the
// other global torch state, which no source names, so it is reported as the source "GLOBAL_STATE".
// The cache-stability pass reads the result (Compile.guarded_sources) to tell whether a state
// change could have been seen by the entry's guards.
#ifndef CAPTURE_TORCH_TRACE_GUARD_TREE_H_
#define CAPTURE_TORCH_TRACE_GUARD_TREE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cl {

struct GuardTreeProblem {
  size_t line = 0;  // 0-based line of the payload
  std::string what;
};

struct GuardTreeSources {
  std::vector<std::string> sources;  // distinct, in order of first appearance
  std::vector<GuardTreeProblem> problems;
  bool has_tree = false;  // at least one "+- " node line was seen
};

GuardTreeSources ReadGuardSources(absl::string_view payload);

}  // namespace cl

#endif  // CAPTURE_TORCH_TRACE_GUARD_TREE_H_

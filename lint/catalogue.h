// The built-in pattern catalogue (docs/torch-semantics.md §5.2): every pattern with its detector
// kind, default parameters, message and remedy, and no severity. A correctness DB rates these (by
// id) and may override their parameters; without one they are "candidate patterns — not yet
// escalated".
#ifndef LINT_CATALOGUE_H_
#define LINT_CATALOGUE_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "lint/pattern.h"

namespace cl::lint {

const std::vector<PatternSpec>& BuiltinPatterns();
const PatternSpec* FindBuiltinPattern(absl::string_view id);

}  // namespace cl::lint

#endif  // LINT_CATALOGUE_H_

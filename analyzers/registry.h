// The single registry of analysis passes.
#ifndef ANALYZERS_REGISTRY_H_
#define ANALYZERS_REGISTRY_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "analyzers/pass.h"

namespace cl {

// Every pass, in report order. The passes are stateless and live for the whole program.
const std::vector<const Pass*>& RegisteredPasses();

// The pass called `name`, or null.
const Pass* FindPass(absl::string_view name);

}  // namespace cl

#endif  // ANALYZERS_REGISTRY_H_

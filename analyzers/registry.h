// The single registry of analysis passes.
#ifndef ANALYZERS_REGISTRY_H_
#define ANALYZERS_REGISTRY_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analyzers/pass.h"

namespace cl {

// Every pass, in report order. The passes are stateless and live for the whole program.
const std::vector<const Pass*>& RegisteredPasses();

// The pass called `name`, or null.
const Pass* FindPass(absl::string_view name);

// What `passes` make of `request` over `defaults` (each pass's Prepare, in order): the first
// error, which names the option a pass refused.
absl::StatusOr<PassOptions> PrepareOptions(const std::vector<const Pass*>& passes,
                                           const v1::AnalyzeOptions& request,
                                           PassOptions defaults = {});

}  // namespace cl

#endif  // ANALYZERS_REGISTRY_H_

// What one recompile is filed under, from the reasons torch gave against each cache entry: the
// recompile pass clusters on it, and the compile-time pass charges a recompile's seconds to it.
#ifndef ANALYZERS_RECOMPILE_CAUSE_H_
#define ANALYZERS_RECOMPILE_CAUSE_H_

#include <vector>

#include "analyzers/recompile/reason.h"

namespace cl {

// What a recompile is filed under. Torch reports, per cache entry, the first guard that failed
// against it; what the call brought that no entry had fails against every entry whose check got
// that far, so the (category, axis) named against the most entries is the cause. On a tie (a
// GPT called with batch 2→4, then sequence 16→32: idx[0] against 0/0, idx[1] against 0/1), it is
// what changed since the newest entry, the last compile. Newest means the highest compile id
// torch names, whatever the order of the bullets. A global state guard names every state that
// differs from the entry's ("deterministic_algorithms default_dtype" against the entry made under
// deterministic algorithms, "default_dtype" against the one before it): each state counts on its
// own, and the cause is the failure all of whose states are named against the most entries.
std::vector<const GuardFailure*> CauseFailures(
    const std::vector<std::vector<GuardFailure>>& bullets);

// The cause failures of one compile's recompile_reasons (empty when it has none), parsed.
struct RecompileCause {
  std::vector<std::vector<GuardFailure>> bullets;  // one per reason, as ParseRecompileReason
  std::vector<const GuardFailure*> causes;         // into bullets
};
RecompileCause ParseRecompileCause(const v1::Compile& compile);

}  // namespace cl

#endif  // ANALYZERS_RECOMPILE_CAUSE_H_

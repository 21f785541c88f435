// The recompile pass's advice: for each cluster of recompiles, the remedy to apply and the
// evidence behind it (docs/torch-semantics.md §1.6, §1.7), and the suggestion a cache-limit
// hit gives. The text is the report's (Suggestion.text, Suggestion.evidence); the pass decides
// which cluster gets advice, and in what order.
#ifndef ANALYZERS_RECOMPILE_ADVICE_H_
#define ANALYZERS_RECOMPILE_ADVICE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzers/pass.h"
#include "analyzers/recompile/frames.h"
#include "analyzers/recompile/reason.h"

namespace cl {

// The recompiles of one frame whose primary guard failure has one category and axis: what the
// pass files recompiles under, and what one suggestion explains.
struct Cluster {
  uint32_t frame_id = 0;
  v1::RecompileCategory::Value category = v1::RecompileCategory::UNSPECIFIED;
  std::string axis;
  GuardFailure example;  // the first primary failure: variable, dim, rule, check
  uint32_t count = 0;
  std::vector<std::string> transitions;     // "16→32", deduplicated, in order
  std::vector<std::string> guarded_values;  // expected values of guards that print no actual
  // What torch named against the frame's cache entries that no cluster of the frame is filed
  // under ("module_mode of self.drop.training"), on the frame's largest cluster: torch names one
  // failing guard per entry, so a call that changed two things shows one against one entry and the
  // other against another, and is filed under one.
  std::vector<std::string> also;
  // The user's source line a failing guard on this axis came from (torch's `  # for t in
  // range(steps):  # file:line` comment, before its own file), when any entry's guard said it:
  // where the code needs the exact value, so that torch specialised it.
  std::string specialized_by;
  // For a size: the user's line ("model.py:8") where a compile made it a constant (torch's
  // symbolic_shape_specialization), with `specialized_by` that line's code when the capture holds
  // the file.
  std::string size_specialized_at;
  // Where torch's own code added the failing guard ("_dynamo/debug_utils.py:661 in tensor"), when
  // its comment names no user line.
  std::string guard_added_in;
  // The fail_type of each recompile of the cluster that torch failed to compile (any attempt).
  std::vector<std::string> failed;
  size_t first_seen = 0;

  // Reads what `g`'s source comment says asked for the guard: the user's line (specialized_by)
  // or, where the comment names only torch's code, the frame of torch's that added it
  // (guard_added_in). The recompile pass and the compile-time ledger read it alike.
  void NoteGuardComment(const GuardFailure& g) {
    specialized_by = g.UserCode();
    if (specialized_by.empty()) guard_added_in = g.TorchFrame();
  }
};

// One cluster's remedy. `expected`: it explains torch's expected behaviour, nothing to change.
struct Advice {
  std::string text;
  bool expected = false;
};

// The remedy for `c`, a cluster of recompiles of `frame`.
Advice Advise(const Cluster& c, const FrameStats& frame);

// One remedy for several dimensions of one input that keep changing size (size clusters of one
// frame and variable, two or more): mark each dynamic, or compile with dynamic=True.
std::string AdviseSizes(const std::vector<const Cluster*>& dims);

// One suggestion for the global states a frame recompiled on (`deterministic_algorithms`,
// `num_threads`: the clusters of rule global_state), each with the call that sets it.
std::string AdviseGlobalStates(const std::vector<const Cluster*>& states);

// What `c` rests on: its category and axis, the recompiles and values seen, and the dynamo
// configuration that makes it a problem. `several_frames`: name the frame.
std::string Evidence(const Cluster& c, const FrameStats& frame, bool several_frames);

// The suggestion for a frame that reached a cache limit.
std::string AdviseCacheLimit(const v1::CacheLimitHit& hit);

}  // namespace cl

#endif  // ANALYZERS_RECOMPILE_ADVICE_H_

// Which tracked state keys a cache entry's guards read.
//
// The capture names state the way compile_lens.track writes it ("model.blocks.0.up.weight",
// "inputs.x", "globals.scale", "torch.grad_mode"); the importer names guarded sources the way
// dynamo does ("L['self']._modules['blocks']._modules['0']._modules['up']._parameters['weight']",
// "L['x']", "G['scale']", and "GLOBAL_STATE" for the global-state guard). This maps the second
// onto the first, for the cache-stability pass (docs/torch-semantics.md §4.3).
#ifndef ANALYZERS_RECOMPILE_GUARD_SOURCES_H_
#define ANALYZERS_RECOMPILE_GUARD_SOURCES_H_

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

// A guard source as a state key: `L['self']` → `model`, other `L['name']` → `inputs.name`,
// `G['name']` → `globals.name`; `._modules['a']`, `._parameters['w']`, `._buffers['b']` and
// `.__dict__['x']` → `.a`, `.w`, `.b`, `.x`; any other `['k']` or `[0]` → `.k`, `.0`. What it does
// not recognise is copied as it is (and so matches no key).
std::string StateKeyOfGuardSource(absl::string_view source);

// The state keys one compile's guards read.
class GuardedKeys {
 public:
  // `frame` is the compile's frame (null if the capture has none), whose table its guards' sources
  // may index (capture/guarded_sources.h).
  GuardedKeys(const compile_lens::v1::Frame* frame, const compile_lens::v1::Compile& compile);

  // False when the log recorded no guard tree for the compile: nothing can be said then.
  bool known() const { return known_; }
  // Whether a change of `key` would have failed a guard: the key is a guarded source, or one of
  // the global torch state fields dynamo's GLOBAL_STATE guard checks when the entry has it.
  bool Guards(absl::string_view key) const;

 private:
  bool known_ = false;
  bool global_state_ = false;
  absl::flat_hash_set<std::string> keys_;
};

}  // namespace cl

#endif  // ANALYZERS_RECOMPILE_GUARD_SOURCES_H_

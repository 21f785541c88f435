// Parsing torch.compile recompile (guard-failure) reasons.
//
// Torch explains a recompile with one verbatim string per failing cache entry. Its format has
// changed with nearly every 2.x release (docs/torch-semantics.md §1.1–§1.3): a compile-id
// prefix ("0/0: ") or none, `L['x']` or `x`, log-line prefixes, `; `-joined checks, trailing
// `  # source` comments, `- ` bullets, whole "Recompiling function ..." records. This file turns
// any of them into GuardFailures with a category from the ordered RE2 rule table of §1.5, so that
// the recompile pass can cluster and explain them. It also reads the cache-limit warning (§1.1
// item 4), whose "last reason" is itself a reason.
//
// The functions are pure and thread-compatible; the compiled RE2s are process-wide constants.
#ifndef ANALYZERS_RECOMPILE_REASON_H_
#define ANALYZERS_RECOMPILE_REASON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// One failing guard check against one cache entry.
struct GuardFailure {
  std::string entry_id;  // the cache entry whose guard failed ("0/0"), when the text names it
  // The report's category (report.proto; dashboards group by it), which collects several rules.
  v1::RecompileCategory::Value category = v1::RecompileCategory::UNSPECIFIED;
  // The §1.5 rule that matched: "size", "rank", "stride", "dtype", "device_index",
  // "dispatch_key", "requires_grad", "tensor_type", "type_id", "obj_id", "global_state",
  // "global_flag", "default_device", "backend", "aliasing", "length", "dynamic_marker",
  // "symbolic", "symbolic_value", "container_keys", "hasattr", "module_state", "transform_state",
  // "data_ptr", "value", "unknown", "other".
  std::string rule;
  // The guarded source with `L['..']` stripped ("x", "self.training"); globals stay "G['..']".
  // For global_state it names the changed state ("grad_mode", "default_dtype").
  std::string variable;
  std::string dim;  // the tensor dimension, for size / stride / symbolic guards on one
  std::string expected;
  std::string actual;
  std::string check;   // the normalised check text the rule matched
  std::string source;  // the trailing `  # ...` comment (user source line), when present

  // What the pass clusters on: "x[0]" for a dimension, "x.ndim" for rank, "len(x)" for a
  // length, otherwise the variable.
  std::string Axis() const;
  // Each thing the failure names as changed: the Axis, or for a global_state failure each state
  // of "allow_tf32, num_threads" (one call can change several).
  std::vector<std::string> ChangedAxes() const;
  // The user's code `source` quotes, before torch's own "  # file:line in fn (...)" ("if
  // x.shape[0] > 8:"); empty when the comment names only a frame of torch's, or quotes torch's
  // own code ("return F.conv2d(  # nn/modules/conv.py:549 in _conv_forward").
  std::string UserCode() const;
  // Where torch's own code added the guard, when no line of the user's did: the frame the
  // comment names alone ("_dynamo/debug_utils.py:661 in tensor", written with or without
  // parentheses), or, for torch's code quoted, the torch frame in parentheses after it
  // ("_subclasses/fake_impls.py:743 in conv"), else that code's frame; empty otherwise.
  std::string TorchFrame() const;
};

// Parses one verbatim reason: a recompile_reasons element, a compilation_metrics
// recompile_reason, a log line or a whole "Recompiling function" record. Returns one failure per
// check, in text order (newest cache entry first); never empty: text with no usable check gives
// one `unknown` failure, text no rule knows gives `other`.
std::vector<GuardFailure> ParseRecompileReason(absl::string_view text);

// Classifies one check (no bullet, compile id or source comment); normalises `L['x']` itself.
GuardFailure ClassifyGuardCheck(absl::string_view check);

// The keys two dispatch key sets as torch prints them (`DispatchKeySet(CPU, BackendSelect)`) do not
// share, sorted.
std::vector<std::string> DispatchKeysDiffering(absl::string_view expected,
                                               absl::string_view actual);

// `L['x']` → `x`, as torch's own strip_local_scope does from ≈2.8 on.
std::string StripLocalScope(absl::string_view text);

// A guard source as the user wrote it: `model._modules['layers']._modules['0'].attention` →
// `model.layers[0].attention` (also `_parameters`, `_buffers`). A failure's `variable` is this.
std::string ReadableSource(absl::string_view source);

// Removes a glog / 2.1 logging / `[rankN]:` prefix from one log line (§1.5 Step B).
absl::string_view StripLogPrefix(absl::string_view line);

// A "hit the cache limit" message from torch (§1.1 item 4): the warning, the oldest torchdynamo
// form, FailOnRecompileLimitHit and the "Dynamo recompile limit exceeded" graph break.
struct CacheLimitMessage {
  std::string limit;              // recompile_limit, cache_size_limit, accumulated_..., as named
  std::optional<uint64_t> value;  // absent when the text does not say
  std::string function;           // the frame's co_name, when named
  std::string file;
  uint32_t line = 0;
  std::string last_reason;  // verbatim, when given
};

// Finds a cache-limit message anywhere in `text` (which may be a whole traceback).
std::optional<CacheLimitMessage> ParseCacheLimitMessage(absl::string_view text);

}  // namespace cl

#endif  // ANALYZERS_RECOMPILE_REASON_H_

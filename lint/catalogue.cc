#include "lint/catalogue.h"

namespace cl::lint {
namespace {

PatternSpec Pattern(const char* id, DetectorKind kind, Scope scope, double confidence,
                    const char* message, const char* remedy) {
  PatternSpec p;
  p.id = id;
  p.kind = kind;
  p.scope = scope;
  p.confidence = confidence;
  p.message = message;
  p.remedy = remedy;
  return p;
}

std::vector<PatternSpec> Make() {
  std::vector<PatternSpec> out;
  {
    PatternSpec p =
        Pattern("in_place_op_on_alias", DetectorKind::kInplaceOnAlias, Scope::kCompiledRegion, 0.7,
                "in-place `{op}` on `{name}`, which shares storage with `{base}`",
                "use the out-of-place op, or clone() before mutating");
    p.params.exclude_methods = {"requires_grad_", "share_memory_", "retain_grad_",
                                "record_stream_"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p =
        Pattern("setitem_on_overlapping_view", DetectorKind::kSubscriptAssignOverlap,
                Scope::kCompiledRegion, 0.6, "write into `{name}` through overlapping memory",
                "materialize with .contiguous() or .clone() first; use torch.roll or torch.cat "
                "for shifts");
    p.params.method_names = {"index_add_",    "index_copy_", "index_fill_",  "index_put_",
                             "index_reduce_", "scatter_",    "scatter_add_", "masked_scatter_"};
    out.push_back(std::move(p));
  }
  out.push_back(Pattern("data_attribute_use", DetectorKind::kDataAttr, Scope::kCompiledRegion, 0.8,
                        "`{op}` on `{name}` bypasses autograd and alias tracking",
                        "with torch.no_grad(): p.copy_(t)"));
  {
    PatternSpec p =
        Pattern("resize_or_set_on_view", DetectorKind::kStorageChangeOnView, Scope::kCompiledRegion,
                0.8, "storage-changing `{op}` on `{name}`", "allocate a new tensor instead");
    p.params.method_names = {"resize_", "resize_as_", "set_"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p = Pattern(
        "custom_op_mutation_undeclared", DetectorKind::kCustomOpMutation, Scope::kAnywhere, 0.8,
        "custom op `{base}` writes `{name}` (`{op}`) without declaring it",
        "declare every mutated argument in mutates_args, and never alias mutated arguments");
    p.params.exclude_methods = {"requires_grad_", "retain_grad_"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p =
        Pattern("data_dependent_control_flow", DetectorKind::kDataDependentControl,
                Scope::kCompiledRegion, 0.6, "data-dependent `{op}` in the compiled region",
                "torch.where or torch.cond instead of Python branches; capture_scalar_outputs=True "
                "with torch._check for .item()");
    p.params.method_names = {"item", "tolist", "nonzero"};
    p.params.function_names = {"torch.nonzero", "torch.unique", "torch.unique_consecutive",
                               "torch.masked_select", "torch.argwhere"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p =
        Pattern("python_side_effect_in_forward", DetectorKind::kSideEffect, Scope::kCompiledRegion,
                0.6, "Python side effect `{op}` on `{name}` in the compiled region",
                "return values instead, or move the side effect out of the compiled function");
    p.params.method_names = {"append", "extend", "insert",  "pop",        "clear",   "update",
                             "add",    "remove", "discard", "setdefault", "popitem", "__setitem__"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p =
        Pattern("python_random_in_compiled", DetectorKind::kCallInRegion, Scope::kCompiledRegion,
                0.9, "Python RNG `{op}` in the compiled region",
                "draw outside the compiled function and pass the result in, or use torch RNG ops");
    p.params.function_names = {"re:^random\\.", "re:^numpy\\.random\\."};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p = Pattern(
        "torch_rng_parity", DetectorKind::kCallInRegion, Scope::kCompiledRegion, 0.9,
        "torch RNG `{op}` in the compiled region: Inductor's Philox stream differs from eager",
        "torch._inductor.config.fallback_random = True for bitwise parity with eager");
    p.params.function_names = {"torch.rand",
                               "torch.rand_like",
                               "torch.randn",
                               "torch.randn_like",
                               "torch.randint",
                               "torch.randint_like",
                               "torch.randperm",
                               "torch.bernoulli",
                               "torch.multinomial",
                               "torch.normal",
                               "torch.poisson",
                               "torch.nn.functional.dropout",
                               "torch.nn.functional.dropout1d",
                               "torch.nn.functional.dropout2d",
                               "torch.nn.functional.dropout3d",
                               "torch.nn.functional.alpha_dropout",
                               "torch.nn.functional.feature_alpha_dropout",
                               "torch.nn.functional.rrelu",
                               "torch.nn.functional.gumbel_softmax",
                               "torch.manual_seed",
                               "torch.Generator",
                               "torch.cuda.manual_seed",
                               "torch.cuda.manual_seed_all",
                               "re:^torch\\.Generator\\(\\)\\."};
    p.params.method_names = {"normal_",    "uniform_",    "bernoulli_", "exponential_",
                             "geometric_", "log_normal_", "cauchy_",    "random_"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p =
        Pattern("grad_mode_inside_compiled", DetectorKind::kGradMode, Scope::kCompiledRegion, 0.8,
                "grad-mode change `{op}` inside the compiled region",
                "set grad mode outside the compiled function, or verify the gradients");
    p.params.function_names = {"torch.no_grad",
                               "torch.enable_grad",
                               "torch.set_grad_enabled",
                               "torch.inference_mode",
                               "torch.autograd.grad",
                               "torch.autograd.backward",
                               "torch.autograd.functional.jacobian",
                               "torch.autograd.functional.vjp",
                               "torch.func.grad",
                               "torch.func.grad_and_value",
                               "torch.func.vjp",
                               "torch.func.jvp",
                               "torch.func.jacrev",
                               "torch.func.jacfwd",
                               "torch.func.hessian"};
    out.push_back(std::move(p));
  }
  out.push_back(
      Pattern("module_attr_mutation", DetectorKind::kModuleAttr, Scope::kAnywhere, 0.6,
              "`{name}` is written (`{op}`) while a compiled forward depends on it",
              "pass flags as forward arguments or tensors; keep guard_nn_modules / "
              "inline_inbuilt_nn_modules on; torch._dynamo.reset() after structural changes"));
  out.push_back(Pattern("global_rebinding_read_in_compiled", DetectorKind::kGlobalRebind,
                        Scope::kCompiledRegion, 0.6,
                        "global `{name}` is read in the compiled region and rebound elsewhere",
                        "pass it as an argument"));
  {
    PatternSpec p =
        Pattern("python_scalar_args", DetectorKind::kScalarArgs, Scope::kAnywhere, 0.6,
                "compiled `{op}` is called with the varying Python scalar `{name}`",
                "wrap it in a 0-d tensor (torch.tensor(lr)), or mark_dynamic / specialize_float "
                "as appropriate");
    p.params.attr_names = {"lr",
                           "eps",
                           "scale",
                           "temperature",
                           "alpha",
                           "beta",
                           "momentum",
                           "weight_decay",
                           "gamma",
                           "tau",
                           "learning_rate",
                           "step_size",
                           "dropout",
                           "label_smoothing"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p = Pattern(
        "hook_change_after_compile", DetectorKind::kHookAfterCompile, Scope::kOutsideCompiledRegion,
        0.7,
        "hooks of `{name}` change (`{op}`) after `{base}` was compiled: the compiled code keeps "
        "the hooks it traced",
        "register hooks before the first compiled call and keep them, or set "
        "torch._dynamo.config.skip_nnmodule_hook_guards = False so that a hook change "
        "recompiles, or call torch._dynamo.reset() after changing hooks");
    p.params.method_names = {"register_forward_hook", "register_forward_pre_hook",
                             "register_full_backward_hook", "register_full_backward_pre_hook",
                             "register_backward_hook"};
    out.push_back(std::move(p));
  }
  {
    // Checked on torch 2.6 (CPU): an SN-GAN discriminator under the hook form, compiled and called
    // on the real and the fake batch before one backward(), raised "modified by an inplace
    // operation" (its power iteration updates `u` in place); eagerly it trained, and so did the
    // parametrization form compiled, or one compiled call on both batches.
    PatternSpec p = Pattern(
        "spectral_norm_hook_compiled", DetectorKind::kCallInRegion, Scope::kAnywhere, 0.6,
        "`{op}` (the forward-pre-hook form): compiled, a module under it that runs twice before "
        "one backward() raises \"modified by an inplace operation\"",
        "use torch.nn.utils.parametrizations.spectral_norm, or call the module once per "
        "backward (torch.cat the real and fake batches)");
    p.params.function_names = {"torch.nn.utils.spectral_norm",
                               "torch.nn.utils.spectral_norm.spectral_norm"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p = Pattern(
        "numpy_interop", DetectorKind::kCallInRegion, Scope::kCompiledRegion, 0.7,
        "NumPy `{op}` in the compiled region (traced through torch._numpy)", "use torch ops");
    p.params.function_names = {"torch.from_numpy", "re:^numpy\\."};
    p.params.exclude_functions = {"re:^numpy\\.random\\."};
    p.params.method_names = {"numpy"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p =
        Pattern("streams_events_in_compiled", DetectorKind::kCallInRegion, Scope::kCompiledRegion,
                0.8, "stream/event `{op}` in the compiled region",
                "keep stream logic outside the compiled function, or validate it carefully");
    p.params.function_names = {"torch.cuda.Stream",
                               "torch.cuda.stream",
                               "torch.cuda.Event",
                               "torch.Stream",
                               "torch.Event",
                               "torch.cuda.current_stream",
                               "torch.cuda.set_stream",
                               "re:^torch\\.cuda\\.(Stream|Event)\\(\\)\\.",
                               "re:^torch\\.(Stream|Event)\\(\\)\\."};
    p.params.method_names = {"wait_stream", "wait_event", "record_event"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p =
        Pattern("identity_or_hash_logic", DetectorKind::kCallInRegion, Scope::kCompiledRegion, 0.5,
                "identity-dependent `{op}` in the compiled region",
                "do not branch on object identity inside the compiled function");
    p.params.function_names = {"id",
                               "hash",
                               "weakref.ref",
                               "weakref.WeakKeyDictionary",
                               "weakref.WeakValueDictionary",
                               "weakref.finalize"};
    out.push_back(std::move(p));
  }
  {
    PatternSpec p = Pattern(
        "lru_cache_in_compiled", DetectorKind::kDecoratedInRegion, Scope::kCompiledRegion, 0.8,
        "`{name}` is `{op}`-wrapped and called from the compiled region: Dynamo traces "
        "through the cache",
        "torch._dynamo.assume_constant_result, or compute it outside");
    p.params.function_names = {"functools.lru_cache", "functools.cache",
                               "functools.cached_property"};
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

const std::vector<PatternSpec>& BuiltinPatterns() {
  static const auto* const kPatterns = new std::vector<PatternSpec>(Make());
  return *kPatterns;
}

const PatternSpec* FindBuiltinPattern(absl::string_view id) {
  for (const PatternSpec& p : BuiltinPatterns()) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

}  // namespace cl::lint

#include "analyzers/recompile/advice.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/number_format.h"
#include "common/utf8.h"
#include "proto/report_words.h"

namespace cl {
namespace {

using Category = v1::RecompileCategory;

std::string Code(absl::string_view s) { return absl::StrCat("`", s, "`"); }
std::string Named(absl::string_view var) {
  if (var.empty()) return "an input";
  // A resume function's `___stack0`: no name in the user's code, but what the break carried over.
  if (absl::StartsWith(var, "___stack"))
    return absl::StrCat(Code(var), " (a value the graph break carried into the code after it)");
  return Code(var);
}

std::string TorchDtype(absl::string_view scalar_type) {
  static const auto* const kNames =
      new absl::flat_hash_map<std::string, std::string>{{"Float", "float32"},
                                                        {"Half", "float16"},
                                                        {"BFloat16", "bfloat16"},
                                                        {"Double", "float64"},
                                                        {"Long", "int64"},
                                                        {"Int", "int32"},
                                                        {"Short", "int16"},
                                                        {"Char", "int8"},
                                                        {"Byte", "uint8"},
                                                        {"Bool", "bool"},
                                                        {"ComplexFloat", "complex64"}};
  auto it = kNames->find(scalar_type);
  return absl::StrCat("torch.", it != kNames->end() ? it->second : "float32");
}

// A guard's value as Python prints a float: digits with a point or an exponent, inf or nan.
bool IsFloatLiteral(absl::string_view text) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value)) return false;
  return absl::StrContains(text, ".") || absl::StrContains(text, "e") ||
         absl::StrContains(text, "E") || absl::StrContains(text, "inf") ||
         absl::StrContains(text, "nan");
}

// A global's or the module's own state (`G['log']`, `self.history`), which no caller passes in.
bool IsOwnState(absl::string_view variable) {
  return absl::StartsWith(variable, "G[") || absl::StartsWith(variable, "self.");
}

// Guarded lengths that count up by one (1, 2, 3): a container growing per call. Three of them;
// or two from empty (0, 1) for the code's own state (IsOwnState): state the code appends to.
bool GrowsByOne(const std::vector<std::string>& values, absl::string_view variable) {
  const bool own = IsOwnState(variable);
  if (values.size() < 3 && !(own && values.size() == 2 && values[0] == "0")) return false;
  int64_t previous = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(values[i], &n) || (i > 0 && n != previous + 1)) return false;
    previous = n;
  }
  return true;
}

// Torch's automatic dynamic: on unless the run compiled with dynamic=False. Under it a size, an int
// or (with specialize_float off) a float that changed once was made dynamic by that recompile.
bool AutomaticDynamic(const FrameStats& frame) {
  return frame.config.automatic_dynamic_shapes != false;
}
constexpr char kExpectedOnce[] = " — expected; nothing to change unless it keeps recompiling.";

Advice AdviseSize(const Cluster& c, const FrameStats& frame) {
  const GuardFailure& f = c.example;
  // A tensor the module (or a global) holds, which no caller passes: seen on torch 2.6 in a
  // YOLO-style head whose grid starts as `torch.empty(0)` and is built by forward on the first
  // call, so the second call found it 5-D.
  if (f.rule == "rank" && IsOwnState(f.variable)) {
    return {absl::StrCat(Named(f.variable), " is ",
                         absl::StartsWith(f.variable, "G[") ? "a global" : "the module's own state",
                         ", not an argument, and its number of dimensions changed (",
                         absl::StrJoin(c.transitions, ", "),
                         "): code replaced it between calls, as a cache that forward fills on its "
                         "first call does (a detection head's grid, an empty placeholder until "
                         "then)",
                         c.count == 1 ? kExpectedOnce : ".",
                         " To save the compile, fill it before the first compiled call (build it "
                         "in `__init__`, or make one eager call)."),
            c.count == 1};
  }
  if (f.rule == "rank") {
    return {absl::StrCat(Named(f.variable), " is passed with a different number of dimensions (",
                         absl::StrJoin(c.transitions, ", "),
                         ") — each rank is its own graph: split the call sites, or reshape to one "
                         "rank before the call.")};
  }
  // Torch specialises sizes 0 and 1 (no symbol for them): a change to one is no dynamic graph.
  // Past the batch dim a 1 is most often a step that always has it (a decode step of one token
  // after the prompt's prefill): its graph then serves every such call.
  if (c.count == 1 && f.actual == "1" && !f.dim.empty() && f.dim != "0") {
    return {absl::StrCat(Named(f.variable), " dim ", f.dim, " changed to 1 (",
                         absl::StrJoin(c.transitions, ", "),
                         "): torch specialises sizes 0 and 1, so size 1 has a graph of its own — "
                         "expected once where a step always has that size (a decode step of one "
                         "token after the prompt's prefill), which every such step then reuses; "
                         "if a size of 1 is a rare edge instead, pad it or call "
                         "`torch._dynamo.mark_unbacked(",
                         f.variable.empty() ? "x" : f.variable, ", ", f.dim,
                         ")` before the first call."),
            true};
  }
  if (c.count == 1 && (f.actual == "0" || f.actual == "1")) {
    return {absl::StrCat(
        Named(f.variable), " dim ", f.dim, " changed to ", f.actual, " (",
        absl::StrJoin(c.transitions, ", "),
        "): torch specialises sizes 0 and 1, so this graph "
        "serves only that size and another size compiles once more (then dynamic) — a last "
        "batch of one row? Drop or pad it (`DataLoader(drop_last=True)`), or call "
        "`torch._dynamo.mark_unbacked(",
        f.variable.empty() ? "x" : f.variable, ", ", f.dim, ")` before the first call.")};
  }
  // The code needs the size's exact value (a dict keyed by it, a Python `if` on it, a reshape
  // to it): torch made it a constant again, so neither automatic dynamic nor mark_dynamic helps.
  if (!c.size_specialized_at.empty() && absl::StartsWith(c.specialized_by, "for ")) {
    // Seen on torch 2.6: a Mamba-style recurrence `for t in range(x.shape[1]):` unrolled, 8 s to
    // compile at 64 steps and 11 s more at 96.
    return {absl::StrCat(
        Named(f.variable), " dim ", f.dim, " is the length of a Python loop at ",
        c.size_specialized_at, " (", Code(c.specialized_by),
        "): Dynamo unrolls the loop into the graph, so each length is a graph of its own, as long "
        "as the loop, and its compile time grows with it. Write the step as tensor ops over the "
        "whole dim (`torch.cumsum` / `torch.cumprod` for a linear recurrence, a convolution for "
        "a sliding window), or pad inputs to a few lengths.")};
  }
  if (!c.size_specialized_at.empty()) {
    return {absl::StrCat(
        Named(f.variable), " dim ", f.dim, " is specialised by the code at ", c.size_specialized_at,
        c.specialized_by.empty() ? "" : absl::StrCat(" (", Code(c.specialized_by), ")"),
        ": it needs the exact size there (a dict or cache keyed by it, a Python `if` or loop on "
        "it), so torch made it a constant again and each new size compiles once more — "
        "`mark_dynamic` would fail there instead. Make that line size-generic (compute in the "
        "graph what is looked up by size: a causal mask is `torch.ones(t, t).tril()` or "
        "`is_causal=True`; or slice one made for the largest size), or pad inputs to a few "
        "sizes.")};
  }
  if (c.count == 1 && AutomaticDynamic(frame)) {
    return {absl::StrCat(Named(f.variable), " dim ", f.dim,
                         " changed size once and torch made it dynamic (automatic dynamic "
                         "shapes)",
                         kExpectedOnce),
            true};
  }
  return {absl::StrCat(Named(f.variable), " dim ", f.dim,
                       " keeps changing size — mark it dynamic to stop the recompiles: "
                       "`torch._dynamo.mark_dynamic(",
                       f.variable.empty() ? "x" : f.variable, ", ", f.dim,
                       ")` (or compile with `dynamic=True`).")};
}

// What sets each state torch's GLOBAL_STATE guard names (torch/csrc/dynamo/guards.cpp,
// GlobalStateGuard): every one but grad_mode and torch_function is a setting a script makes once.
absl::string_view GlobalStateSetter(absl::string_view state) {
  static constexpr std::pair<absl::string_view, absl::string_view> kSetters[] = {
      {"deterministic_algorithms", "`torch.use_deterministic_algorithms`"},
      {"deterministic_algorithms_warn_only", "`torch.use_deterministic_algorithms`"},
      {"allow_tf32",
       "`torch.set_float32_matmul_precision` or `torch.backends.cuda.matmul.allow_tf32`"},
      {"allow_fp16_reduce", "`torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction`"},
      {"allow_bf16_reduce", "`torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction`"},
      {"num_threads", "`torch.set_num_threads`"},
      {"default_dtype", "`torch.set_default_dtype`"},
      {"grad_mode", "`torch.set_grad_enabled` or `torch.no_grad()`"},
  };
  for (const auto& [name, setter] : kSetters) {
    if (name == state) return setter;
  }
  return "";
}

// The calls that set the states a global_state failure names, each once.
std::vector<std::string> Setters(const GuardFailure& f) {
  std::vector<std::string> setters;
  for (const std::string& state : f.ChangedAxes()) {
    const absl::string_view setter = GlobalStateSetter(state);
    if (!setter.empty() && std::find(setters.begin(), setters.end(), setter) == setters.end())
      setters.emplace_back(setter);
  }
  return setters;
}

Advice AdviseGlobalState(const Cluster& c) {
  const GuardFailure& f = c.example;
  if (f.rule == "dispatch_key") {
    // Only Autocast keys differ: torch.autocast was on around some calls and off around others
    // (its key joins every tensor's set while it is on).
    const std::vector<std::string> keys = DispatchKeysDiffering(f.expected, f.actual);
    if (!keys.empty() && std::all_of(keys.begin(), keys.end(), [](const std::string& key) {
          return absl::StartsWith(key, "Autocast");
        })) {
      return {absl::StrCat(
          "`torch.autocast` is on around some calls and off around others (", Code(keys.front()),
          " in ", Named(f.variable),
          "'s dispatch keys) — each autocast state is a graph of its own: enter the same "
          "autocast around every call, or compile separate callables for the autocast and "
          "full-precision paths.")};
    }
    // Only autograd keys differ (`AutogradCPU`): the call ran under torch.inference_mode() on
    // some calls and outside it on others (inference mode leaves autograd out of the set).
    if (!keys.empty() && std::all_of(keys.begin(), keys.end(), [](const std::string& key) {
          return absl::StartsWith(key, "Autograd");
        })) {
      return {absl::StrCat(
          Named(f.variable),
          " was seen inside `torch.inference_mode()` on some calls and outside "
          "it on others (",
          Code(keys.front()),
          " is missing from its dispatch keys under "
          "inference mode, or when the tensor was made there) — each is a graph of its own: "
          "serve and evaluate under one of them (`torch.no_grad()` for evaluation that shares "
          "the compiled model with training), or compile a separate callable for the inference "
          "path.")};
    }
    return {absl::StrCat(Named(f.variable),
                         " was created under a different mode in some calls (inference_mode, a "
                         "dispatch mode or a tensor subclass) — create inputs the same way every "
                         "time; use `torch.no_grad()` rather than `torch.inference_mode()` for "
                         "tensors you feed back.")};
  }
  if (f.variable == "grad_mode") {
    // A flag: both graphs stay cached. Seen on torch 2.6: a ResNet block trained and evaluated
    // under no_grad in turn, four times, recompiled once.
    return {
        "grad mode differs between calls (training, and evaluation under `torch.no_grad()`): "
        "each mode is a graph of its own — expected once where the loop does both; both stay "
        "cached, so the mode can switch every step without compiling again.",
        c.count == 1};
  }
  if (f.rule == "default_device") {
    return {
        "the default device changed between calls (`torch.set_default_device` / `with "
        "torch.device(...)`) — set it once, before the first compiled call."};
  }
  if (f.rule == "transform_state") {
    return {
        "the functorch transform state (vmap / grad level) differs between calls — call the "
        "compiled function under the same transforms every time."};
  }
  if (f.rule == "global_state" && !Setters(f).empty()) return {AdviseGlobalStates({&c})};
  return {absl::StrCat("global state ", Code(f.variable),
                       " differs between calls — set it once (at start-up) and keep it constant "
                       "around compiled calls, or compile a separate wrapper per setting; every "
                       "combination costs a cache entry.")};
}

}  // namespace

std::string AdviseGlobalStates(const std::vector<const Cluster*>& states) {
  std::vector<std::string> named;
  for (const Cluster* c : states) {
    const std::vector<std::string> setters = Setters(c->example);
    named.push_back(setters.empty() ? Code(c->example.variable)
                                    : absl::StrCat(Code(c->example.variable), " (set by ",
                                                   absl::StrJoin(setters, " and "), ")"));
  }
  return absl::StrCat(
      "torch's global state ", absl::StrJoin(named, ", "),
      " changed between compiled calls — each setting compiles a graph of its own, and every "
      "combination is one more cache entry of the frame: set ",
      states.size() == 1 ? "it" : "them", " once at start-up, before the first compiled call.");
}

std::string AdviseSizes(const std::vector<const Cluster*>& dims) {
  const std::string& variable = dims.front()->example.variable;
  const std::string name = variable.empty() ? "x" : variable;
  std::vector<std::string> numbers, marks;
  for (const Cluster* c : dims) {
    numbers.push_back(c->example.dim);
    marks.push_back(absl::StrCat("`torch._dynamo.mark_dynamic(", name, ", ", c->example.dim, ")`"));
  }
  return absl::StrCat(Named(variable), " dims ", absl::StrJoin(numbers, " and "),
                      " keep changing size — mark each dynamic to stop the recompiles: ",
                      absl::StrJoin(marks, " and "), " (or compile with `dynamic=True`).");
}

Advice Advise(const Cluster& c, const FrameStats& frame) {
  const GuardFailure& f = c.example;
  const std::string var = Named(f.variable);
  // torch's wrapper of a compiled built-in module (`inner`, whose `fn` is the module, for
  // `torch.compile(nn.Sequential(...))`): every such module compiles through the same code, so a
  // second, different module is a recompile of `inner`, not a change in the first one.
  if (frame.torch_wrapper && f.variable == "fn") {
    return {absl::StrCat(
                "Another module went through torch's wrapper of compiled built-in modules: "
                "every `torch.compile(m)` of a `torch.nn` module (an `nn.Sequential`) compiles "
                "the same function, `inner`, with the module as `fn`, so each module that differs "
                "from the ones before (here ",
                Code(c.axis),
                ") compiles a graph of its own under that one frame — expected once per module. "
                "With more than the cache limit (`torch._dynamo.config.cache_size_limit`, 8) of "
                "them, the rest run eagerly: compile the model that holds them once instead."),
            c.count < 8};
  }
  if (c.category == Category::SIZE) return AdviseSize(c, frame);
  if (c.category == Category::GLOBAL_STATE) return AdviseGlobalState(c);
  if (c.category == Category::STRIDE) {
    if (c.count == 1) {
      // A contiguous tensor's strides change with the sizes of the dims after it too: a KV cache
      // that grows recompiles once this way (its length went from 0 or 1, which torch
      // specialises, to dynamic), which no `.contiguous()` prevents.
      return {absl::StrCat(var, "'s stride on dim ", f.dim, " changed once (",
                           absl::StrJoin(c.transitions, ", "),
                           "): either it arrived as another view (transposed, sliced, "
                           "channels_last) — call `.contiguous()` or use one memory format before "
                           "the compiled call — or it is contiguous and a later dim grew (a KV "
                           "cache), which is expected once, as torch makes that size dynamic.")};
    }
    return {absl::StrCat(var, " arrives with different strides on dim ", f.dim,
                         " (a transposed, sliced or channels_last view) — call `.contiguous()` "
                         "(or use one memory format) before the compiled call.")};
  }
  if (c.category == Category::DTYPE) {
    // Evidence first: a model converted to bf16 on purpose recompiles once per dtype, which is
    // no defect; only an accidental mix wants the cast.
    return {absl::StrCat(var, " changes dtype (", absl::StrJoin(c.transitions, ", "),
                         "): if the new dtype is intended, this recompile is expected once per "
                         "dtype; otherwise cast it once at the boundary (e.g. `",
                         f.variable.empty() ? "x" : f.variable, ".to(", TorchDtype(f.expected),
                         ")`) or keep autocast consistent.")};
  }
  if (c.category == Category::DEVICE) {
    return {absl::StrCat(var,
                         f.rule == "device_index" ? " arrives on different device indices"
                                                  : " arrives on a different device type",
                         " — move inputs to one device before the call; with several GPUs in "
                         "one process expect one cache entry per device.")};
  }
  if (c.category == Category::REQUIRES_GRAD) {
    // A flag: once both graphs are cached nothing recompiles on it again. Seen on torch 2.6 in a
    // GAN (the discriminator gets a detached batch in its own step and the generator's output,
    // which needs grad, in the generator's step) and in a stack of blocks compiled one by one
    // (`layer.compile()`): the first block gets the batch, the others activations.
    return {absl::StrCat(
                var,
                " is passed with and without `requires_grad`, and each way compiles a graph of its "
                "own (one that keeps what the input's gradient needs) — expected once where both "
                "kinds of call are meant: blocks compiled one by one (`layer.compile()`), the "
                "first fed the batch and the rest activations; a GAN's discriminator fed a "
                "detached batch in its step and the generator's output in the generator's; an "
                "input-gradient penalty. Where the input's gradient is never used, pass it "
                "`.detach()`ed so one graph serves."),
            c.count == 1};
  }
  if (c.category == Category::VALUE && f.rule == "length" &&
      GrowsByOne(c.guarded_values, f.variable)) {
    // 1, 2, 3, ...: a list the compiled code appends to (a loss history kept in Python), whose
    // length every call guards.
    return {absl::StrCat(
        Code(c.axis),
        " grows by one between calls: a list or dict the code appends to on each call (a loss "
        "history, a cache kept in Python). Its length is guarded, so every call compiles again "
        "until the recompile limit, and then the function runs eagerly. Keep that bookkeeping "
        "out of the compiled function (append what it returns, after the call).")};
  }
  if (c.category == Category::VALUE && f.rule == "length") {
    // The guard does not say whether it is a list, a tuple or a dict (a batch whose keys vary).
    return {absl::StrCat(Code(c.axis),
                         " changes between calls (a list, tuple or dict whose length varies): "
                         "each length compiles a graph of its own, which is fine for a few "
                         "lengths (a feature pyramid's levels); if it takes many, give it one "
                         "length (pad it, or always pass the same keys), or pass one stacked "
                         "tensor instead.")};
  }
  if (c.category == Category::VALUE && f.rule == "obj_id") {
    return {absl::StrCat(var,
                         " flips between True / False / None — each value is its own graph: "
                         "pass it as a tensor, or branch outside the compiled function.")};
  }
  if (c.category == Category::VALUE && absl::StartsWith(f.variable, "___stack") &&
      absl::StartsWith(frame.name, "torch_dynamo_resume_in_")) {
    // Not a name in the user's code: what the call that broke the graph left on the stack, which
    // the code resumed after it receives as a constant and specializes on.
    return {absl::StrCat(
        Code(f.variable), " is the value the graph break before `", frame.name,
        "` handed to the code after it (most often the result of the call that broke the graph, "
        "such as `.item()`): each new value compiles that code again — keep it a tensor (compare "
        "with tensor ops, not a Python `if`), or set "
        "`torch._dynamo.config.capture_scalar_outputs = True` so that `.item()` stays in the "
        "graph; for a float, `torch._dynamo.config.specialize_float = False`.")};
  }
  if (c.category == Category::VALUE && !c.specialized_by.empty()) {
    // Torch named the line that needs the exact value: automatic dynamic cannot help there.
    return {absl::StrCat(
        var, " is specialised by ", Code(c.specialized_by),
        ": the code needs its exact value there (a `range()` loop count is unrolled, a Python "
        "`if` picks a path), so each value compiles a graph of its own even once automatic "
        "dynamic made it a SymInt — expected once per value if there are few; otherwise keep "
        "that code out of the compiled function (compile the loop's body, not the loop), or "
        "make the value a tensor and the loop a tensor op.")};
  }
  if (c.category == Category::VALUE) {
    // With specialize_float off (torch 2.6's default) a float that changes is made a graph input
    // on its recompile, as automatic dynamic makes a size one: once is expected.
    const bool floats_dynamic = frame.config.specialize_float == false && AutomaticDynamic(frame);
    if (floats_dynamic && c.count == 1 && IsFloatLiteral(f.expected)) {
      return {absl::StrCat(var,
                           " (a float) changed once and torch made it a graph input (automatic "
                           "dynamic; `specialize_float` is False in this run)",
                           kExpectedOnce),
              true};
    }
    // A float attribute (`self.drop.p` under a dropout schedule) recompiled more than once: torch
    // guarded it by value each time, whatever specialize_float says for arguments. (An optimizer's
    // `param_groups[0]['lr']` has its own remedy below: the optimizer takes `lr=torch.tensor(…)`.)
    if (c.count > 1 && IsFloatLiteral(f.expected) && absl::StrContains(f.variable, ".") &&
        !absl::StrContains(f.variable, "param_groups")) {
      return {absl::StrCat(
          var,
          " (a float attribute) changes between calls and torch guards it by value (here "
          "it did not make it a graph input): each value compiles again, up to the recompile "
          "limit — change it less often (per epoch, not per step), or keep the number in a "
          "tensor the code computes with (a buffer updated in place with `.fill_()`), whose "
          "value is not guarded.")};
    }
    int64_t as_int = 0;
    if (c.count == 1 && AutomaticDynamic(frame) && absl::SimpleAtoi(f.expected, &as_int)) {
      return {absl::StrCat(var,
                           " (an int) changed once and torch made it a dynamic int (a SymInt: "
                           "automatic dynamic)",
                           kExpectedOnce),
              true};
    }
    // A string (a config's activation name) picks code paths: no tensor can stand for it.
    if (f.expected.size() >= 2 && (f.expected.front() == '\'' || f.expected.front() == '"') &&
        f.expected.back() == f.expected.front()) {
      return {absl::StrCat(var,
                           " (a string) picks what the code does, and torch guards it by value: "
                           "each value compiles a graph of its own — fine where it changes at a "
                           "few phase boundaries; if it changes often, branch outside the "
                           "compiled function, or compile one callable per value.")};
    }
    // The user turned specialize_float on (2.6's default is off): each float is its own graph.
    // (An optimizer's lr keeps the tensor remedy below: the optimizer takes one.)
    if (IsFloatLiteral(f.expected) && frame.config.specialize_float == true &&
        !absl::StrContains(f.variable, "param_groups")) {
      return {absl::StrCat(var,
                           " (a float) is guarded by value because `specialize_float` is True "
                           "in this run: each value compiles a graph of its own — fine for a "
                           "few values (a pyramid's scales); for many, turn `specialize_float` "
                           "back off (torch 2.6's default), which makes the float a graph "
                           "input, or pass a tensor where the op takes one.")};
    }
    return {absl::StrCat(var,
                         " is a Python constant that changes between calls — wrap it in a "
                         "tensor (`torch.tensor(value)`) so one graph serves every value",
                         floats_dynamic ? "."
                                        : "; for ints let automatic dynamic make it a SymInt, for "
                                          "floats set `torch._dynamo.config.specialize_float = "
                                          "False`.")};
  }
  if (c.category == Category::IDENTITY) {
    if (f.rule == "data_ptr") {
      return {absl::StrCat(var,
                           "'s storage changed between calls — reuse one buffer (copy into "
                           "it) instead of passing a new tensor.")};
    }
    if (c.count >= 3) {
      return {absl::StrCat(var,
                           " is a different object on each call — create it once and reuse it "
                           "(hoist lambdas, `functools.partial` and per-call module or processor "
                           "objects out of the loop).")};
    }
    // Torch 2.6 matches True, False and None by identity too, and names no type: a flag that
    // flipped reads the same as an object made anew (a config's `use_bias`, a fresh lambda).
    return {absl::StrCat(
        var,
        " was another object than the one torch compiled for (an identity guard, "
        "`___check_obj_id`) — if it is a flag (True, False and None are matched by identity), "
        "each value is a graph of its own, expected once per value (pass it as a tensor, or "
        "branch outside the compiled function, for one graph); so is an optional argument that "
        "is None on some calls and a tensor on others (an `attention_mask=None` default: pass one "
        "kind every call, such as a mask that masks nothing); if it is an object made per call "
        "(a lambda, `functools.partial`, a module or processor), create it once and reuse it.")};
  }
  if (c.category == Category::TYPE &&
      std::any_of(c.transitions.begin(), c.transitions.end(), [](const std::string& t) {
        return absl::StrContains(t, "NoneType") &&
               (absl::StrContains(t, "a tensor") || absl::StrContains(t, "Tensor'>"));
      })) {
    // A keyword the caller passes on some calls only: Hugging Face's `model(**batch)` with
    // `labels` in training batches and not in evaluation ones (seen on torch 2.6).
    return {absl::StrCat(
                var,
                " is a tensor on some calls and None on others (an optional argument: `labels` in "
                "training batches and not in evaluation ones, a mask passed sometimes) — each "
                "combination of optional inputs is a graph of its own, expected once per "
                "combination the loop uses; if the combinations multiply, pass one kind every "
                "call (a mask that masks nothing, an all-zero `token_type_ids`)."),
            c.count == 1};
  }
  if (c.category == Category::TYPE) {
    return {absl::StrCat(
        var, " changes Python type",
        c.transitions.empty() ? "" : absl::StrCat(" (", absl::StrJoin(c.transitions, ", "), ")"),
        " — pass the same type every time (e.g. always a tensor); for a "
        "submodule of several classes, compile each class separately.")};
  }
  if (c.category == Category::SYMBOLIC_SHAPE) {
    if (f.rule == "dynamic_marker") {
      return {absl::StrCat(var,
                           " is marked dynamic on some calls and not others — call "
                           "`torch._dynamo.mark_dynamic` on it consistently, every call.")};
    }
    if (f.rule == "symbolic_value") {
      // The user's line the guard came from, before torch's own "  # file:line in fn (...)".
      const std::string line = f.UserCode();
      return {absl::StrCat(
          "a guard on the dynamic value ", var, " failed (", Code(f.expected), ")",
          line.empty() ? "" : absl::StrCat(", from ", Code(line)),
          ": the code branches on it (a `min` / `max`, an `if` or a comparison), and each "
          "outcome is a graph of its own — compute it with tensor ops (`torch.clamp`, "
          "`torch.where`) on a tensor value, or move the branch out of the compiled function.")};
    }
    if (!f.dim.empty() && !c.specialized_by.empty()) {
      // Torch named the user's branch on the size (`# if x.shape[0] > 8:`): two paths, one graph
      // each, is what the code asks for; mark_unbacked would make that branch an error.
      return {absl::StrCat("a dynamic-shape guard on ", Code(c.axis), " failed (", Code(f.expected),
                           "), from ", Code(c.specialized_by),
                           ": the code branches on the size, and each side of the branch is a "
                           "graph of its own — expected once per side where the two paths are "
                           "meant (small and large batches); if not, compute both with tensor "
                           "ops (`torch.where`) or move the branch out of the compiled function. "
                           "(`mark_unbacked` would make that branch an error.)"),
              c.count == 1};
    }
    // Seen on torch 2.6 (a YOLO-style detector on CPU, batch 1): the fake-tensor rule for a
    // convolution selects its backend as the real op would, which on CPU asks whether the input
    // has more than 20,480 elements (oneDNN or torch's own kernel) and guards on the answer.
    if (!f.dim.empty() && c.specialized_by.empty() &&
        absl::StrContains(c.guard_added_in, "fake_impls.py") &&
        absl::EndsWith(c.guard_added_in, " in conv")) {
      return {absl::StrCat(
                  "a dynamic-shape guard on ", Code(c.axis), " failed (", Code(f.expected),
                  "), added by torch's own code (", Code(c.guard_added_in),
                  "): torch picks a convolution's kernel by its input's size (on CPU, oneDNN or "
                  "its own kernel, by the number of elements), and the compiled graph keeps the "
                  "choice, so a size on the other side compiled once more",
                  kExpectedOnce),
              c.count == 1};
    }
    if (!f.dim.empty() && c.specialized_by.empty() && !c.guard_added_in.empty()) {
      // Seen on torch 2.6 (a Whisper-style conv frontend): a guard on the conv output's storage
      // size, added while writing the fx_graph_runnable repro that TORCH_TRACE logs.
      return {absl::StrCat(
          "a dynamic-shape guard on ", Code(c.axis), " failed (", Code(f.expected),
          "), added by torch's own code (", Code(c.guard_added_in),
          absl::StrContains(c.guard_added_in, "debug_utils.py")
              ? ", which writes the `fx_graph_runnable` repro TORCH_TRACE logs"
              : "",
          ") rather than at a line of yours: the dynamic graph serves only the sizes that keep "
          "that expression's value, so another size compiled once more. If more sizes keep "
          "recompiling, pad inputs to a few sizes, and report the guard to PyTorch "
          "(`TORCH_LOGS=\"+dynamic\"` shows where it was added).")};
    }
    if (!f.dim.empty()) {
      return {absl::StrCat("a dynamic-shape guard on ", Code(c.axis), " failed (", Code(f.expected),
                           ") — the dim was specialised (a size-0/1 input or a branch on the "
                           "size): use `torch._dynamo.mark_unbacked(",
                           f.variable, ", ", f.dim,
                           ")`, or replace the branch with `torch._check`.")};
    }
    return {absl::StrCat("a dynamic-shape guard failed (", Code(f.check),
                         ") — remove the branch on the size or use `torch._dynamo.mark_unbacked` "
                         "on the dims that can be 0 or 1.")};
  }
  if (c.category == Category::MODULE_MODE) {
    return {absl::StrCat(var,
                         " flips between calls (train / eval) — two cache entries are "
                         "expected; do not toggle it inside the inner loop, or compile "
                         "separate train and eval callables.")};
  }
  if (c.category == Category::ALIASING) {
    return {absl::StrCat("inputs ", var,
                         " alias each other in some calls only — do not pass the "
                         "same tensor twice; `.clone()` one argument.")};
  }
  if (c.category == Category::BACKEND_CONFIG) {
    if (f.variable == "dynamo_config") {
      return {
          "`torch._dynamo.config` changed between calls — set dynamo config once, before "
          "compiling."};
    }
    if (f.variable == "fullgraph") {
      return {"the frame is compiled both with and without `fullgraph=True` — use one setting."};
    }
    return {
        "a new backend object reaches `torch.compile` on each call — build the compiled "
        "callable once, or reuse one backend callable."};
  }
  if (c.category == Category::CONTAINER) {
    if (f.rule == "module_state") {
      return {absl::StrCat(var,
                           "'s attributes are mutated between calls — set module state "
                           "before compiling, not between calls.")};
    }
    return {absl::StrCat("the keys, members or attributes of ", var,
                         " change between calls — keep them invariant, or pass tensors "
                         "instead.")};
  }
  return {absl::StrCat("torch's guard failure text was not recognised (",
                       Code(ClipUtf8(f.check, 80)),
                       ") — rerun with `TORCH_LOGS=recompiles_verbose` to see the failing guard.")};
}

std::string Evidence(const Cluster& c, const FrameStats& frame, bool several_frames) {
  std::string evidence = absl::StrCat(Word(c.category), " cluster");
  if (!c.axis.empty()) absl::StrAppend(&evidence, " on ", c.axis);
  if (several_frames) absl::StrAppend(&evidence, " in ", Code(frame.name));
  absl::StrAppend(&evidence, " — ", FormatCount(c.count, "recompile", "recompiles"));
  if (!c.transitions.empty()) {
    absl::StrAppend(&evidence, " (values ", absl::StrJoin(c.transitions, ", "), ")");
  } else if (!c.guarded_values.empty()) {
    absl::StrAppend(&evidence, " (guarded values ", absl::StrJoin(c.guarded_values, ", "), ")");
  }
  if (!c.also.empty()) {
    absl::StrAppend(&evidence, "; torch also named ", absl::StrJoin(c.also, ", "),
                    " against other cache entries of ", Code(frame.name),
                    " (no recompile is filed under it: each changed something else too)");
  }
  // The fact that makes a single size recompile a problem rather than automatic dynamic.
  if (c.category == Category::SIZE && c.count == 1 && frame.has_config &&
      frame.config.automatic_dynamic_shapes.has_value()) {
    absl::StrAppend(&evidence, "; dynamo_config automatic_dynamic_shapes=",
                    *frame.config.automatic_dynamic_shapes ? "True" : "False");
  }
  // §1.7: as many distinct values as the limit allows entries means the frame will go eager.
  const size_t distinct = std::max(c.transitions.size(), c.guarded_values.size());
  if (distinct + 1 >= frame.config.limit) {
    absl::StrAppend(&evidence, "; ", distinct + 1, " variants reach ", frame.config.limit_name,
                    " (", frame.config.limit, ") and the frame falls back to eager");
  }
  return evidence;
}

std::string AdviseCacheLimit(const v1::CacheLimitHit& hit) {
  return absl::StrCat(Code(hit.frame()), " reached ", Code(hit.limit()),
                      ": later guard failures run it eagerly, or raise RecompileLimitExceeded "
                      "under fullgraph=True (the evidence says which) — fix the dominant "
                      "recompile cause below; raise `torch._dynamo.config.",
                      hit.limit(),
                      "` only as a last resort, and use "
                      "`torch.compiler.set_stance(\"fail_on_recompile\")` in CI to catch "
                      "regressions.");
}

}  // namespace cl

"""check_divergence: does the compiled model still compute what eager computes, and if not, which
layer first and which compiler pass is to blame (docs/torch-semantics.md §3.5).

1. Eager, once with forward hooks on every module: each module's first call records its inputs,
   RNG state and output. A second eager run with the same seed gives the noise floor.
2. Layers are the leaf modules in the order they were called, then the modules with children,
   innermost first, for the code in their own forward. Each is compared *in isolation*: the
   eager input of layer L into layer L compiled on its own, against eager layer L, by the rule in
   _compare.py. Comparison stops at the first divergent layer unless ``stop_at_first=False``.
3. The same compiled leaf layers run in place of the eager ones through the whole model give each
   layer's *accumulated* difference (upstream error included).
4. The first divergent layer is compiled again under the compiler bisector's ladder of toggles,
   one at a time: backend eager (dynamo tracing), aot_eager (AOTAutograd), aot_eager with
   decompositions, Inductor with each custom pass hook set to None, fallback_random,
   emulate_precision_casts, layout_optimization and comprehensive_padding off. The first toggle
   that makes the layer match eager names the cause.

The checks compile each layer through a fresh code object and keep those compiles out of the
TORCH_TRACE log (they are not the session's). The result is written to the log as a
``compile_lens_divergence`` artifact and returned.
"""
import copy
import itertools
import math
import types

import torch

from compile_lens import _artifacts
from compile_lens._compare import clone_tree as _clone, compare, max_abs_diff

# Inductor's custom pass hooks, in the order the bisect sets them to None
# (docs/torch-semantics.md §3.3).
CUSTOM_PASS_HOOKS = ("pre_grad_custom_pass", "joint_custom_pre_pass", "joint_custom_post_pass",
                     "post_grad_custom_pre_pass", "post_grad_custom_post_pass")


class DivergenceResult:
    """What check_divergence found; ``record`` is the artifact written to the log."""

    def __init__(self, record):
        self.record = record
        self.layers = record["layers"]
        first = next((l for l in self.layers if l["diverged"]), None)
        self.first_divergent_layer = first["name"] if first else None
        self.max_abs_diff = first["max_abs_diff"] if first else None
        culprit = record.get("bisect", {}).get("culprit")
        self.cause = f"{culprit['kind'].lower()}: {culprit['name']}" if culprit else None
        self.steps = record.get("bisect", {}).get("steps", [])

    def __repr__(self):
        if self.first_divergent_layer is None:
            return f"<no divergence: {len(self.layers)} layer(s) compared>"
        return (f"<first divergent layer {self.first_divergent_layer}: max abs diff "
                f"{self.max_abs_diff:.4g}, cause {self.cause}>")


class _Call:
    __slots__ = ("args", "kwargs", "rng", "output", "start", "end")


def _to_double(value):
    if isinstance(value, torch.Tensor):
        return value.double() if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_to_double(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_double(v) for k, v in value.items()}
    return value


def _record_calls(model, args, kwargs, seed):
    """Runs the model eagerly; returns {fqn: _Call} for each module's first call."""
    calls, counter = {}, [0]
    names = {id(m): n for n, m in model.named_modules()}
    handles = []

    def pre(module, margs, mkwargs):
        name = names[id(module)]
        if name in calls:
            return
        call = _Call()
        call.args, call.kwargs, call.rng = _clone(margs), _clone(mkwargs), torch.get_rng_state()
        call.start, call.end, call.output = counter[0], None, None
        counter[0] += 1
        calls[name] = call

    def post(module, margs, mkwargs, output):
        call = calls.get(names[id(module)])
        if call is not None and call.end is None:
            call.output, call.end = _clone(output), counter[0]
            counter[0] += 1

    for m in model.modules():
        handles.append(m.register_forward_pre_hook(pre, with_kwargs=True))
        handles.append(m.register_forward_hook(post, with_kwargs=True))
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
    return calls


def _layer_order(model, calls, layers):
    if layers is not None:
        missing = [l for l in layers if l not in calls]
        if missing:
            raise ValueError(f"check_divergence: layer(s) not called by the model: {missing}")
        return sorted(layers, key=lambda n: calls[n].start)
    modules = dict(model.named_modules())
    leaves = [n for n in calls if not any(True for _ in modules[n].children())]
    containers = [n for n in calls if n not in leaves]
    return sorted(leaves, key=lambda n: calls[n].start) + sorted(containers, key=lambda n: calls[n].end)


def _compile_lens_layer(forward, module, args, kwargs):
    return forward(module, *args, **kwargs)


_fresh_codes = itertools.count()


class _Compiled:
    """A torch.compile'd caller of ``forward(module, *args, **kwargs)`` on a code object of its own,
    so that its cache entries are never shared with the session's or another toggle's (dynamo keys
    its cache by code object, and an Inductor config change alone does not recompile). ``patch``
    holds Inductor config toggles, applied around each call (the compile happens in the first)."""

    def __init__(self, backend, options=None, patch=None):
        code = _compile_lens_layer.__code__.replace(co_name=f"_compile_lens_layer_{next(_fresh_codes)}")
        fn = types.FunctionType(code, _compile_lens_layer.__globals__, code.co_name)
        kw = {"backend": backend, "dynamic": False}
        if backend == "inductor" and options:
            kw["options"] = options
        self._fn = torch.compile(fn, **kw)
        self._patch = patch or {}

    def __call__(self, forward, module, args, kwargs):
        from torch._inductor import config as inductor_config
        with inductor_config.patch(self._patch):
            return self._fn(forward, module, args, kwargs)


def _run_compiled(compiled, module, call):
    with torch.random.fork_rng(devices=[]):
        torch.set_rng_state(call.rng)
        return compiled(type(module).forward, module, _clone(call.args), _clone(call.kwargs))


def _fp64_reference(module, call):
    try:
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(call.rng)
            return copy.deepcopy(module).double()(*_to_double(call.args), **_to_double(call.kwargs))
    except Exception:  # integer-only ops and the like: fall back to the comparison without fp64
        return None


def _judge(module, call, output, floor):
    verdict = compare(call.output, output, floor=floor)
    if verdict["diverged"] and not verdict.get("detail"):
        fp64 = _fp64_reference(module, call)
        if fp64 is not None:
            verdict = compare(call.output, output, fp64, floor=floor)
    return verdict


def _ladder(options):
    """The bisect steps: (toggle label, backend, Inductor config patch, culprit if this step fixes it,
    culprit if the layer still diverges here and stops the ladder)."""
    from torch._inductor import config as inductor_config
    yield "backend=eager", "eager", None, None, ("TRACING", "eager backend")
    yield "backend=aot_eager", "aot_eager", None, None, ("BACKEND", "aot_eager")
    yield ("backend=aot_eager_decomp_partition", "aot_eager_decomp_partition", None, None,
           ("DECOMPOSITION", "a decomposition (name it with torch's compiler bisector)"))
    for hook in CUSTOM_PASS_HOOKS:
        if getattr(inductor_config, hook, None) is not None or (options or {}).get(hook) is not None:
            yield f"{hook}=None", "inductor", {hook: None}, ("PASS", hook), None
    for field, value in (("fallback_random", True), ("emulate_precision_casts", True),
                         ("layout_optimization", False), ("comprehensive_padding", False)):
        if hasattr(inductor_config, field) and getattr(inductor_config, field) != value:
            yield f"{field}={value}", "inductor", {field: value}, ("CONFIG", field), None


def _bisect(module, call, floor, options):
    steps = []
    for label, backend, patch, fixes, stops in _ladder(options):
        try:
            compiled = _Compiled(backend, {k: v for k, v in (options or {}).items() if k not in (patch or {})}, patch)
            verdict = _judge(module, call, _run_compiled(compiled, module, call), floor)
            diverged, detail = verdict["diverged"], f"max abs diff {verdict['max_abs_diff']:.4g}"
        except Exception as e:  # a toggle that does not compile tells nothing; say so and go on
            steps.append({"toggle": label, "diverged": True, "detail": f"failed: {type(e).__name__}: {e}"[:300]})
            continue
        steps.append({"toggle": label, "diverged": diverged, "detail": detail})
        if diverged and stops:
            return {"kind": stops[0], "name": stops[1], "confidence": 1.0}, steps
        if not diverged and fixes:
            return {"kind": fixes[0], "name": fixes[1], "confidence": 1.0}, steps
    return {"kind": "SUBSYSTEM", "name": "inductor (no single toggle fixed it; lowerings not bisected)",
            "confidence": 0.0}, steps


def _accumulated(model, args, kwargs, seed, compiled_by_layer):
    """The model run eagerly with each compared *leaf* compiled in place of its eager self; returns
    {fqn: output} for every compared layer. Containers are not swapped: a compiled container would
    trace through its children's swapped forwards and hooks, recompiling them per instance until
    dynamo's cache limit runs them eagerly. A container's accumulated figure is its output with its
    compiled leaves inside."""
    modules = dict(model.named_modules())
    outputs, handles, swapped = {}, [], []
    for name, compiled in compiled_by_layer.items():
        module = modules[name]
        if not any(True for _ in module.children()):
            def forward(*a, __m=module, __c=compiled, **k):
                return __c(type(__m).forward, __m, a, k)

            module.forward = forward
            swapped.append(module)
        handles.append(module.register_forward_hook(
            lambda m, i, o, __n=name: outputs.setdefault(__n, _clone(o))))
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model(*args, **kwargs)
    finally:
        for module in swapped:
            module.__dict__.pop("forward", None)
        for h in handles:
            h.remove()
    return outputs


def _finite(x):
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x


def check_divergence(model, inputs, kwargs=None, *, layers=None, stop_at_first=True, bisect=True,
                     seed=0, options=None, record=True):
    """Compares eager and compiled, layer by layer, and attributes the first divergence.

    model: an eager ``nn.Module`` (a torch.compile'd one is unwrapped to its ``_orig_mod``).
    inputs: a tensor or a tuple of positional inputs; kwargs: keyword inputs.
    layers: module names to compare (default: every leaf module, then the containers).
    stop_at_first: stop comparing at the first divergent layer.
    bisect: run the bisector's ladder on the first divergent layer to name the cause.
    seed: the seed the whole-model runs start from (a layer compiled on its own starts from the
      RNG state its eager call saw).
    options: Inductor options the session compiles with (torch.compile(options=...)).
    record: write the result to the TORCH_TRACE log (``compile_lens_divergence``).
    Runs under no_grad; compares forward outputs. Returns a DivergenceResult.
    """
    if isinstance(model, torch._dynamo.eval_frame.OptimizedModule):
        model = model._orig_mod
    args = (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs)
    kwargs = dict(kwargs or {})
    _artifacts.note_module_sources(model)
    modules = dict(model.named_modules())
    with torch.no_grad(), _artifacts.quiet_trace():
        calls = _record_calls(model, args, kwargs, seed)
        again = _record_calls(model, args, kwargs, seed)
        order = _layer_order(model, calls, layers)
        compared, compiled_by_layer, first = [], {}, None
        for i, name in enumerate(order):
            call, module = calls[name], modules[name]
            floor = max_abs_diff(call.output, again[name].output) if name in again else 0.0
            compiled = _Compiled("inductor", options)
            verdict = _judge(module, call, _run_compiled(compiled, module, call), floor)
            compiled_by_layer[name] = compiled
            compared.append({"name": name or "<root>", "order": i, "dtype": verdict.get("dtype", ""),
                             "shape": verdict.get("shape", []), "max_abs_diff": verdict["max_abs_diff"],
                             "max_rel_diff": verdict["max_rel_diff"], "nan": verdict["nan"], "inf": verdict["inf"],
                             "diverged": verdict["diverged"], "rmse_compiled": verdict.get("rmse_compiled", 0.0),
                             "rmse_eager": verdict.get("rmse_eager", 0.0), "noise_floor": floor,
                             "tolerance": verdict["tolerance"], "_fqn": name})
            if verdict["diverged"] and first is None:
                first = name
                if stop_at_first:
                    break
        floors = {layer["_fqn"]: layer["noise_floor"] for layer in compared}
        accumulated = _accumulated(model, args, kwargs, seed, compiled_by_layer)
        for layer in compared:
            fqn = layer.pop("_fqn")
            if fqn in accumulated:
                layer["accumulated_max_abs_diff"] = max_abs_diff(calls[fqn].output, accumulated[fqn])
        tol = max((l["tolerance"] for l in compared), default=0.0)
        result = {"reference": "eager", "atol": tol, "rtol": tol, "layers": compared,
                  "torch_version": torch.__version__}
        if first is not None and bisect:
            culprit, steps = _bisect(modules[first], calls[first], floors[first], options)
            result["bisect"] = {"culprit": culprit, "steps": steps}
    result["layers"] = [{k: _finite(v) for k, v in l.items()} for l in result["layers"]]
    if record:
        _artifacts.emit("divergence", result)
    return DivergenceResult(result)

"""track: per-call state fingerprints, the cache entry that served each call, and a sampled eager
reference check (docs/torch-semantics.md §4.3).

``tracked = compile_lens.track(torch.compile(model))`` returns a callable to use in place of the
compiled model. Each call writes one ``compile_lens_iteration`` artifact to the TORCH_TRACE log:
the call's index, the compiled frame and the cache entry that ran (the compile the call caused, or
else the first entry whose guards accept the call's frame locals, as dynamo itself picks), the
inputs' metadata, and ``state`` — a flat map from a state key to a readable fingerprint:

  torch.*            global torch state: what dynamo's GLOBAL_STATE guard covers and what it
                     does not (cudnn / matmul TF32 flags, float32 matmul precision, SDPA toggles)
  config.*           hashes of the dynamo / inductor / functorch configs; each custom pass hook
                     ("callable:<qualname>", "uuid:<uuid>" or "None"); the torch.compile kwargs
  model.*            per module: training, hook counts, plain attributes; per parameter and buffer
                     identity, shape, dtype, device, requires_grad (and ``._version``, noise)
  globals.* closure.* the globals and closure cells the compiled function's code reads
  rng.cpu            the CPU RNG state (noise: it explains differences, it is not staleness)

Every ``sample_every``-th call (default: every call) the original model also runs eagerly, on
clones of the inputs and the same RNG state, and the call records the max abs diff and the
same()-style verdict. The compile-lens cache-stability pass turns these into findings.
"""
import enum
import hashlib
import inspect
import itertools
import types

import torch

from compile_lens import _artifacts
from compile_lens._compare import clone_tree, compare, max_abs_diff


def _short(value, limit=80):
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    return "sha1:" + hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:16]


def _digest(obj):
    try:
        text = repr(sorted(obj.items(), key=lambda kv: str(kv[0]))) if isinstance(obj, dict) else repr(obj)
    except Exception:
        text = f"{type(obj).__name__}@{id(obj):x}"
    return "sha1:" + hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:16]


def _describe(value):
    """A readable fingerprint of a Python value a compiled frame may have baked in."""
    if value is None or isinstance(value, (bool, int, float, str, enum.Enum, torch.dtype, torch.device)):
        return _short(value)
    if isinstance(value, (tuple, frozenset)) and all(isinstance(v, (bool, int, float, str)) for v in value):
        return _short(value)
    if isinstance(value, (types.FunctionType, types.MethodType)):
        fn = getattr(value, "__func__", value)
        code = fn.__code__
        return f"function {fn.__qualname__} ({code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}, code@{id(code):x})"
    if isinstance(value, torch.Tensor):
        return f"tensor {tuple(value.shape)} {str(value.dtype).replace('torch.', '')} @{id(value):x}"
    return f"{type(value).__qualname__}@{id(value):x}"


def _hook_names(hooks):
    names = [getattr(h, "__qualname__", type(h).__name__) for h in hooks.values()]
    noun = "hook" if len(names) == 1 else "hooks"
    return f"{len(names)} {noun}" + (f": {', '.join(names)}" if names else "")


def _pass_id(p):
    if p is None:
        return "None"
    uuid = getattr(p, "uuid", None)
    if callable(uuid):
        try:
            return f"uuid:{uuid()}"
        except Exception:
            pass
    fn = getattr(p, "__qualname__", type(p).__qualname__)
    return f"callable:{fn}"


def global_state():
    state = {
        "torch.grad_mode": torch.is_grad_enabled(),
        "torch.autocast.cpu": (torch.is_autocast_cpu_enabled(), str(torch.get_autocast_dtype("cpu"))),
        "torch.deterministic_algorithms": (torch.are_deterministic_algorithms_enabled(),
                                           torch.is_deterministic_algorithms_warn_only_enabled()),
        "torch.default_dtype": str(torch.get_default_dtype()),
        "torch.torch_function_enabled": torch._C._is_torch_function_enabled(),
        "torch.backends.cudnn.enabled": torch.backends.cudnn.enabled,
        "torch.backends.cudnn.benchmark": torch.backends.cudnn.benchmark,
        "torch.backends.cudnn.deterministic": torch.backends.cudnn.deterministic,
        "torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "torch.float32_matmul_precision": torch.get_float32_matmul_precision(),
        "torch.sdp": (torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.mem_efficient_sdp_enabled(),
                      torch.backends.cuda.math_sdp_enabled()),
    }
    if torch.cuda.is_available():
        state["torch.autocast.cuda"] = (torch.is_autocast_enabled(), str(torch.get_autocast_gpu_dtype()))
    return {k: _short(v) for k, v in state.items()}


def config_state(compile_kwargs):
    from torch._dynamo import config as dynamo_config
    from torch._functorch import config as functorch_config
    from torch._inductor import config as inductor_config
    state = {
        "config.dynamo": _digest(dynamo_config.get_config_copy()),
        "config.inductor": _digest({k: v for k, v in inductor_config.get_config_copy().items()
                                    if not callable(v)}),
        "config.functorch": _digest(functorch_config.get_config_copy()),
        "config.compile": _short(repr(sorted(compile_kwargs.items()))),
    }
    from compile_lens.divergence import CUSTOM_PASS_HOOKS
    for hook in CUSTOM_PASS_HOOKS:
        state[f"config.inductor.{hook}"] = _pass_id(getattr(inductor_config, hook, None))
    return state


def module_state(model, prefix="model"):
    state = {}
    for fqn, m in model.named_modules():
        base = f"{prefix}.{fqn}" if fqn else prefix
        state[f"{base}.training"] = str(m.training)
        state[f"{base}._forward_hooks"] = _hook_names(m._forward_hooks)
        state[f"{base}._forward_pre_hooks"] = _hook_names(m._forward_pre_hooks)
        for attr, value in vars(m).items():
            if attr.startswith("_") or isinstance(value, (torch.Tensor, torch.nn.Module)):
                continue
            state[f"{base}.{attr}"] = _describe(value)
        for kind in ("_parameters", "_buffers"):
            for name, t in getattr(m, kind).items():
                if t is None:
                    state[f"{base}.{name}"] = "None"
                    continue
                state[f"{base}.{name}"] = (f"{tuple(t.shape)} {str(t.dtype).replace('torch.', '')} {t.device} "
                                           f"requires_grad={t.requires_grad} id@{id(t):x} ptr@{t.data_ptr():x}")
                state[f"{base}.{name}._version"] = str(t._version)
    return state


def _code_names(code, seen=None):
    """co_names of a code object and of the code objects nested in it."""
    seen = set() if seen is None else seen
    if id(code) in seen:
        return set()
    seen.add(id(code))
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const, seen)
    return names


def frame_state(fn):
    """The globals and closure cells the compiled function's code reads (best effort: its own code
    and the code nested in it, not the callees it inlines)."""
    fn = getattr(fn, "__func__", fn)
    state = {}
    code, glob = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    if code is None:
        return state
    for name in sorted(_code_names(code)):
        if name in glob and not isinstance(glob[name], types.ModuleType):
            state[f"globals.{name}"] = _describe(glob[name])
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            state[f"closure.{name}"] = _describe(cell.cell_contents)
        except ValueError:
            state[f"closure.{name}"] = "<empty>"
    return state


def _meta(name, value):
    if isinstance(value, torch.Tensor):
        return {"name": name, "meta": {"dtype": str(value.dtype).replace("torch.", ""),
                                       "shape": [str(s) for s in value.shape],
                                       "stride": [str(s) for s in value.stride()], "device": str(value.device)}}
    return {"name": name, "meta": {"dtype": type(value).__name__, "shape": [], "stride": [], "device": ""}}


class Tracked:
    """The compiled model or function, recording each call (see the module docstring)."""

    def __init__(self, compiled, sample_every=1, name="model", compile_kwargs=None):
        self._compiled = compiled
        orig = getattr(compiled, "_orig_mod", None) or getattr(compiled, "_torchdynamo_orig_callable", None)
        if orig is None:
            raise TypeError("compile_lens.track: pass what torch.compile returned (a compiled module or function)")
        self._orig = orig
        self._module = orig if isinstance(orig, torch.nn.Module) else None
        self._fn = type(orig).forward if self._module is not None else orig
        self._code = getattr(self._fn, "__code__", None)
        self._signature = inspect.signature(self._fn)
        self._sample_every = sample_every
        self._name = name
        self._compile_kwargs = dict(compile_kwargs or {})
        self._calls = itertools.count()
        self.iterations = []
        if self._module is not None:
            _artifacts.note_module_sources(self._module)
        elif self._code is not None:
            _artifacts.note_source(self._code.co_filename)

    def _entries(self):
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list
        return _debug_get_cache_entry_list(self._code) if self._code is not None else []

    def _frame_locals(self, args, kwargs):
        bound_args = (self._module,) + tuple(args) if self._module is not None else tuple(args)
        bound = self._signature.bind(*bound_args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def _serving_entry(self, before, frame_locals):
        entries = self._entries()
        known = {str(e.compile_id) for e in before}
        new = [e for e in entries if str(e.compile_id) not in known]
        if new:
            return str(new[0].compile_id), True
        try:
            for e in entries:
                if e.guard_manager.check(frame_locals):
                    return str(e.compile_id), False
        except Exception:
            pass
        return "", False

    def state(self):
        state = {**global_state(), **config_state(self._compile_kwargs)}
        if self._module is not None:
            state.update(module_state(self._module, self._name))
            state.update(frame_state(self._fn))
        else:
            state.update(frame_state(self._orig))
        state["rng.cpu"] = _digest(torch.get_rng_state().tolist())
        return state

    def __call__(self, *args, **kwargs):
        index = next(self._calls)
        state = self.state()
        before = self._entries()
        sampled = self._sample_every and index % self._sample_every == 0
        eager_args, eager_kwargs = (clone_tree(args), clone_tree(kwargs)) if sampled else (None, None)
        rng = torch.get_rng_state()
        out = self._compiled(*args, **kwargs)
        frame_locals = self._frame_locals(args, kwargs)
        compile_id, recompiled = self._serving_entry(before, frame_locals)
        iteration = {"index": index, "compile_id": compile_id, "recompiled": recompiled, "state": state,
                     "inputs": [_meta(n, v) for n, v in frame_locals.items()
                                if n != "self" and isinstance(v, torch.Tensor)]}
        if compile_id and "/" in compile_id:
            iteration["frame_id"] = int(compile_id.split("/")[0].lstrip("[!"))
        if sampled:
            after_rng = torch.get_rng_state()
            with _artifacts.quiet_trace():
                torch.set_rng_state(rng)
                with torch.compiler.set_stance("force_eager"):
                    reference = self._orig(*eager_args, **eager_kwargs)
                torch.set_rng_state(after_rng)
            verdict = compare(reference, out)
            iteration["output_max_abs_diff"] = max_abs_diff(reference, out)
            iteration["output_diverged"] = bool(verdict["diverged"])
        self.iterations.append(iteration)
        _artifacts.emit("iteration", iteration)
        return out

    def __getattr__(self, name):  # only called for names Tracked itself does not have
        compiled = self.__dict__.get("_compiled")  # absent while __init__ runs: no recursion
        if compiled is None:
            raise AttributeError(name)
        return getattr(compiled, name)


def track(compiled, *, sample_every=1, name="model", compile_kwargs=None):
    """Wraps what torch.compile returned so that each call is recorded (see the module docstring).

    compiled: a compiled module or function (what torch.compile returned).
    sample_every: run the eager reference on every N-th call (0: never).
    name: the prefix of the model's state keys ("model.inner._forward_hooks").
    compile_kwargs: the torch.compile arguments used (mode, options, dynamic, ...), fingerprinted.
    Returns a Tracked: call it in place of ``compiled``; its ``iterations`` are the records written.
    """
    return Tracked(compiled, sample_every=sample_every, name=name, compile_kwargs=compile_kwargs)

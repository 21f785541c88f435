"""Eager-vs-compiled tensor comparison: torch's same() rule, per layer.

A tensor pair passes when it is allclose at the dtype's tolerance (fp32 1e-4, fp16 1e-3, bf16 1e-2;
never below the eager-vs-eager noise floor); failing that, when the compiled result is no more than
k times further from an fp64 reference than eager is (k = 3 for fp16/bf16 or fewer than 1000
elements, else 2; docs/torch-semantics.md §3.4–3.5) — provided eager is within torch's loose
tolerance (4e-2) of that reference, which random ops are not. NaN or Inf in the compiled result where
eager has none is divergent whatever the tolerance. Integer and bool tensors must match exactly.
"""
import math

import torch

_TOLERANCE = {torch.float16: 1e-3, torch.bfloat16: 1e-2, torch.float32: 1e-4, torch.float64: 1e-7}


def tolerance_for(dtype):
    tol = _TOLERANCE.get(dtype, 0.0)
    if dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32 and torch.cuda.is_available():
        tol = 1e-3
    return tol


def tensors_of(value):
    """The tensors in a layer's output, in a fixed order (tuples, lists and dicts recursed)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_of(v)]
    if isinstance(value, dict):
        return [t for k in sorted(value, key=str) for t in tensors_of(value[k])]
    return []


def clone_tree(value):
    """A detached copy of every tensor in a nest of tuples, lists and dicts; other values as they are."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)):
        return type(value)(clone_tree(v) for v in value)
    if isinstance(value, dict):
        return {k: clone_tree(v) for k, v in value.items()}
    return value


def _rmse(a, b):
    return torch.sqrt(torch.mean((a.double() - b.double()) ** 2)).item()


def _nonfinite_mismatch(eager, compiled):
    bad = ~torch.isfinite(compiled)
    if not bad.any():
        return False
    return bool((bad & torch.isfinite(eager)).any()) or not torch.equal(
        torch.isnan(compiled), torch.isnan(eager))


def compare_tensor(eager, compiled, fp64=None, floor=0.0):
    """Compares one tensor pair; returns the figures and the verdict as a dict."""
    eager, compiled = eager.detach(), compiled.detach()
    out = {"dtype": str(eager.dtype).replace("torch.", ""), "shape": [str(s) for s in eager.shape],
           "numel": eager.numel(), "nan": bool(torch.isnan(compiled).any()) if compiled.is_floating_point() else False,
           "inf": bool(torch.isinf(compiled).any()) if compiled.is_floating_point() else False}
    if eager.shape != compiled.shape or eager.dtype != compiled.dtype:
        out.update(max_abs_diff=math.inf, max_rel_diff=math.inf, diverged=True, tolerance=0.0,
                   detail=f"shape/dtype mismatch: {tuple(eager.shape)} {eager.dtype} vs "
                          f"{tuple(compiled.shape)} {compiled.dtype}")
        return out
    if not eager.is_floating_point():
        same = torch.equal(eager, compiled)
        diff = (eager.long() - compiled.long()).abs().max().item() if eager.numel() else 0
        out.update(max_abs_diff=float(diff), max_rel_diff=0.0 if same else math.inf, diverged=not same, tolerance=0.0)
        return out
    e, c = eager.double(), compiled.double()
    finite = torch.isfinite(e) & torch.isfinite(c)
    diff = (e - c).abs()
    max_abs = diff[finite].max().item() if finite.any() else 0.0
    rel = diff / e.abs().clamp_min(1e-12)
    max_rel = rel[finite].max().item() if finite.any() else 0.0
    tol = max(tolerance_for(eager.dtype), floor)
    out.update(max_abs_diff=max_abs, max_rel_diff=max_rel, tolerance=tol)
    if _nonfinite_mismatch(eager, compiled):
        out.update(diverged=True, detail="NaN/Inf in the compiled result")
        return out
    if torch.allclose(e[finite], c[finite], atol=tol, rtol=tol):
        out["diverged"] = False
        return out
    # The fp64 rule needs a reference that eager itself is close to; random ops (dropout, rand)
    # draw other numbers in fp64, and then only allclose can judge.
    if fp64 is None or fp64.shape != e.shape or not torch.allclose(e[finite], fp64.double()[finite], atol=4e-2, rtol=4e-2):
        out["diverged"] = True
        return out
    ref_error, res_error = _rmse(fp64, eager), _rmse(fp64, compiled)
    k = 3.0 if eager.dtype in (torch.float16, torch.bfloat16) or eager.numel() < 1000 else 2.0
    out.update(rmse_eager=ref_error, rmse_compiled=res_error,
               diverged=not res_error <= k * ref_error + tol / 10.0)
    return out


def compare(eager_out, compiled_out, fp64_out=None, floor=0.0):
    """Compares a layer's outputs (any nesting of tensors): the worst tensor decides."""
    eager_ts, compiled_ts = tensors_of(eager_out), tensors_of(compiled_out)
    fp64_ts = tensors_of(fp64_out) if fp64_out is not None else [None] * len(eager_ts)
    if len(eager_ts) != len(compiled_ts) or not eager_ts:
        return {"diverged": len(eager_ts) != len(compiled_ts), "max_abs_diff": 0.0, "max_rel_diff": 0.0,
                "nan": False, "inf": False, "tolerance": 0.0, "dtype": "", "shape": [],
                "detail": f"{len(eager_ts)} eager tensor(s) vs {len(compiled_ts)} compiled"}
    results = [compare_tensor(e, c, f, floor) for e, c, f in zip(eager_ts, compiled_ts, fp64_ts)]
    worst = max(results, key=lambda r: (r["diverged"], r["max_abs_diff"]))
    worst = dict(worst)
    worst["nan"] = any(r["nan"] for r in results)
    worst["inf"] = any(r["inf"] for r in results)
    return worst


def max_abs_diff(a, b):
    """The largest absolute difference over the tensors of two outputs (0 when there are none)."""
    worst = 0.0
    for x, y in zip(tensors_of(a), tensors_of(b)):
        if x.shape != y.shape:
            return math.inf
        if x.numel():
            worst = max(worst, (x.detach().double() - y.detach().double()).abs().max().item())
    return worst

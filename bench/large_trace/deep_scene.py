"""The deep scene: a large, real TORCH_TRACE log for the importer's throughput benchmark.

The point is the size and variety of the log, not the compute: a deep stack of small
transformer-ish blocks gives every FX graph and every piece of Inductor output code a few
thousand lines, and a call schedule that recompiles many times prints them again and again.

Model (D_MODEL 64, 4 heads, N_BLOCKS blocks, default 36, split into three stages):

* even blocks: LayerNorm -> attention -> +resid -> LayerNorm -> Linear -> GELU(tanh) -> Linear -> +resid
* odd blocks:  RMSNorm  -> attention -> +resid -> RMSNorm  -> SwiGLU (SiLU(gate) * up) -> Linear -> +resid
* attention is written by hand: fused qkv Linear, causal mask, softmax as exp(s - max) / sum.

DeepScene.forward has two graph breaks at its top level (not inside a loop, so dynamo resumes
after each): a call to ``clamp_peak``, a ``torch._dynamo.disable``d function with a
data-dependent ``.item()`` check, between stages 0 and 1, and an explicit
``torch._dynamo.graph_break()`` between stages 1 and 2. So each call runs three compiled
frames: ``forward`` and two ``torch_dynamo_resume_in_forward_at_*`` frames.

main() compiles the model with ``torch.compile(dynamic=False)`` and calls it per SCHEDULE:

* training calls (grad on, loss.backward()): forward graphs are joint graphs, and the first
  backward of each compile compiles a backward graph too;
* the same shapes and new ones under ``torch.no_grad()``: the grad-mode guard fails, inference
  graphs;
* no_grad under ``torch.autocast("cpu", dtype=torch.bfloat16)``: the input's dispatch key set
  guard fails (AutocastCPU), and the graphs carry bf16 casts.

A new (batch, seq) fails the static size guard, a new mode one of those above: every row of
SCHEDULE compiles all three frames anew (cache_size_limit is raised so that none falls back to
eager). Each call is compared with eager (max_abs_diff), so the run is also a check.

Usage: python3 deep_scene.py RESULT.json [N_BLOCKS]
bench/large_trace/make_large_trace.sh runs it under TORCH_TRACE in the torch sandbox.
"""
import json
import math
import platform
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

D_MODEL = 64
N_HEADS = 4
N_BLOCKS = 36
# (mode, batch, seq) in call order; mode is "train", "infer" (no_grad) or "bf16" (no_grad + autocast).
SCHEDULE = (
    ("train", 2, 16),
    ("train", 4, 16),
    ("train", 2, 32),
    ("infer", 2, 16),
    ("infer", 8, 8),
    ("infer", 1, 48),
    ("bf16", 2, 16),
    ("bf16", 4, 24),
)
# clamp_peak() rescales the activation only if it ever gets this large (it doesn't).
LIMIT = 1e4


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    """Causal multi-head self-attention with a hand-written softmax."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(d // self.heads))
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
        scores = scores - scores.amax(-1, keepdim=True)
        weights = scores.exp()
        weights = weights / weights.sum(-1, keepdim=True)
        out = (weights @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(out)


class GeluMLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class SwiGLU(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.gate = nn.Linear(d, 2 * d, bias=False)
        self.up = nn.Linear(d, 2 * d, bias=False)
        self.down = nn.Linear(2 * d, d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, d, heads, index):
        super().__init__()
        gelu = index % 2 == 0
        self.norm1 = nn.LayerNorm(d) if gelu else RMSNorm(d)
        self.attn = Attention(d, heads)
        self.norm2 = nn.LayerNorm(d) if gelu else RMSNorm(d)
        self.mlp = GeluMLP(d) if gelu else SwiGLU(d)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Stage(nn.Module):
    def __init__(self, d, heads, first, count):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d, heads, first + i) for i in range(count)])

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


@torch._dynamo.disable
def clamp_peak(x):
    """Scales x down if its peak ever exceeds LIMIT (it doesn't); runs eagerly, between graphs.

    A plain ``if x.abs().amax().item() > LIMIT`` in forward would be the natural graph break,
    but with torch 2.6 on Python 3.13 recompiling the frame that resumes after an ``.item()``
    fails ("SpeculationLog diverged at index 0"), so the data-dependent check lives here.
    """
    peak = x.detach().abs().amax().item()
    return x * (LIMIT / 2 / peak) if peak > LIMIT else x


class DeepScene(nn.Module):
    def __init__(self, d=D_MODEL, heads=N_HEADS, nblocks=N_BLOCKS):
        super().__init__()
        self.inp = nn.Linear(d, d)
        third = nblocks // 3
        counts = (third, third, nblocks - 2 * third)
        firsts = (0, third, 2 * third)
        self.stages = nn.ModuleList([Stage(d, heads, f, c) for f, c in zip(firsts, counts)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, d)

    def forward(self, x):
        x = self.stages[0](self.inp(x))
        # Graph break 1: a call to a function dynamo must not trace.
        x = clamp_peak(x)
        x = self.stages[1](x)
        # Graph break 2: explicit.
        torch._dynamo.graph_break()
        x = self.stages[2](x)
        return self.head(self.norm(x))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python3 deep_scene.py RESULT.json [N_BLOCKS]")
    out = sys.argv[1]
    nblocks = int(sys.argv[2]) if len(sys.argv) == 3 else N_BLOCKS
    # 8 entries per frame is exactly the default limit; headroom so that a new row cannot fall back to eager.
    torch._dynamo.config.cache_size_limit = 64
    torch.manual_seed(0)
    model = DeepScene(nblocks=nblocks)
    compiled = torch.compile(model, dynamic=False)
    calls = []
    start, cpu_start = time.monotonic(), time.process_time()
    for mode, batch, seq in SCHEDULE:
        t0 = time.monotonic()
        x = torch.randn(batch, seq, D_MODEL)
        if mode == "train":
            model.zero_grad(set_to_none=True)
            ref = model(x)
            ref.pow(2).mean().backward()
            ref_grad = model.inp.weight.grad.clone()
            model.zero_grad(set_to_none=True)
            got = compiled(x)
            got.pow(2).mean().backward()
            grad_diff = (ref_grad - model.inp.weight.grad).abs().max().item()
        else:
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=mode == "bf16"):
                ref, got = model(x), compiled(x)
            grad_diff = None
        calls.append({
            "mode": mode,
            "batch": batch,
            "seq": seq,
            "max_abs_diff": (ref.float() - got.float()).abs().max().item(),
            "grad_max_abs_diff": grad_diff,
            "seconds": round(time.monotonic() - t0, 2),
        })
        print(f"deep_scene: {mode} {batch}x{seq}: {calls[-1]['seconds']} s", file=sys.stderr, flush=True)
    result = {
        "scene": "deep",
        "torch": torch.__version__,
        "python": platform.python_version(),
        "blocks": nblocks,
        "parameters": sum(p.numel() for p in model.parameters()),
        "seconds": round(time.monotonic() - start, 2),
        # This process's CPU time (all its threads): tracing, lowering, codegen, eager compute;
        # the C++ compiles run in compile workers, not counted here.
        "cpu_seconds": round(time.process_time() - cpu_start, 2),
        "calls": calls,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

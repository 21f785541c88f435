"""The hero scene: one small model that exercises every section of a compile-lens report.

Scene is three residual blocks (Linear ``up`` -> + resid -> RMSNorm -> Linear ``down``),
then the subtraction of a learned centre and an in-place scale through a view of the result.
main() compiles it with ``torch.compile(model, dynamic=False)``, calls it with batch sizes
16, 32, 64 and 128, and compares every call with eager PyTorch. What each part demonstrates:

* Recompiles on batch size. With static shapes each new batch size fails the guard on
  ``L['x']`` ("size mismatch at index 0"), so dynamo compiles Scene.forward four times
  (compile ids 0/0 to 0/3). The report suggests ``torch._dynamo.mark_dynamic(x, 0)``.
* An algebraic fusion opportunity. Block.forward is GEMM -> +resid -> RMSNorm -> GEMM: the
  norm's per-row 1/rms could be applied in the second GEMM's epilogue, so the normalized
  activation would never round-trip memory. Inductor does not do that by itself.
* A wrong custom pass. Mode ``head`` installs a post-grad custom pass
  (``torch._inductor.config.post_grad_custom_post_pass``) that swaps the operands of
  ``aten.sub.Tensor``: the compiled model computes ``center - x`` where eager computes
  ``x - center``, so its output diverges from eager. (A custom pass that is a plain
  function also makes Inductor bypass its FX graph cache.)
* An in-place op on an alias: ``z.mul_(0.5)`` where ``z = y.view(-1)``. It computes the
  same thing compiled and eager here; compile-lens's lint pass flags the pattern anyway.

Usage: python3 hero_scene.py {base|head} RESULT.json
examples/hero/run_traces.sh runs both modes under TORCH_TRACE. The golden report
(seed/hero.html) cites lines of this file: Block.forward's chain on 69-72, Scene.forward
on 86, the sub on 89 and the in-place op on 96. Keep them where they are.
"""
import json
import platform
import sys

import torch
import torch.nn as nn

BATCH_SIZES = (16, 32, 64, 128)
D_MODEL = 64
D_HIDDEN = 256
N_BLOCKS = 3


class RMSNorm(nn.Module):
    """Root-mean-square layer norm: x / rms(x) * weight, no mean subtraction, no bias."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        rms = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * rms * self.weight


class Block(nn.Module):
    """One residual block: GEMM -> +resid -> RMSNorm -> GEMM.

    forward() writes the chain one statement per line so that each step has its own
    source line in the traced graphs. The fusion pass reports the whole chain: the
    second GEMM could scale its rows by the norm's 1/rms in its epilogue instead of
    reading a normalized copy of ``h`` back from memory.
    """

    def __init__(self, d_in, d_hidden):
        super().__init__()
        self.up = nn.Linear(d_in, d_hidden, bias=False)
        self.norm = RMSNorm(d_hidden)
        self.down = nn.Linear(d_hidden, d_in, bias=False)

    def forward(self, x, resid):
        h = self.up(x)
        h = h + resid
        n = self.norm(h)
        return self.down(n)


class Scene(nn.Module):
    """The compiled model: N_BLOCKS blocks, then 0.5 * (x - center) via a view."""

    def __init__(self, d=D_MODEL, hidden=D_HIDDEN, nblocks=N_BLOCKS):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d, hidden) for _ in range(nblocks)])
        self.center = nn.Parameter(torch.randn(d))

    # The frame dynamo compiles. With dynamic=False every new batch size fails
    # the size guard on L['x'] and recompiles this code object (0/1, 0/2, 0/3);
    # the blocks' forwards are inlined into the same graph.
    def forward(self, x, resid):
        for blk in self.blocks:
            x = blk(x, resid)
        y = x - self.center
        # An in-place op on an alias: z is a flat view of y, so scaling z in place
        # scales y as well and forward returns 0.5 * (x - center). Eager and
        # Inductor agree here (functionalization turns the mutation into a copy
        # back into y's storage), but mutating a tensor through a view is behind
        # many compile-vs-eager bugs, and compile-lens's lint pass reports it.
        z = y.view(-1)
        z.mul_(0.5)
        return y


def reorder_sub_operands(graph):
    """The wrong post-grad pass ('head' only): a - b becomes b - a for every aten.sub.Tensor."""
    for node in graph.nodes:
        if node.op == "call_function" and node.target == torch.ops.aten.sub.Tensor:
            a, b = node.args[:2]
            node.args = (b, a) + tuple(node.args[2:])


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("base", "head"):
        sys.exit("usage: python3 hero_scene.py {base|head} RESULT.json")
    mode, out = sys.argv[1], sys.argv[2]
    import torch._inductor.config as icfg

    if mode == "head":
        icfg.post_grad_custom_post_pass = reorder_sub_operands
    torch.manual_seed(0)
    model = Scene()
    compiled = torch.compile(model, dynamic=False)
    iterations = []
    for bs in BATCH_SIZES:
        x, resid = torch.randn(bs, D_MODEL), torch.randn(bs, D_HIDDEN)
        with torch.no_grad():
            ref, got = model(x, resid), compiled(x, resid)
        iterations.append({"batch": bs, "max_abs_diff": (ref - got).abs().max().item()})
    result = {
        "scene": "hero",
        "mode": mode,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "iterations": iterations,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

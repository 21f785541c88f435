"""The hero scene: one small model that exercises every section of a compile-lens report.

Three residual blocks (Linear -> + resid -> RMSNorm -> Linear; the first norm is centred), then an
in-place scale through a view. main() compiles it (dynamic=False), calls it through compile_lens.track
with batch sizes 16, 32, 64 and 128, runs compile_lens.check_divergence, and records the sources:

* Recompiles on batch size. With static shapes each new batch size fails the guard on
  ``L['x']`` ("size mismatch at index 0"), so dynamo compiles Scene.forward four times
  (compile ids 0/0 to 0/3). The report suggests ``torch._dynamo.mark_dynamic(x, 0)``.
* An algebraic fusion opportunity. Block.forward is GEMM -> +resid -> RMSNorm -> GEMM: the norm's
  per-row 1/rms could be applied in the second GEMM's epilogue (Inductor does not do that).
* A wrong custom pass. Mode ``head`` installs a post-grad custom pass that swaps the operands of
  ``aten.sub.Tensor``: the compiled first norm computes ``center - x`` where eager computes
  ``x - center``, so ``blocks.0.norm`` diverges first and the divergence bisect blames the pass.
* An in-place op on an alias (``z.mul_(0.5)``, ``z = y.view(-1)``): harmless here; lint flags it.
* Only the batch size changes between calls, so the cache-stability check finds nothing stale.

Usage: python3 hero_scene.py {base|head} RESULT.json
examples/hero/run_traces.sh runs both modes under TORCH_TRACE (with client/python on PYTHONPATH).
The report cites lines of this file: the centre's sub on 49, Block.forward's chain on 69-72,
Scene.forward on 86 and the in-place op on 96. Keep them where they are.
"""
import json
import platform
import sys

import torch
import torch.nn as nn

import compile_lens

BATCH_SIZES = (16, 32, 64, 128)
D_MODEL = 64
D_HIDDEN = 256
N_BLOCKS = 3


class RMSNorm(nn.Module):
    """x / rms(x) * weight; with ``centred``, of x - center (a learned centre), first."""

    def __init__(self, dim, eps=1e-6, centred=False):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.center = nn.Parameter(torch.randn(dim)) if centred else None

    def forward(self, x):
        if self.center is not None:
            x = x - self.center
        rms = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * rms * self.weight


class Block(nn.Module):
    """One residual block: GEMM -> +resid -> RMSNorm -> GEMM.

    forward() writes the chain one statement per line so that each step has its own
    source line in the traced graphs. The fusion pass reports the whole chain: the
    second GEMM could scale its rows by the norm's 1/rms in its epilogue.
    """

    def __init__(self, d_in, d_hidden, centred=False):
        super().__init__()
        self.up = nn.Linear(d_in, d_hidden, bias=False)
        self.norm = RMSNorm(d_hidden, centred=centred)
        self.down = nn.Linear(d_hidden, d_in, bias=False)

    def forward(self, x, resid):
        h = self.up(x)
        h = h + resid
        n = self.norm(h)
        return self.down(n)


class Scene(nn.Module):
    """The compiled model: N_BLOCKS blocks (the first norm centred), then 0.5 * x via a view."""

    def __init__(self, d=D_MODEL, hidden=D_HIDDEN, nblocks=N_BLOCKS):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d, hidden, centred=i == 0) for i in range(nblocks)])

    # The frame dynamo compiles. With dynamic=False every new batch size fails the size
    # guard on L['x'] and recompiles this code object (0/1, 0/2, 0/3); the blocks'
    # forwards are inlined into the same graph, so the whole model is one frame with
    # four cache entries.
    def forward(self, x, resid):
        for blk in self.blocks:
            x = blk(x, resid)
        # An in-place op on an alias: z is a flat view of y, so scaling z in place
        # scales y as well and forward returns 0.5 * x. Eager and Inductor agree
        # here (functionalization turns the mutation into a copy back into y's
        # storage), but mutating a tensor through a view is behind many
        # compile-vs-eager bugs, and compile-lens's lint pass reports it.
        y = x
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
    compiled = compile_lens.track(torch.compile(model, dynamic=False),
                                  compile_kwargs={"dynamic": False})
    with torch.no_grad():
        for bs in BATCH_SIZES:
            compiled(torch.randn(bs, D_MODEL), torch.randn(bs, D_HIDDEN))
    divergence = compile_lens.check_divergence(
        model, (torch.randn(BATCH_SIZES[0], D_MODEL), torch.randn(BATCH_SIZES[0], D_HIDDEN)))
    compile_lens.record_sources()
    result = {
        "scene": "hero",
        "mode": mode,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "iterations": [{"batch": BATCH_SIZES[it["index"]], "compile_id": it["compile_id"],
                        "max_abs_diff": it["output_max_abs_diff"]} for it in compiled.iterations],
        "first_divergent_layer": divergence.first_divergent_layer,
        "max_abs_diff": divergence.max_abs_diff,
        "cause": divergence.cause,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

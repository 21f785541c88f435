"""A model whose second layer a wrong post-grad custom pass breaks: `norm` must be the first
divergent layer and the pass the cause. Prints the result as JSON."""
import json

import torch
import torch.nn as nn

import compile_lens


class CentredNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.c = nn.Parameter(torch.randn(d))

    def forward(self, x):
        x = x - self.c
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(8, 16)
        self.norm = CentredNorm(16)
        self.down = nn.Linear(16, 8)

    def forward(self, x):
        return self.down(self.norm(self.up(x)))


def swap_sub_operands(graph):
    for node in graph.nodes:
        if node.op == "call_function" and node.target == torch.ops.aten.sub.Tensor:
            a, b = node.args[:2]
            node.args = (b, a) + tuple(node.args[2:])


torch._inductor.config.post_grad_custom_post_pass = swap_sub_operands
torch.manual_seed(0)
result = compile_lens.check_divergence(Model(), torch.randn(4, 8))
compile_lens.record_sources()
print(json.dumps({"first": result.first_divergent_layer, "cause": result.cause,
                  "max_abs_diff": result.max_abs_diff, "layers": result.layers, "steps": result.steps}))

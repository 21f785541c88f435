"""A model whose only eager/compiled difference is RNG (Inductor draws its own random numbers
unless fallback_random): the cause must be config: fallback_random. Prints JSON."""
import json

import torch
import torch.nn as nn

import compile_lens


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x) + torch.rand_like(x)


torch.manual_seed(0)
result = compile_lens.check_divergence(Noisy(), torch.randn(4, 8))
print(json.dumps({"first": result.first_divergent_layer, "cause": result.cause,
                  "layers": result.layers, "steps": result.steps}))

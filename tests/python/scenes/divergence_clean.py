"""A clean model (no custom pass, no randomness): no layer may diverge. Prints JSON."""
import json

import torch
import torch.nn as nn

import compile_lens

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))
result = compile_lens.check_divergence(model, torch.randn(16, 8))
print(json.dumps({"first": result.first_divergent_layer, "cause": result.cause,
                  "layers": result.layers, "steps": result.steps}))

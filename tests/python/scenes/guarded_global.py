"""A global function the compiled forward calls is rebound between calls. Torch 2.6 guards it, so
the call after the rebinding recompiles and matches eager: no stale finding, one recompile.
Prints the tracked iterations as JSON."""
import json

import torch
import torch.nn as nn

import compile_lens


def activation(x):
    return x.relu()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return activation(self.lin(x))


def leaky(x):
    return torch.nn.functional.leaky_relu(x, 0.5)


torch.manual_seed(0)
tracked = compile_lens.track(torch.compile(Model()))
x = torch.randn(2, 4)
with torch.no_grad():
    tracked(x)
    activation = leaky  # noqa: F811 (the rebinding is the point)
    tracked(x)
    tracked(x)
print(json.dumps(tracked.iterations))

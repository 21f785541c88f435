"""Real torch 2.6 staleness: a forward hook registered on a submodule after compile changes eager's
output, but dynamo does not guard module hooks (torch._dynamo.config.skip_nnmodule_hook_guards is
True by default), so the compiled model keeps serving the old cache entry. Tracked calls: two
before the hook, two after. Prints the tracked iterations as JSON."""
import json

import torch
import torch.nn as nn

import compile_lens


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x).relu()


def amplify(module, args, output):
    return output * 10


torch.manual_seed(0)
model = Model()
tracked = compile_lens.track(torch.compile(model))
x = torch.randn(2, 4)
with torch.no_grad():
    tracked(x)
    tracked(x)
    model.inner.register_forward_hook(amplify)
    tracked(x)
    tracked(x)
compile_lens.record_sources()
print(json.dumps(tracked.iterations))

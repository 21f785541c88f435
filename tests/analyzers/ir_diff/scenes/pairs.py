"""Known-difference model pairs for the IR diff tests (tests/analyzers/ir_diff/pairs_test.cc).

One small model, Net, and variants of it that each differ from `base` in one known way. Each
variant is chosen by argv and compiled once (static shapes, one call, no_grad: one inference
compile of one frame, no recompiles). tests/analyzers/ir_diff/make_pairs.sh traces every variant under
TORCH_TRACE and imports the logs into tests/golden/ir_diff/<variant>.cls.json.

    base           the reference model
    op_swap        gelu -> silu after `inp` (line 47); Inductor decomposes both, so in the
                   post-grad graph this is gelu's five nodes against silu's two
    act_swap       tanh -> sigmoid after `mid` (line 50): one node whose op changed
    operand_swap   `o - y` -> `y - o` (line 54)
    node_added     `h = h * 0.5` after the tanh (line 52)
    node_removed   no tanh after `mid` (line 50)
    width_changed  hidden width 64 -> 96
    base_again     `base` once more: traced twice, the model must diff as unchanged

Every alternative sits on the same line or on a line of its own, so source lines never shift
between variants: the test can name each expected change by its line. (The diff itself does not
rely on that; tests/analyzers/ir_diff/property_test.cc shifts lines on purpose.)

Usage: python3 pairs.py VARIANT
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

VARIANTS = ("base", "op_swap", "act_swap", "operand_swap", "node_added", "node_removed",
            "width_changed", "base_again")
VARIANT = sys.argv[1] if len(sys.argv) > 1 else "base"


class Net(nn.Module):
    """Linear -> gelu -> Linear -> tanh -> Linear, minus a target, times a learned scale."""

    def __init__(self, width):
        super().__init__()
        self.inp = nn.Linear(32, width)
        self.mid = nn.Linear(width, width)
        self.out = nn.Linear(width, 16)
        self.scale = nn.Parameter(torch.ones(16))

    def forward(self, x, y):
        h = self.inp(x)
        h = F.silu(h) if VARIANT == "op_swap" else F.gelu(h)
        h = self.mid(h)
        if VARIANT != "node_removed":
            h = torch.sigmoid(h) if VARIANT == "act_swap" else torch.tanh(h)
        if VARIANT == "node_added":
            h = h * 0.5
        o = self.out(h)
        d = (y - o) if VARIANT == "operand_swap" else (o - y)
        return d * self.scale


def main():
    if VARIANT not in VARIANTS:
        sys.exit(f"usage: python3 pairs.py {{{'|'.join(VARIANTS)}}}")
    torch.manual_seed(0)
    model = Net(96 if VARIANT == "width_changed" else 64)
    compiled = torch.compile(model, dynamic=False)
    x, y = torch.randn(8, 32), torch.randn(8, 16)
    with torch.no_grad():
        compiled(x, y)


if __name__ == "__main__":
    main()

"""Small models, one per fusion pattern, for compile-lens's fusion tests (tests/analyzers/fusion/).

Run one scene per process under TORCH_TRACE (make_traces.sh does): it is compiled once, with
inference inputs, on CPU; the post-grad graph in the trace is what the fusion pass reads.
Usage: python3 fusion_scenes.py SCENE
"""
import sys

import torch
import torch.nn.functional as F
from torch import nn

M, D, F_DIM, H, HD, V, S = 32, 64, 128, 4, 16, 512, 16


class ResidRmsNorm(nn.Module):
    """GEMM → +resid → RMSNorm (as F.rms_norm) → GEMM."""

    def __init__(self):
        super().__init__()
        self.up = nn.Linear(D, D, bias=False)
        self.down = nn.Linear(D, D, bias=False)
        self.weight = nn.Parameter(torch.ones(D))

    def forward(self, x, resid):
        h = self.up(x) + resid
        n = F.rms_norm(h, (D,), self.weight, 1e-6)
        return self.down(n)


class SwiGluFused(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_up = nn.Linear(D, 2 * F_DIM, bias=False)
        self.down = nn.Linear(F_DIM, D, bias=False)

    def forward(self, x, resid):
        g, u = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(g) * u)


class SwiGluSeparate(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(D, F_DIM, bias=False)
        self.w3 = nn.Linear(D, F_DIM, bias=False)
        self.w2 = nn.Linear(F_DIM, D, bias=False)

    def forward(self, x, resid):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class ResidNormSwiGlu(nn.Module):
    """A transformer block's attention output into its MLP: GEMM → +resid → RMSNorm → the gate/up
    GEMM → SwiGLU → the down GEMM. Two fusions share the gate/up GEMM, the norm before it and
    SwiGLU after it."""

    def __init__(self):
        super().__init__()
        self.o = nn.Linear(D, D, bias=False)
        self.weight = nn.Parameter(torch.ones(D))
        self.gate_up = nn.Linear(D, 2 * F_DIM, bias=False)
        self.down = nn.Linear(F_DIM, D, bias=False)

    def forward(self, x, resid):
        h = self.o(x) + resid
        n = F.rms_norm(h, (D,), self.weight, 1e-6)
        g, u = self.gate_up(n).chunk(2, dim=-1)
        return self.down(F.silu(g) * u)


class BiasGelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, F_DIM)

    def forward(self, x, resid):
        return F.gelu(self.fc(x)).sum(-1)


class LayerNormGemm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.fc = nn.Linear(D, F_DIM, bias=False)

    def forward(self, x, resid):
        return self.fc(self.norm(x + resid))


def rotate_half(t):
    a, b = t.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Rope(nn.Module):
    def __init__(self, qk_norm):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.qk_norm = qk_norm
        pos = torch.arange(M, dtype=torch.float32)[:, None]
        freq = pos / (10000 ** (torch.arange(0, HD, 2, dtype=torch.float32) / HD))
        emb = torch.cat((freq, freq), dim=-1)[:, None, :]
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, x, resid):
        q, k, v = self.qkv(x).view(M, 3, H, HD).unbind(1)
        if self.qk_norm:
            q = q * torch.rsqrt(q.pow(2).mean(-1, keepdim=True) + 1e-6)
            k = k * torch.rsqrt(k.pow(2).mean(-1, keepdim=True) + 1e-6)
        q = q * self.cos + rotate_half(q) * self.sin
        k = k * self.cos + rotate_half(k) * self.sin
        return (q * k).sum(-1) + v.sum(-1)


class LmHeadCe(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(D, V, bias=False)

    def forward(self, x, resid):
        targets = torch.arange(M) % V
        return F.cross_entropy(self.head(x), targets)


class ManualAttention(nn.Module):
    """softmax(QKᵀ/√d + mask)·V written by hand, with a learned additive bias that keeps
    Inductor's fuse_attention patterns from rewriting it to SDPA."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(H, S, S))

    def forward(self, x, resid):
        q = x.view(2, S, H, HD).transpose(1, 2)
        k = resid.view(2, S, H, HD).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) * 0.25 + self.bias
        p = scores.softmax(-1)
        return (p @ k).sum()


class Plain(nn.Module):
    """No pattern: a GEMM whose output is only reduced."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D, bias=False)

    def forward(self, x, resid):
        return (self.fc(x) * resid).sum(-1)


SCENES = {
    "resid_rms_norm": ResidRmsNorm,
    "swiglu_fused": SwiGluFused,
    "swiglu_separate": SwiGluSeparate,
    "resid_norm_swiglu": ResidNormSwiGlu,
    "bias_gelu": BiasGelu,
    "layernorm_gemm": LayerNormGemm,
    "rope": lambda: Rope(False),
    "rope_qknorm": lambda: Rope(True),
    "lm_head_ce": LmHeadCe,
    "manual_attention": ManualAttention,
    "plain": Plain,
}


def main():
    torch.manual_seed(0)
    model = SCENES[sys.argv[1]]().eval()
    x, resid = torch.randn(M, D), torch.randn(M, D)
    with torch.no_grad():
        torch.compile(model)(x, resid)


if __name__ == "__main__":
    main()

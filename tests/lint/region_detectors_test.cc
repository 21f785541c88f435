// Detectors of what a compiled region does: data_dependent_control_flow,
// python_side_effect_in_forward, python_random_in_compiled, torch_rng_parity,
// grad_mode_inside_compiled, numpy_interop (and the extra call patterns: streams, identity,
// lru_cache). Each with snippets that must fire and snippets that must not.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/lint/lint_testing.h"

namespace cl::lint {
namespace {

using namespace ::cl::lint::testing;  // NOLINT(build/namespaces): the helpers and matchers

TEST(DataDependentTest, ItemsCastsBranchesAndDynamicShapes) {
  const LintResult r = LintCode(R"py(import torch

@torch.compile
def f(x, mask, n: int):
    if x.sum() > 0:
        x = x * 2
    v = x.max().item()
    s = x.tolist()
    k = int(x.argmax())
    idx = x.nonzero()
    u = torch.unique(x)
    for i in range(n):
        if mask.any():
            x = x + i
    y = x if x.mean() > 0 else -x
    assert (x >= 0).all()
    print(f"{x.item()}")
    return y
)py");
  EXPECT_THAT(Found(r, "data_dependent_control_flow"),
              ElementsAre("data_dependent_control_flow:5", "data_dependent_control_flow:7",
                          "data_dependent_control_flow:8", "data_dependent_control_flow:9",
                          "data_dependent_control_flow:10", "data_dependent_control_flow:11",
                          "data_dependent_control_flow:13", "data_dependent_control_flow:15",
                          "data_dependent_control_flow:16", "data_dependent_control_flow:17"));
  EXPECT_THAT(Forms(r, "data_dependent_control_flow"),
              ElementsAre("branch", "item", "tolist", "scalar_cast", "dynamic_shape",
                          "dynamic_shape", "branch", "branch", "branch", "item"));
}

TEST(DataDependentTest, ShapesFlagsAndIdentityAreNotDataDependent) {
  EXPECT_THAT(Found(LintCode(R"py(import torch
import torch.nn as nn

class RMSNorm(nn.Module):
    def forward(self, x, mask=None, n: int = 3):
        if self.center is not None:
            x = x - self.center
        if mask is None or x.dim() == 3 or x.shape[0] > 1 or n > 2:
            pass
        if self.training and len(x) > 0:
            x = x * 2
        while n > 0:
            n -= 1
        att = x.masked_fill(x == 0, float("-inf"))
        match n:
            case 1:
                pass
        d = {"a": 1}
        for k, v in d.items():
            pass
        return att

m = torch.compile(RMSNorm())
)py"),
                    "data_dependent_control_flow"),
              IsEmpty());
}

TEST(SideEffectTest, GlobalsClassAttributesClosuresSelfAndOutput) {
  const LintResult r = LintCode(R"py(import logging
import torch
import torch.nn as nn

CACHE = []
REGISTRY = {}
counter = 0

class M(nn.Module):
    items = []

    def forward(self, x):
        CACHE.append(x)
        REGISTRY["k"] = x
        M.items.append(x)
        self.__class__.items.append(x)
        self.history.append(x)
        print(x)
        logging.info("x")
        for t in self.buf:
            self.buf.append(t)
        local = []
        local.append(x)
        return x

def outer():
    seen = []
    @torch.compile
    def f(x):
        seen.append(x)
        return x
    return f

@torch.compile
def g(x):
    global counter
    counter += 1
    with open("log.txt", "w") as fh:
        fh.write("x")
    return x

compiled = torch.compile(M())
)py");
  EXPECT_THAT(Found(r, "python_side_effect_in_forward"),
              ElementsAre("python_side_effect_in_forward:13", "python_side_effect_in_forward:14",
                          "python_side_effect_in_forward:15", "python_side_effect_in_forward:16",
                          "python_side_effect_in_forward:17", "python_side_effect_in_forward:18",
                          "python_side_effect_in_forward:19", "python_side_effect_in_forward:21",
                          "python_side_effect_in_forward:30", "python_side_effect_in_forward:37",
                          "python_side_effect_in_forward:38"));
  EXPECT_THAT(Forms(r, "python_side_effect_in_forward"),
              ElementsAre("global_container", "global_container", "class_container",
                          "class_container", "self_container", "print", "logging",
                          "mutate_while_iterating", "closure_container", "global_assign", "io"));
}

// A KV cache written in place (`self.k_cache[:, :, pos:pos + t] = k`, the health scene's decoder
// and nanoGPT-style caches) is a tensor mutation torch.compile traces: a registered buffer or an
// attribute made by a torch call is no Python container. A dict attribute still is.
TEST(SideEffectTest, WritesIntoATensorAttributeAreNoSideEffect) {
  const LintResult r = LintCode(R"py(import torch
import torch.nn as nn

class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, 4, 64, 8))
        self.v_cache = torch.zeros(1, 4, 64, 8)
        self.scale = nn.Parameter(torch.ones(8))
        self.stats = {}

    def forward(self, k, v, pos):
        self.k_cache[:, :, pos:pos + 1] = k
        self.v_cache[:, :, pos:pos + 1] = v
        self.scale[0] = 1.0
        self.stats["pos"] = pos
        return self.k_cache[:, :, :pos + 1]

compiled = torch.compile(Attn())
)py");
  EXPECT_THAT(Found(r, "python_side_effect_in_forward"),
              ElementsAre("python_side_effect_in_forward:16"));
}

TEST(SideEffectTest, LocalContainersAndEagerCodeAreFine) {
  EXPECT_THAT(Found(LintCode(R"py(import torch
RESULTS = []

@torch.compile
def f(xs):
    out = []
    for x in xs:
        out.append(x * 2)
    parts = {}
    parts.update(a=1)
    return out

def train():
    RESULTS.append(f([torch.ones(2)]))
    print("done")
)py"),
                    "python_side_effect_in_forward"),
              IsEmpty());
}

TEST(PythonRandomTest, ModuleCallsNumpyAndRandomInstances) {
  const LintResult r = LintCode(R"py(import random
import numpy as np
import torch
from random import shuffle

rng = random.Random(0)

@torch.compile
def f(x, order):
    random.shuffle(order)
    p = random.random()
    noise = np.random.rand(3)
    shuffle(order)
    q = rng.random()
    return x * p + q
)py");
  EXPECT_THAT(Found(r, "python_random_in_compiled"),
              ElementsAre("python_random_in_compiled:10", "python_random_in_compiled:11",
                          "python_random_in_compiled:12", "python_random_in_compiled:13",
                          "python_random_in_compiled:14"));
  EXPECT_THAT(Found(r, "numpy_interop"), IsEmpty());  // np.random is the RNG pattern's
}

TEST(PythonRandomTest, TorchRngAndEagerCodeAreNotPythonRandom) {
  EXPECT_THAT(Found(LintCode(R"py(import random
import torch

@torch.compile
def f(x):
    return x + torch.rand_like(x)

def data():
    random.shuffle([1, 2, 3])
)py"),
                    "python_random_in_compiled"),
              IsEmpty());
}

TEST(TorchRngParityTest, TorchRandomOpsDropoutSeedsAndGenerators) {
  const LintResult r = LintCode(R"py(import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, x):
        x = self.drop(x)
        noise = torch.randn_like(x)
        x = F.dropout(x, 0.1, self.training)
        x.normal_()
        torch.manual_seed(0)
        g = torch.Generator()
        g.manual_seed(1)
        return x + noise

net = torch.compile(Net())
)py");
  EXPECT_THAT(Found(r, "torch_rng_parity"),
              ElementsAre("torch_rng_parity:13", "torch_rng_parity:14", "torch_rng_parity:15",
                          "torch_rng_parity:16", "torch_rng_parity:17", "torch_rng_parity:18"));
}

TEST(GradModeTest, ContextManagersDecoratorsFunctionalGradAndRequiresGrad) {
  const LintResult r = LintCode(R"py(import torch

@torch.no_grad()
def stats(x):
    return x.mean()

@torch.compile
def f(x):
    with torch.no_grad():
        y = x * 2
    with torch.set_grad_enabled(False), torch.autocast("cpu"):
        pass
    g = torch.autograd.grad(y.sum(), x)
    w = torch.ones(3, requires_grad=True)
    return stats(y) + w.sum()

def evaluate(model, x):
    with torch.no_grad():
        return model(x)
)py");
  EXPECT_THAT(Found(r, "grad_mode_inside_compiled"),
              ElementsAre("grad_mode_inside_compiled:3", "grad_mode_inside_compiled:9",
                          "grad_mode_inside_compiled:11", "grad_mode_inside_compiled:13",
                          "grad_mode_inside_compiled:14"));
  EXPECT_THAT(Forms(r, "grad_mode_inside_compiled"),
              ElementsAre("decorator", "with", "with", "functional_grad", "requires_grad_tensor"));
}

TEST(NumpyInteropTest, NumpyCallsAndConversions) {
  const LintResult r = LintCode(R"py(import numpy as np
import torch

@torch.compile
def f(x, a):
    y = np.sin(x)
    z = x.numpy()
    t = torch.from_numpy(a)
    return y, z, t

def eager(x):
    return np.cos(x)
)py");
  EXPECT_THAT(Found(r, "numpy_interop"),
              ElementsAre("numpy_interop:6", "numpy_interop:7", "numpy_interop:8"));
}

TEST(ExtraCallPatternsTest, StreamsIdentityAndCachedHelpers) {
  const LintResult r = LintCode(R"py(import functools
import torch

@functools.lru_cache(maxsize=None)
def table(n):
    return n * 2

@torch.compile
def f(x, other):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    key = id(x)
    return x * table(3)
)py");
  EXPECT_THAT(Found(r, "streams_events_in_compiled"),
              ElementsAre("streams_events_in_compiled:10", "streams_events_in_compiled:11"));
  EXPECT_THAT(Found(r, "identity_or_hash_logic"), ElementsAre("identity_or_hash_logic:12"));
  EXPECT_THAT(Found(r, "lru_cache_in_compiled"), ElementsAre("lru_cache_in_compiled:4"));
}

// An SN-GAN discriminator: the hook form of spectral_norm, imported or spelled out, is found where
// the module is built (outside any compiled region); the parametrization form, which compiled
// forwards run twice before backward() without error, is not.
TEST(ExtraCallPatternsTest, SpectralNormsHookFormWhereverTheModuleIsBuilt) {
  const LintResult r = LintCode(R"py(import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm
from torch.nn.utils.parametrizations import spectral_norm as sn_param

class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = spectral_norm(nn.Linear(16, 32))
        self.b = nn.utils.spectral_norm(nn.Linear(32, 1))
        self.c = sn_param(nn.Linear(32, 1))

    def forward(self, x):
        return self.b(self.a(x))

cd = torch.compile(D())
)py");
  EXPECT_THAT(Found(r, "spectral_norm_hook_compiled"),
              ElementsAre("spectral_norm_hook_compiled:9", "spectral_norm_hook_compiled:10"));
}

}  // namespace
}  // namespace cl::lint

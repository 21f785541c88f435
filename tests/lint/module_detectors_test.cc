// Detectors that read a whole file: module_attr_mutation, global_rebinding_read_in_compiled,
// python_scalar_args, custom_op_mutation_undeclared, hook_change_after_compile.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/lint/lint_testing.h"

namespace cl::lint {
namespace {

using namespace ::cl::lint::testing;  // NOLINT(build/namespaces): the helpers and matchers

TEST(ModuleAttrTest, FlagsWrittenAfterCompileInsideAndOut) {
  const LintResult r = LintCode(R"py(import torch
import torch.nn as nn

class LoRA(nn.Module):
    def __init__(self):
        super().__init__()
        self.enabled = True
        self._setup()

    def _setup(self):
        self.scale = 1.0

    def enable(self, on):
        self.enabled = on

    def set_weight(self):
        self.w = torch.zeros(3)

    def forward(self, x):
        self.calls += 1
        if self.enabled:
            return x * self.scale
        return x

def main():
    model = LoRA()
    before = model.scale
    compiled = torch.compile(model)
    model.enabled = False
    model.inner.scale = 2.0
    setattr(model, "scale", 3.0)
    LoRA.scale = 2.0
    compiled.flag = 1
)py");
  EXPECT_THAT(
      Found(r, "module_attr_mutation"),
      ElementsAre("module_attr_mutation:14", "module_attr_mutation:20", "module_attr_mutation:29",
                  "module_attr_mutation:30", "module_attr_mutation:31", "module_attr_mutation:32",
                  "module_attr_mutation:33"));
  EXPECT_THAT(Forms(r, "module_attr_mutation"),
              ElementsAre("self_assign", "self_assign", "external_assign", "external_assign",
                          "setattr", "class_attr", "external_assign"));
}

TEST(ModuleAttrTest, UncompiledModulesAndBeforeCompileAreFine) {
  EXPECT_THAT(Found(LintCode(R"py(import torch
import torch.nn as nn

class Plain(nn.Module):
    def toggle(self):
        self.on = False
    def forward(self, x):
        return x

class Compiled(nn.Module):
    def forward(self, x):
        return x

def main():
    p = Plain()
    p.on = True
    m = Compiled()
    m.flag = True
    c = torch.compile(m)
)py"),
                    "module_attr_mutation"),
              IsEmpty());
}

TEST(GlobalRebindTest, RebindingsAfterTheFirstCallAndThroughGlobal) {
  const LintResult r = LintCode(R"py(import torch

def act(x):
    return x

SCALE = 2.0
MODE = "a"
MODE = "b"

@torch.compile
def f(x):
    y = act(x)
    return y * SCALE if MODE == "b" else x

f(torch.ones(3))
act = lambda x: x * 2

def reset():
    global SCALE
    SCALE = 3.0
)py");
  EXPECT_THAT(
      Found(r, "global_rebinding_read_in_compiled"),
      ElementsAre("global_rebinding_read_in_compiled:12", "global_rebinding_read_in_compiled:13"));
  EXPECT_THAT(Forms(r, "global_rebinding_read_in_compiled"),
              ElementsAre("function_global", "global"));
  EXPECT_THAT(FindingFor(r, "global_rebinding_read_in_compiled")->message,
              HasSubstr("`act` is rebound at line 16"));
}

TEST(ScalarArgsTest, VaryingScalarsIntoCompiledCallables) {
  const LintResult r = LintCode(R"py(import torch
import torch.nn.functional as F

class Net(torch.nn.Module):
    def forward(self, x, s):
        return x * s

model = torch.compile(Net())
x = torch.randn(3)
sched = None
for step in range(10):
    lr = sched.get_last_lr()[0]
    out = model(x, lr)
    out = model(x, step)
    out = model(x, s=temperature)
    out = model(x, temperature=0.7)
    out = model(x, 0.5)
    out = model(x, sched.get_last_lr()[0])

@torch.compile
def norm(x, eps: float = 1e-5):
    return F.layer_norm(x, (3,), eps=eps)

opt = torch.optim.SGD([], lr=0.1)
opt_step = torch.compile(opt.step)
for g in opt.param_groups:
    g["lr"] = 0.01
opt.param_groups[0]["lr"] = 0.02
)py");
  EXPECT_THAT(Found(r, "python_scalar_args"),
              ElementsAre("python_scalar_args:13", "python_scalar_args:14", "python_scalar_args:15",
                          "python_scalar_args:18", "python_scalar_args:22", "python_scalar_args:27",
                          "python_scalar_args:28"));
  EXPECT_THAT(Forms(r, "python_scalar_args"),
              ElementsAre("scalar_name", "loop_var", "scalar_name", "scheduler", "op_param",
                          "param_groups", "param_groups"));
}

TEST(ScalarArgsTest, TensorsAndLiteralsAreFine) {
  EXPECT_THAT(Found(LintCode(R"py(import torch
model = torch.compile(torch.nn.Linear(3, 3))
for bs in (16, 32):
    model(torch.randn(bs, 3))
    model(torch.ones(3), 2)
def eager(fn, lr):
    return fn(lr)
)py"),
                    "python_scalar_args"),
              IsEmpty());
}

// Hook changes after the compile, on the module itself, a submodule (by attribute, index, through
// the compiled wrapper, or a loop over modules()), an in-place compiled module, and a removal of a
// hook registered before the compile (as the sandbox scene amp_hooks showed: a forward hook
// registered on `m.up` after `torch.compile(m)` never ran).
TEST(HookAfterCompileTest, HooksChangedAfterTheCompile) {
  const LintResult r = LintCode(R"py(import torch
import torch.nn as nn

def train(m, x):
    before = m.up.register_forward_hook(print)
    cm = torch.compile(m)
    cm(x)
    m.up.register_forward_hook(print)
    m.register_forward_pre_hook(print)
    cm.down.register_full_backward_hook(print)
    m.layers[0].register_forward_hook(print)
    for sub in m.modules():
        sub.register_forward_hook(print)
    before.remove()

def in_place(net, x):
    net.compile()
    net.register_forward_hook(print)

def rebound(model, x):
    model = torch.compile(model)
    model.encoder.register_forward_hook(print)
)py");
  EXPECT_THAT(Found(r, "hook_change_after_compile"),
              ElementsAre("hook_change_after_compile:8", "hook_change_after_compile:9",
                          "hook_change_after_compile:10", "hook_change_after_compile:11",
                          "hook_change_after_compile:13", "hook_change_after_compile:14",
                          "hook_change_after_compile:18", "hook_change_after_compile:22"));
  EXPECT_THAT(Forms(r, "hook_change_after_compile"),
              ElementsAre("registered", "registered", "registered", "registered", "registered",
                          "removed", "registered", "registered"));
  const Finding* first = FindingFor(r, "hook_change_after_compile");
  ASSERT_NE(first, nullptr);
  EXPECT_THAT(first->message, HasSubstr("hooks of `m.up` change (`register_forward_hook`) after "
                                        "`m` was compiled"));
  EXPECT_THAT(first->message, HasSubstr("`m` was compiled at line 6"));
}

// Hooks registered before the compile, on the wrapper `torch.compile` returned (they run eagerly
// around it), on another module, or in another function, are not reported.
TEST(HookAfterCompileTest, HooksTheCompiledCodeSeesAreFine) {
  EXPECT_THAT(Found(LintCode(R"py(import torch

def setup(m, other, x):
    m.register_forward_hook(print)
    h = m.up.register_forward_hook(print)
    cm = torch.compile(m)
    cm.register_forward_hook(print)
    other.register_forward_hook(print)
    model = torch.compile(m.block)
    model.register_forward_hook(print)
    mx.register_forward_hook(print)
    return h

def later(m):
    m.register_forward_hook(print)
)py"),
                    "hook_change_after_compile"),
              IsEmpty());
}

TEST(CustomOpTest, UndeclaredMutationsUnknownAndLibrarySchemas) {
  const LintResult r = LintCode(R"py(import torch
from torch.library import custom_op

@torch.library.custom_op("mylib::scale_", mutates_args=())
def scale_(x: torch.Tensor, s: float) -> None:
    x.mul_(s)

@torch.library.custom_op("mylib::fill", mutates_args=("out",))
def fill(x: torch.Tensor, out: torch.Tensor) -> None:
    out.copy_(x)
    x.add_(1)

@custom_op("mylib::u", mutates_args="unknown")
def u(x: torch.Tensor) -> None:
    x.zero_()

def plain(x, out):
    out.copy_(x)

plain_op = torch.library.custom_op("mylib::plain", plain, mutates_args=["x"])

lib = torch.library.Library("mylib", "DEF")
lib.define("bump(Tensor(a!) x, Tensor y) -> ()")

def bump_impl(x, y):
    x.add_(y)
    y[0] = 1

lib.impl("bump", bump_impl, "CPU")
)py");
  EXPECT_THAT(Found(r, "custom_op_mutation_undeclared"),
              ElementsAre("custom_op_mutation_undeclared:6", "custom_op_mutation_undeclared:11",
                          "custom_op_mutation_undeclared:15", "custom_op_mutation_undeclared:18",
                          "custom_op_mutation_undeclared:27"));
  EXPECT_THAT(Forms(r, "custom_op_mutation_undeclared"),
              ElementsAre("undeclared", "undeclared", "unknown", "undeclared", "undeclared"));
}

}  // namespace
}  // namespace cl::lint

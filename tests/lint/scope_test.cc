// The compiled region: each kind of root, the closure over calls the captured files resolve, the
// exclusions, and "assume compiled" mode for files no root reaches. Membership is read off a
// region-only pattern: every function below calls random.random(), so a python_random_in_compiled
// finding on its line means the function is in the region.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/lint/lint_testing.h"

namespace cl::lint {
namespace {

using namespace ::cl::lint::testing;  // NOLINT(build/namespaces): the helpers and matchers

constexpr char kRandom[] = "python_random_in_compiled";

std::vector<std::string> Compiled(const LintResult& r) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) {
    if (f.pattern == kRandom)
      out.push_back(f.assumed_compiled ? absl::StrCat(f.function, " (assumed)") : f.function);
  }
  return out;
}

std::vector<std::string> Roots(const LintResult& r) {
  std::vector<std::string> out;
  for (const RootInfo& root : r.roots) out.push_back(absl::StrCat(root.function, ": ", root.why));
  return out;
}

TEST(ScopeTest, DecoratorRoots) {
  const LintResult r = LintCode(R"py(import random
import torch
from torch import compile as tc

@torch.compile
def a(x):
    return x + random.random()

@torch.compile(mode="max-autotune", fullgraph=True)
def b(x):
    return x + random.random()

@torch._dynamo.optimize("inductor")
def c(x):
    return x + random.random()

@torch.compiler.nested_compile_region
def d(x):
    return x + random.random()

@tc
def e(x):
    return x + random.random()

def eager(x):
    return x + random.random()
)py");
  EXPECT_THAT(Compiled(r), ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_THAT(Roots(r),
              ElementsAre("a: @torch.compile", "b: @torch.compile", "c: @torch._dynamo.optimize",
                          "d: @torch.compiler.nested_compile_region", "e: @torch.compile"));
}

TEST(ScopeTest, CompileCallRoots) {
  const LintResult r = LintCode(R"py(import random
import torch
import torch.nn as nn

def f(x):
    return x + random.random()

class Net(nn.Module):
    def forward(self, x):
        return x + random.random()

class Other(nn.Module):
    def forward(self, x):
        return x + random.random()

class Third(nn.Module):
    def forward(self, x):
        return x + random.random()

def g(x):
    return x + random.random()

def main():
    f2 = torch.compile(f)
    model = Net()
    opt_model = torch.compile(model, dynamic=False)
    other = Other()
    other.compile()
    third = torch.compile(Third())
    g2 = torch._dynamo.optimize("eager")(g)
)py");
  EXPECT_THAT(Compiled(r), ElementsAre("f", "Net.forward", "Other.forward", "Third.forward", "g"));
  EXPECT_THAT(Roots(r),
              UnorderedElementsAre("f: torch.compile(f) at line 24",
                                   "Net.forward: torch.compile(model, dynamic=False) at line 26",
                                   "Other.forward: other.compile() at line 28",
                                   "Third.forward: torch.compile(Third()) at line 29",
                                   "g: torch._dynamo.optimize(\"eager\")(g) at line 30"));
}

TEST(ScopeTest, CapturedFramesAreRoots) {
  LintOptions options;
  options.frames.push_back({"/p/t.py", "forward", 5});
  const LintResult r = LintCode(R"py(import random
import torch

class Net(torch.nn.Module):
    def forward(self, x):
        return x + random.random()

def elsewhere(x):
    return torch.compile(x)
)py",
                                options);
  EXPECT_THAT(Compiled(r), ElementsAre("Net.forward"));
  EXPECT_THAT(Roots(r), ElementsAre("Net.forward: compiled frame in the capture"));
}

TEST(ScopeTest, ClosureFollowsCallsMethodsSubmodulesAndSuper) {
  const LintResult r = LintCode(R"py(import random
import torch
import torch.nn as nn

def helper(x):
    return x + random.random()

class Base(nn.Module):
    def forward(self, x):
        return x + random.random()

class Block(nn.Module):
    def forward(self, x):
        return x + random.random()

class Net(Base):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(3)])
        self.head = Block()

    def prep(self, x):
        return x + random.random()

    def unused(self, x):
        return x + random.random()

    def forward(self, x):
        x = helper(self.prep(x))
        for blk in self.blocks:
            x = blk(x)
        x = self.head(x)
        return super().forward(x)

net = torch.compile(Net())
)py");
  EXPECT_THAT(Compiled(r),
              UnorderedElementsAre("helper", "Base.forward", "Block.forward", "Net.prep"));
}

TEST(ScopeTest, ClosureCrossesCapturedFiles) {
  const LintResult r = LintFiles({{"/p/pkg/layers.py", R"py(import random

def mix(x):
    return x + random.random()

class Layer:
    def forward(self, x):
        return mix(x)

def unused(x):
    return x + random.random()
)py"},
                                  {"/p/train.py", R"py(import torch
from pkg.layers import Layer
from pkg import layers

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Layer()

    def forward(self, x):
        return layers.mix(self.layer(x))

model = torch.compile(Model())
)py"}});
  EXPECT_THAT(Compiled(r), ElementsAre("mix"));
  EXPECT_TRUE(r.assumed_files.empty());
}

TEST(ScopeTest, ExclusionsStopTheClosure) {
  const LintResult r = LintCode(R"py(import random
import torch

def deep(x):
    return x + random.random()

@torch.compiler.disable
def log_stats(x):
    deep(x)
    return x + random.random()

@torch._dynamo.assume_constant_result
def table():
    return random.random()

@torch.compile
def f(x):
    def inner(y):
        return y + random.random()
    return inner(log_stats(x)) * table()
)py");
  EXPECT_THAT(Compiled(r), ElementsAre("f.<locals>.inner"));
}

TEST(ScopeTest, NoRootMeansAssumeCompiled) {
  const LintResult r = LintFiles({{"/p/lib.py", R"py(import random

def helper(x):
    return x + random.random()

@torch.compiler.disable
def skipped(x):
    return x + random.random()
)py"}});
  EXPECT_THAT(Compiled(r), ElementsAre("helper (assumed)"));
  EXPECT_THAT(r.assumed_files, ElementsAre("/p/lib.py"));
}

TEST(ScopeTest, ModuleLevelCodeIsNeverCompiled) {
  EXPECT_THAT(Compiled(LintCode(R"py(import random
x = random.random()
for i in range(3):
    random.shuffle([1, 2])
)py")),
              IsEmpty());
}

}  // namespace
}  // namespace cl::lint

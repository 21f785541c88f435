// The aliasing detectors (in_place_op_on_alias, setitem_on_overlapping_view, data_attribute_use,
// resize_or_set_on_view): positive and negative snippets, including the aliasing shapes of the
// shipped DB's real issues (lint/correctness.toml), in nested functions, methods, lambdas,
// comprehensions, walrus and match.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/lint/lint_testing.h"

namespace cl::lint {
namespace {

using namespace ::cl::lint::testing;  // NOLINT(build/namespaces): the helpers and matchers

constexpr char kAlias[] = "in_place_op_on_alias";

// The hero's shape: y = x; z = y.view(-1); z.mul_(0.5); return y.
TEST(InPlaceOnAliasTest, ViewOfAnAliasReadAgain) {
  const LintResult r = LintCode(R"py(import torch

@torch.compile
def f(x):
    y = x
    z = y.view(-1)
    z.mul_(0.5)
    return y
)py");
  EXPECT_THAT(Found(r), ElementsAre("in_place_op_on_alias:7"));
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.snippet, "z.mul_(0.5)");
  EXPECT_EQ(f.function, "f");
  EXPECT_EQ(f.form, "view_alias");
  EXPECT_THAT(f.message, HasSubstr("in-place `mul_` on `z`, which shares storage with `y`"));
  EXPECT_THAT(f.message, HasSubstr("`y` is read again at line 8"));
  EXPECT_FALSE(f.assumed_compiled);
  EXPECT_EQ(f.severity, Severity::kNone);  // no DB: a candidate
}

// pytorch#94777: x.log_() after y = log(x); y changed under compile.
TEST(InPlaceOnAliasTest, ValueComputedBeforeTheWriteIsReadAfter) {
  const LintResult r = LintCode(R"py(import torch
@torch.compile
def f(x):
    y = torch.log(x)
    x.log_()
    return y
)py");
  EXPECT_THAT(Found(r), ElementsAre("in_place_op_on_alias:5"));
  EXPECT_EQ(r.findings[0].form, "read_before_write");
  EXPECT_THAT(r.findings[0].message, HasSubstr("`y` was computed from `x` before the write"));
}

TEST(InPlaceOnAliasTest, ExcludedMethodsAndCodeOutsideTheRegion) {
  EXPECT_THAT(Found(LintCode(R"py(import torch
@torch.compile
def f(x):
    v = x.view(-1)
    v.requires_grad_()
    return x

def not_compiled(x):
    z = x.view(-1)
    z.mul_(2)
    return x
)py"),
                    kAlias),
              IsEmpty());
}

// Snippets and every finding they must give (none: the shape is fine).
struct AliasCase {
  const char* name;
  const char* code;
  std::vector<std::string> found;
};

class InPlaceOnAliasSnippetTest : public ::testing::TestWithParam<AliasCase> {};

TEST_P(InPlaceOnAliasSnippetTest, Findings) {
  EXPECT_THAT(Found(LintCode(GetParam().code)), ::testing::ElementsAreArray(GetParam().found));
}

INSTANTIATE_TEST_SUITE_P(
    Snippets, InPlaceOnAliasSnippetTest,
    ::testing::Values(
        AliasCase{"OnlyTheViewReadAfterwardsIsFine",
                  R"py(import torch
@torch.compile
def f(y):
    z = y.view(-1)
    z.mul_(0.5)
    return z
)py",
                  {}},
        AliasCase{"CloneBreaksTheAlias",
                  R"py(import torch
@torch.compile
def f(y):
    z = y.view(-1).clone()
    z.mul_(0.5)
    return y, z
)py",
                  {}},
        AliasCase{"RebindingTheSameNameIsFine",
                  R"py(import torch
@torch.compile
def f(x):
    x = x.view(-1)
    x.add_(1)
    return x
)py",
                  {}},
        // Mutating the base while a view of it is read afterwards (the reverse direction).
        AliasCase{"BaseWrittenWhileItsViewIsReadAfter",
                  R"py(import torch
@torch.compile
def f(x):
    z = x.view(-1)
    x.add_(1)
    return z
)py",
                  {"in_place_op_on_alias:5"}},
        // chunk/split/unbind results are views: unpacked, looped over, or in a comprehension.
        AliasCase{"SplitViewsUnpackedLoopedAndComprehended",
                  R"py(import torch
@torch.compile
def unpacked(x):
    a, b = x.chunk(2)
    a.mul_(2)
    return x

@torch.compile
def looped(x):
    for p in x.split(2):
        p.mul_(2)
    return x

@torch.compile
def comprehended(x):
    parts = [p.mul_(2) for p in x.unbind(0)]
    return x

@torch.compile
def enumerated(x):
    for i, row in enumerate(x.unbind(0)):
        row.add_(i)
    return x.sum()
)py",
                  {"in_place_op_on_alias:5", "in_place_op_on_alias:11", "in_place_op_on_alias:16",
                   "in_place_op_on_alias:22"}},
        AliasCase{"WalrusLambdaAndMatch",
                  R"py(import torch
@torch.compile
def walrus(y):
    if (z := y.view(-1)) is not None:
        z.add_(1)
    return y

@torch.compile
def with_lambda(x):
    z = x.view(-1)
    bump = lambda: z.add_(1)
    bump()
    return x

@torch.compile
def matched(y, mode: str):
    match mode:
        case "scale":
            z = y[0]
            z.mul_(2)
        case _:
            pass
    return y
)py",
                  {"in_place_op_on_alias:5", "in_place_op_on_alias:11", "in_place_op_on_alias:20"}},
        AliasCase{"NestedFunctionsAndMethods",
                  R"py(import torch
import torch.nn as nn
import torch.nn.functional as F

@torch.compile
def outer(x):
    def inner(t):
        v = t.view(-1)
        v.add_(1)
        return t
    return inner(x)

class M(nn.Module):
    def forward(self, x):
        v = x[0]
        F.relu(v, inplace=True)
        w = x[1:]
        w += 1
        return x

model = torch.compile(M())
)py",
                  {"in_place_op_on_alias:9", "in_place_op_on_alias:16", "in_place_op_on_alias:18"}},
        AliasCase{"FStringsDoNotConfuseTheNames",
                  R"py(import torch
@torch.compile
def f(x):
    z = x.view(-1)
    label = f"{z.shape!r:>10} and {x.dtype}_"
    return z.add(1), label
)py",
                  {}},
        AliasCase{"TransposeAndExpandViews",
                  R"py(import torch
@torch.compile
def f(x, w):
    a = x.t()
    a.add_(1)
    b = w.expand(4, 3)
    b.add_(1)
    return x, w
)py",
                  {"in_place_op_on_alias:5", "in_place_op_on_alias:7"}}),
    [](const ::testing::TestParamInfo<AliasCase>& info) { return std::string(info.param.name); });

// setitem_on_overlapping_view

TEST(SetitemOverlapTest, WritesThroughOverlappingMemory) {
  const LintResult r = LintCode(R"py(import torch
@torch.compile
def f(x, idx, src):
    e = x.expand(4, 3)
    e[0] = 1
    x[1:] = x[:-1]
    x[1:] = x[:-1].clone()
    x[idx] = x[idx] + 1
    w = x.unfold(0, 2, 1)
    w.index_add_(0, idx, src)
    x[idx] += 1
    return x
)py");
  EXPECT_THAT(Found(r, "setitem_on_overlapping_view"),
              ElementsAre("setitem_on_overlapping_view:5", "setitem_on_overlapping_view:6",
                          "setitem_on_overlapping_view:7", "setitem_on_overlapping_view:8",
                          "setitem_on_overlapping_view:10", "setitem_on_overlapping_view:11"));
  EXPECT_EQ(FindingFor(r, "setitem_on_overlapping_view")->form, "overlapping_view");
}

TEST(SetitemOverlapTest, OrdinaryWritesAreFine) {
  EXPECT_THAT(Found(LintCode(R"py(import torch
@torch.compile
def f(x, y, n: int):
    x[0] = y[0]
    for i in range(n):
        x[i] = x[i] + 1
    x[:, 0] = 0
    x[1:] = y[:-1]
    return x
)py"),
                    "setitem_on_overlapping_view"),
              IsEmpty());
}

// data_attribute_use

TEST(DataAttributeTest, AssignWriteReadSetAndStorage) {
  const LintResult r = LintCode(R"py(import torch
@torch.compile
def f(p, t, y):
    p.data = t
    p.data.add_(1)
    p.data[0] = 1
    q = p.data
    b = torch.empty(3)
    b.set_(y)
    t.untyped_storage().resize_(0)
    return q
)py");
  EXPECT_THAT(Found(r, "data_attribute_use"),
              ElementsAre("data_attribute_use:4", "data_attribute_use:5", "data_attribute_use:6",
                          "data_attribute_use:7", "data_attribute_use:9", "data_attribute_use:10"));
  EXPECT_THAT(Forms(r, "data_attribute_use"),
              ElementsAre("assign", "inplace", "inplace", "read", "set_", "storage"));
}

TEST(DataAttributeTest, OutsideTheRegionAndOtherAttributesAreFine) {
  EXPECT_THAT(Found(LintCode(R"py(import torch
@torch.compile
def f(x, batch):
    return x * batch.data_scale

def ema(p, q):
    p.data.mul_(0.9).add_(q.data)
)py"),
                    "data_attribute_use"),
              IsEmpty());
}

// resize_or_set_on_view

TEST(StorageChangeTest, ViewsAndGraphInputs) {
  const LintResult r = LintCode(R"py(import torch
@torch.compile
def f(x, y):
    v = x.view(-1)
    v.resize_(10)
    y.set_(torch.zeros(2))
    fresh = torch.empty(3)
    fresh.resize_(4)
    return v
)py");
  EXPECT_THAT(Found(r, "resize_or_set_on_view"),
              ElementsAre("resize_or_set_on_view:5", "resize_or_set_on_view:6"));
  EXPECT_THAT(Found(r, "data_attribute_use"), IsEmpty());  // set_ on an input is this pattern's
}

}  // namespace
}  // namespace cl::lint

#include "capture/torch_trace/fx_graph.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "capture/validate.h"
#include "common/file_io.h"
#include "common/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "re2/re2.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

using ::cl::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// ---- Dumping nodes (the golden format) ------------------------------------------------------

// `%name` for a node, the literal as FX spelled it, `[...]` / `(...)` for lists and tuples.
std::string DumpArg(const v1::Arg& a) {
  switch (a.kind_case()) {
    case v1::Arg::kNode:
      return absl::StrCat("%", a.node());
    case v1::Arg::kLiteral:
      return a.literal();
    case v1::Arg::kList: {
      std::vector<std::string> items;
      for (const v1::Arg& i : a.list().items()) items.push_back(DumpArg(i));
      if (!a.list().tuple()) return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
      return absl::StrCat("(", absl::StrJoin(items, ", "), items.size() == 1 ? ",)" : ")");
    }
    case v1::Arg::KIND_NOT_SET:
      break;
  }
  return "<unset>";
}

// One line per node: `name = op[target](args, key=value)  meta{...}  src{...}  module{...}`.
std::string DumpNode(const v1::Node& n) {
  std::vector<std::string> args;
  for (const v1::Arg& a : n.args()) args.push_back(DumpArg(a));
  std::vector<std::string> keys;
  for (const auto& [k, v] : n.kwargs()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  for (const std::string& k : keys) args.push_back(absl::StrCat(k, "=", DumpArg(n.kwargs().at(k))));
  std::string out =
      absl::StrCat(n.name(), " = ", n.op(), "[", n.target(), "](", absl::StrJoin(args, ", "), ")");
  if (n.has_meta()) {
    const v1::TensorMeta& m = n.meta();
    absl::StrAppend(&out, "  meta{dtype=", m.dtype(), " shape=[", absl::StrJoin(m.shape(), ", "),
                    "] stride=[", absl::StrJoin(m.stride(), ", "), "] device=", m.device(),
                    m.sym_expr().empty() ? "" : absl::StrCat(" sym=", m.sym_expr()), "}");
  }
  if (n.has_source()) {
    const v1::SourceLoc& s = n.source();
    if (s.no_stacktrace()) {
      absl::StrAppend(&out, "  src{no_stacktrace}");
    } else {
      absl::StrAppend(&out, "  src{", s.file(), ":", s.line(), " in ", s.fn(), " | ", s.code(), "}");
    }
  }
  if (!n.module_stack().empty())
    absl::StrAppend(&out, "  module{", absl::StrJoin(n.module_stack(), " / "), "}");
  return out;
}

std::string Dump(const v1::Graph& g, const FxParseResult& r) {
  std::string out = absl::StrCat("# nodes=", r.nodes, " skipped_lines=", r.skipped_lines,
                                 " nested_classes=", r.nested_classes, "\n");
  for (const std::string& p : r.problems) absl::StrAppend(&out, "# problem: ", p, "\n");
  for (const v1::Node& n : g.nodes()) absl::StrAppend(&out, DumpNode(n), "\n");
  return out;
}

struct Parsed {
  v1::Graph graph;
  FxParseResult result;
  const v1::Node& node(absl::string_view name) const {
    for (const v1::Node& n : graph.nodes()) {
      if (n.name() == name) return n;
    }
    ADD_FAILURE() << "no node " << name << " in\n" << Dump(graph, result);
    static const v1::Node kNone;
    return kNone;
  }
};

Parsed Parse(absl::string_view text) {
  Parsed p;
  p.result = ParseFxGraphText(text, &p.graph);
  return p;
}

std::vector<std::string> Names(const v1::Graph& g) {
  std::vector<std::string> names;
  for (const v1::Node& n : g.nodes()) names.push_back(n.name());
  return names;
}

// The graph as the rest of compile-lens will see it: names unique, every node argument an earlier
// node, every string valid UTF-8.
void ExpectConsistent(const v1::Graph& graph) {
  v1::SessionCapture c;
  c.set_schema("0.5.0");
  v1::Graph* g = c.add_graphs();
  *g = graph;
  g->set_id("g");
  EXPECT_THAT(ValidateCapture(c), IsOk());
  const auto valid = [](const std::string& s) { EXPECT_TRUE(IsValidUtf8(s)) << absl::CHexEscape(s); };
  std::vector<const v1::Arg*> args;
  for (const v1::Node& n : graph.nodes()) {
    for (const std::string* s : {&n.name(), &n.op(), &n.target(), &n.meta().dtype(), &n.meta().device(),
                                 &n.source().file(), &n.source().fn(), &n.source().code()}) {
      valid(*s);
    }
    for (const std::string& d : n.meta().shape()) valid(d);
    for (const std::string& d : n.meta().stride()) valid(d);
    for (const v1::Arg& a : n.args()) args.push_back(&a);
    for (const auto& [k, a] : n.kwargs()) {
      valid(k);
      args.push_back(&a);
    }
  }
  while (!args.empty()) {
    const v1::Arg* a = args.back();
    args.pop_back();
    valid(a->node());
    valid(a->literal());
    for (const v1::Arg& i : a->list().items()) args.push_back(&i);
  }
}

// ---- Golden cases ---------------------------------------------------------------------------

const std::string kGoldenDir = std::string(CL_SOURCE_DIR) + "/tests/golden/fx_graph";

class FxGoldenTest : public ::testing::TestWithParam<const char*> {};

// tests/golden/fx_graph/<case>.txt is a payload cut from a real log (see README.md there);
// <case>.nodes.txt is the expected dump. CL_UPDATE_GOLDEN=1 rewrites the expectations.
TEST_P(FxGoldenTest, MatchesGolden) {
  const std::string base = absl::StrCat(kGoldenDir, "/", GetParam());
  ASSERT_OK_AND_ASSIGN(const std::string text, ReadFile(base + ".txt"));
  const Parsed p = Parse(text);
  const std::string dump = Dump(p.graph, p.result);
  EXPECT_EQ(p.result.skipped_lines, 0u) << dump;
  ExpectConsistent(p.graph);
  const char* update = std::getenv("CL_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    ASSERT_THAT(WriteFile(base + ".nodes.txt", dump), IsOk());
    return;
  }
  ASSERT_OK_AND_ASSIGN(const std::string want, ReadFile(base + ".nodes.txt"));
  EXPECT_EQ(dump, want) << "regenerate with CL_UPDATE_GOLDEN=1 if the change is intended";
}

INSTANTIATE_TEST_SUITE_P(Payloads, FxGoldenTest,
                         ::testing::Values("hero_post_grad", "hero_dynamo_output", "train_aot_backward",
                                           "train_aot_joint", "dynamic_symbolic",
                                           "dynamic_aot_backward_symbolic", "corpus_joint_pytree_multiline",
                                           "corpus_flex_attention_nested", "corpus_aot_get_attr",
                                           "corpus_multiline_signature"));

// ---- Focused cases --------------------------------------------------------------------------

TEST(FxGraphTest, PostGradNodes) {
  const Parsed p = Parse(R"(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[256, 64][64, 1]cpu", arg1_1: "f32[16, 64][64, 1]cpu"):
         # File: /mnt/project/examples/hero_scene.py:69 in forward, code: h = self.up(x)
        permute: "f32[64, 256][1, 64]cpu" = torch.ops.aten.permute.default(arg0_1, [1, 0]);  arg0_1 = None
        mm: "f32[16, 256][256, 1]cpu" = torch.ops.aten.mm.default(arg1_1, permute);  arg1_1 = permute = None
        return (mm,)
        )");
  EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
  EXPECT_EQ(p.result.nodes, 5u);
  EXPECT_THAT(Names(p.graph), ElementsAre("arg0_1", "arg1_1", "permute", "mm", "output"));
  const v1::Node& arg = p.node("arg0_1");
  EXPECT_EQ(arg.op(), "placeholder");
  EXPECT_EQ(arg.target(), "arg0_1");
  EXPECT_EQ(arg.meta().dtype(), "f32");
  EXPECT_THAT(arg.meta().shape(), ElementsAre("256", "64"));
  EXPECT_THAT(arg.meta().stride(), ElementsAre("64", "1"));
  EXPECT_EQ(arg.meta().device(), "cpu");
  EXPECT_FALSE(arg.has_source());
  const v1::Node& permute = p.node("permute");
  EXPECT_EQ(permute.op(), "call_function");
  EXPECT_EQ(permute.target(), "aten.permute.default");
  EXPECT_EQ(DumpArg(permute.args(0)), "%arg0_1");
  EXPECT_EQ(DumpArg(permute.args(1)), "[1, 0]");
  EXPECT_EQ(permute.source().file(), "/mnt/project/examples/hero_scene.py");
  EXPECT_EQ(permute.source().line(), 69u);
  EXPECT_EQ(permute.source().fn(), "forward");
  EXPECT_EQ(permute.source().code(), "h = self.up(x)");
  const v1::Node& out = p.node("output");
  EXPECT_EQ(out.op(), "output");
  EXPECT_EQ(out.target(), "output");
  ASSERT_EQ(out.args_size(), 1);
  EXPECT_EQ(out.args(0).node(), "mm");
  EXPECT_FALSE(out.has_source());
  ExpectConsistent(p.graph);
}

TEST(FxGraphTest, SymbolicShapes) {
  const Parsed p = Parse(R"fx(class GraphModule(torch.nn.Module):
    def forward(self, s0: "Sym(s0)", x: "f32[s0, 2*s0, s0 + 1, ((s0 + 1)//2), Max(1, s0)][s0, 1, 1, 1, 1]cuda:0", y: "bf16[16, 256]", z: "i64[]"):
        sym_size_int: "Sym(s0 + 1)" = torch.ops.aten.sym_size.int(x, 0)
        var_mean: "(f32[s0, 1][1, 1]cpu, f32[s0, 1][1, 1]cpu)" = torch.ops.aten.var_mean.correction(x, [1])
        return (sym_size_int, var_mean))fx");
  EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
  const v1::TensorMeta& s0 = p.node("s0").meta();
  EXPECT_EQ(s0.dtype(), "Sym");
  EXPECT_THAT(s0.shape(), IsEmpty());
  const v1::TensorMeta& x = p.node("x").meta();
  EXPECT_EQ(x.dtype(), "f32");
  EXPECT_THAT(x.shape(), ElementsAre("s0", "2*s0", "s0 + 1", "((s0 + 1)//2)", "Max(1, s0)"));
  EXPECT_THAT(x.stride(), ElementsAre("s0", "1", "1", "1", "1"));
  EXPECT_EQ(x.device(), "cuda:0");
  const v1::TensorMeta& y = p.node("y").meta();  // older torch prints no stride and no device
  EXPECT_EQ(y.dtype(), "bf16");
  EXPECT_THAT(y.shape(), ElementsAre("16", "256"));
  EXPECT_THAT(y.stride(), IsEmpty());
  EXPECT_EQ(y.device(), "");
  EXPECT_EQ(p.node("z").meta().dtype(), "i64");
  EXPECT_THAT(p.node("z").meta().shape(), IsEmpty());
  EXPECT_EQ(p.node("sym_size_int").meta().dtype(), "Sym");
  // Several outputs: the first one's meta is kept.
  const v1::TensorMeta& vm = p.node("var_mean").meta();
  EXPECT_EQ(vm.dtype(), "f32");
  EXPECT_THAT(vm.shape(), ElementsAre("s0", "1"));
  EXPECT_EQ(vm.device(), "cpu");
}

TEST(FxGraphTest, SourceCommentsAndNoStacktrace) {
  const Parsed p = Parse(R"(class <lambda>(torch.nn.Module):
    def forward(self, a: "f32[2][1]cpu"):
        early: "f32[2][1]cpu" = torch.ops.aten.relu.default(a)

         # File: /x/my dir/m.py:7 in <lambda>, code: y = f(x, code: 1)
        b: "f32[2][1]cpu" = torch.ops.aten.neg.default(early)
        c: "f32[2][1]cpu" = torch.ops.aten.neg.default(b)

        # No stacktrace found for following nodes
        d: "f32[2][1]cpu" = torch.ops.aten.addmm.default(a, b, c)

         # File: C:\src\in dir\m.py:9 in torch_dynamo_resume_in_step_at_11, code: z = y
        e: "f32[2][1]cpu" = torch.ops.aten.neg.default(d)
        return (e,)
 # graph id: 140438145417344)");
  EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
  EXPECT_FALSE(p.node("early").has_source());  // FX prints nothing before the first trace
  for (const char* n : {"b", "c"}) {
    EXPECT_EQ(p.node(n).source().file(), "/x/my dir/m.py");
    EXPECT_EQ(p.node(n).source().line(), 7u);
    EXPECT_EQ(p.node(n).source().fn(), "<lambda>");
    EXPECT_EQ(p.node(n).source().code(), "y = f(x, code: 1)");
    EXPECT_FALSE(p.node(n).source().no_stacktrace());
  }
  EXPECT_TRUE(p.node("d").source().no_stacktrace());
  EXPECT_EQ(p.node("d").source().file(), "");
  EXPECT_EQ(p.node("e").source().file(), "C:\\src\\in dir\\m.py");
  EXPECT_EQ(p.node("e").source().line(), 9u);
  EXPECT_EQ(p.node("e").source().fn(), "torch_dynamo_resume_in_step_at_11");
  EXPECT_FALSE(p.node("e").source().no_stacktrace());
}

TEST(FxGraphTest, MultiLineSignatureCallAndReturn) {
  const Parsed p = Parse(R"(class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "f16[1024, 1024][1024, 1]cuda:0",  # PlainAOTInput(idx=0)
        arg1_1: "f16[1024][1]cuda:0",  # PlainAOTInput(idx=1), with "quotes" and (brackets
    ):
        all_reduce: "f16[1024, 1024][1024, 1]cuda:0" = torch.ops._c10d_functional.all_reduce.default(
            arg0_1,  # the input
            'avg',
            group_name='0',
            tag = "a, b",
        );  arg0_1 = None
        return pytree.tree_unflatten([
            all_reduce,  # PlainAOTOutput(idx=0)
            None,  # None
        ], self._out_spec)
        )");
  EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
  EXPECT_THAT(Names(p.graph), ElementsAre("arg0_1", "arg1_1", "all_reduce", "output"));
  EXPECT_EQ(p.node("arg1_1").meta().device(), "cuda:0");
  const v1::Node& ar = p.node("all_reduce");
  EXPECT_EQ(ar.target(), "_c10d_functional.all_reduce.default");
  ASSERT_EQ(ar.args_size(), 2);
  EXPECT_EQ(ar.args(0).node(), "arg0_1");
  EXPECT_EQ(ar.args(1).literal(), "'avg'");
  ASSERT_EQ(ar.kwargs().size(), 2u);
  EXPECT_EQ(ar.kwargs().at("group_name").literal(), "'0'");
  EXPECT_EQ(ar.kwargs().at("tag").literal(), "\"a, b\"");
  const v1::Node& out = p.node("output");
  ASSERT_EQ(out.args_size(), 2);
  EXPECT_EQ(out.args(0).node(), "all_reduce");
  EXPECT_EQ(out.args(1).literal(), "None");
}

TEST(FxGraphTest, StringsWithQuotesCommasAndBrackets) {
  const Parsed p = Parse(R"fx(class M(torch.nn.Module):
    def forward(self, x):
        f = torch.ops.test.op.default(x, 'a, b', "c)d]", 'it\'s [x', "say \"(hi\"", key = 'k = v, w', other=')')
        return f)fx");
  EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
  const v1::Node& f = p.node("f");
  std::vector<std::string> args;
  for (const v1::Arg& a : f.args()) args.push_back(DumpArg(a));
  EXPECT_THAT(args, ElementsAre("%x", "'a, b'", "\"c)d]\"", "'it\\'s [x'", "\"say \\\"(hi\\\"\""));
  EXPECT_EQ(f.kwargs().at("key").literal(), "'k = v, w'");
  EXPECT_EQ(f.kwargs().at("other").literal(), "')'");
}

TEST(FxGraphTest, NestedListsAndTuples) {
  const Parsed p = Parse(R"(class M(torch.nn.Module):
    def forward(self, a, b):
        c = torch.ops.aten.cat.default([[a, 1], (b,), (), [], (a, (b, [2, -1])), {'k': a}, device(type='cuda', index=0), (a)])
        return [c, (a, b)])");
  EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
  const v1::Node& c = p.node("c");
  ASSERT_EQ(c.args_size(), 1);
  EXPECT_EQ(DumpArg(c.args(0)),
            "[[%a, 1], (%b,), (), [], (%a, (%b, [2, -1])), {'k': a}, device(type='cuda', index=0), %a]");
  EXPECT_TRUE(c.args(0).list().items(1).list().tuple());
  EXPECT_FALSE(c.args(0).list().items(0).list().tuple());
  // `return [c, (a, b)]`: the output's args are the returned values.
  EXPECT_EQ(DumpNode(p.node("output")), "output = output[output](%c, (%a, %b))");
}

TEST(FxGraphTest, DynamoStatementShapes) {
  const Parsed p = Parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[16, 64][64, 1]cpu", L_resid_: "f32[16, 256][256, 1]cpu", *args, flag = True):
        l_x_ = L_x_
        l_resid_ = L_resid_
        _tensor_constant0 = self._tensor_constant0
        w = getattr(self.layers, "0").weight
        fc: "f32[16, 256][256, 1]cpu" = self.L__self___fc(l_x_)
        seq = getattr(self.layers, "1")(fc)
        h_1: "f32[16, 256][256, 1]cpu" = fc + l_resid_;  fc = None
        p = h_1 ** 2
        fd = p // 3
        ge = p >= -1.5
        neg = -h_1
        inv = ~ge
        pow_1: "f32[16, 256][256, 1]cpu" = h_1.pow(2)
        mean = pow_1.mean(-1, keepdim = True);  pow_1 = None
        rms = torch.rsqrt(mean)
        lin = torch._C._nn.linear(rms, w, None)
        getitem = args[0]
        item = lin[(slice(None, None, None), 0)]
        shape = lin.shape
        wrapped = torch__dynamo_utils_wrapped_sum(lin, unknown_global)
        _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
        mm = l_x_ @ w
        return (mm, getitem))");
  EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
  EXPECT_EQ(DumpNode(p.node("l_x_")),
            "l_x_ = placeholder[L_x_]()  meta{dtype=f32 shape=[16, 64] stride=[64, 1] device=cpu}");
  EXPECT_EQ(p.node("args").target(), "*args");
  EXPECT_EQ(p.node("flag").target(), "flag");
  const std::vector<std::string> want = {
      "_tensor_constant0 = get_attr[_tensor_constant0]()",
      "w = get_attr[layers.0.weight]()",
      "fc = call_module[L__self___fc](%l_x_)",
      "seq = call_module[layers.1](%fc)",
      "h_1 = call_function[operator.add](%fc, %l_resid_)",
      "p = call_function[operator.pow](%h_1, 2)",
      "fd = call_function[operator.floordiv](%p, 3)",
      "ge = call_function[operator.ge](%p, -1.5)",
      "neg = call_function[operator.neg](%h_1)",
      "inv = call_function[operator.invert](%ge)",
      "pow_1 = call_method[pow](%h_1, 2)",
      "mean = call_method[mean](%pow_1, -1, keepdim=True)",
      "rms = call_function[torch.rsqrt](%mean)",
      "lin = call_function[torch._C._nn.linear](%rms, %w, None)",
      "getitem = call_function[operator.getitem](%args, 0)",
      "item = call_function[operator.getitem](%lin, (slice(None, None, None), 0))",
      "shape = call_function[getattr](%lin, 'shape')",
      "wrapped = call_function[torch__dynamo_utils_wrapped_sum](%lin, unknown_global)",
      "_set_grad_enabled = call_function[torch._C._set_grad_enabled](False)",
      "mm = call_function[operator.matmul](%l_x_, %w)",
      "output = output[output](%mm, %getitem)",
  };
  for (const std::string& line : want) {
    const std::string name(line.substr(0, line.find(' ')));
    std::string got = DumpNode(p.node(name));
    got = got.substr(0, got.find("  "));  // without meta and source
    EXPECT_EQ(got, line);
  }
  ExpectConsistent(p.graph);
}

TEST(FxGraphTest, InplaceOperatorsAndSetitem) {
  const Parsed p = Parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x, y):
        x += y;  iadd = x
        iadd[0] = y;  setitem = iadd;  y = None
        return (setitem,))");
  EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
  EXPECT_EQ(DumpNode(p.node("iadd")), "iadd = call_function[operator.iadd](%x, %y)");
  EXPECT_EQ(DumpNode(p.node("setitem")), "setitem = call_function[operator.setitem](%iadd, 0, %y)");
}

TEST(FxGraphTest, PytreeForms) {
  // torch 2.6 prints the flattened inputs' annotations on one line, newer torch one per line.
  for (const char* annotations :
       {R"(        primals_1: "f32[256, 64][64, 1]cpu"; tangents_1: "f32[32, 10][10, 1]cpu"; )",
        "        primals_1: \"f32[256, 64][64, 1]cpu\"  # PlainAOTInput(idx=0)\n"
        "        tangents_1: \"f32[32, 10][10, 1]cpu\"  # TangentAOTInput(output=PlainAOTOutput(idx=0))"}) {
    const Parsed p = Parse(absl::StrCat(R"(class joint_helper(torch.nn.Module):
    def forward(self, primals, tangents):
)",
                                        annotations, R"(
    
        primals_1, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        mm = torch.ops.aten.mm.default(tangents_1, primals_1)
        return pytree.tree_unflatten([mm, None], self._out_spec)
        )"));
    EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
    EXPECT_THAT(Names(p.graph), ElementsAre("primals_1", "tangents_1", "mm", "output"));
    EXPECT_EQ(p.node("primals_1").op(), "placeholder");
    EXPECT_THAT(p.node("tangents_1").meta().shape(), ElementsAre("32", "10"));
    EXPECT_EQ(DumpNode(p.node("output")), "output = output[output](%mm, None)");
  }
}

TEST(FxGraphTest, OutputForms) {
  const auto output = [](absl::string_view ret) {
    const Parsed p =
        Parse(absl::StrCat("class M(torch.nn.Module):\n    def forward(self, a, b):\n        ", ret, "\n"));
    EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
    return DumpNode(p.node("output"));
  };
  EXPECT_EQ(output("return a"), "output = output[output](%a)");
  EXPECT_EQ(output("return (a,)"), "output = output[output](%a)");
  EXPECT_EQ(output("return [a, b]"), "output = output[output](%a, %b)");
  EXPECT_EQ(output("return ((a, b), [b])"), "output = output[output]((%a, %b), [%b])");
  EXPECT_EQ(output("return ()"), "output = output[output]()");
  EXPECT_EQ(output("return None"), "output = output[output](None)");
  EXPECT_EQ(output("return a + b"), "output = output[output](a + b)");  // not FX's; kept as text
}

TEST(FxGraphTest, UnknownNamesAreLiterals) {
  const Parsed p = Parse(R"(class M(torch.nn.Module):
    def forward(self, a):
        b = torch.ops.aten.add.Tensor(a, later, torch.float32)
        later = torch.ops.aten.neg.default(b)
        return later)");
  EXPECT_EQ(DumpNode(p.node("b")), "b = call_function[aten.add.Tensor](%a, later, torch.float32)");
  ExpectConsistent(p.graph);
}

TEST(FxGraphTest, NestedClassesAreCountedNotParsed) {
  const Parsed p = Parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4][1]cpu"):
        score_mod_0 = self.score_mod_0
        flex = torch.ops.higher_order.flex_attention(x, score_mod_0, {'ROWS_GUARANTEED_SAFE': False}, (), ())
        getitem = flex[0]
        return (getitem,)
        
    class score_mod_0(torch.nn.Module):
        def forward(self, child: "f32[][]cpu"):
            add = child + 1
            return add
            
        class inner(torch.nn.Module):
            def forward(self, y):
                return y
            
    class mask_fn_0(torch.nn.Module):
        def forward(self, child_5: "i32[][]cpu"):
            ge = child_5 >= 0
            return ge
 # graph id: 1)");
  EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
  EXPECT_EQ(p.result.nested_classes, 3u);
  EXPECT_THAT(Names(p.graph), ElementsAre("x", "score_mod_0", "flex", "getitem", "output"));
  EXPECT_EQ(DumpArg(p.node("flex").args(2)), "{'ROWS_GUARANTEED_SAFE': False}");
  EXPECT_EQ(DumpArg(p.node("flex").args(3)), "()");
}

TEST(FxGraphTest, BareForwardWithoutClass) {
  const Parsed p = Parse("def forward(self, x):\n    a = torch.sin(x)\n    return a\n");
  EXPECT_EQ(p.result.skipped_lines, 0u) << Dump(p.graph, p.result);
  EXPECT_THAT(Names(p.graph), ElementsAre("x", "a", "output"));
}

TEST(FxGraphTest, AppendsAfterExistingNodes) {
  v1::Graph g;
  g.add_nodes()->set_name("output");
  g.mutable_nodes(0)->set_op("placeholder");
  const FxParseResult r =
      ParseFxGraphText("def forward(self, x):\n    y = x.relu()\n    return output\n", &g);
  EXPECT_EQ(r.skipped_lines, 0u);
  EXPECT_EQ(r.nodes, 3u);
  EXPECT_THAT(Names(g), ElementsAre("output", "x", "y", "output_1"));
  EXPECT_EQ(g.nodes(3).args(0).node(), "output");
}

// ---- Size, time and hostile input -----------------------------------------------------------

std::string ChainGraph(int nodes, int args_per_node) {
  std::string text = "class <lambda>(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[16][1]cpu\"):\n";
  std::string prev = "arg0_1";
  for (int i = 0; i < nodes; ++i) {
    const std::string name = absl::StrCat("add_", i);
    if (i % 100 == 0)
      absl::StrAppend(&text, "        \n         # File: /m.py:", i, " in forward, code: x = x + 1\n");
    absl::StrAppend(&text, "        ", name, ": \"f32[16][1]cpu\" = torch.ops.aten.add.Tensor(", prev, ", 1");
    for (int a = 1; a < args_per_node; ++a) absl::StrAppend(&text, ", ", prev);
    absl::StrAppend(&text, ");  ", prev, " = None\n");
    prev = name;
  }
  absl::StrAppend(&text, "        return (", prev, ",)\n");
  return text;
}

TEST(FxGraphTest, FiveThousandNodes) {
  const Parsed p = Parse(ChainGraph(5000, 1));
  EXPECT_EQ(p.result.skipped_lines, 0u);
  EXPECT_EQ(p.result.nodes, 5002u);
  EXPECT_EQ(p.node("add_4999").args(0).node(), "add_4998");
  EXPECT_EQ(p.node("add_4999").source().line(), 4900u);
  ExpectConsistent(p.graph);
}

TEST(FxGraphTest, VeryLongLines) {
  // One node with 20000 arguments, and one list argument of 20000 items.
  std::string text = "def forward(self, x):\n    cat = torch.ops.aten.cat.default([x";
  for (int i = 0; i < 20000; ++i) absl::StrAppend(&text, ", x");
  absl::StrAppend(&text, "])\n    f = torch.ops.f.default(cat");
  for (int i = 0; i < 20000; ++i) absl::StrAppend(&text, ", ", i);
  absl::StrAppend(&text, ")\n    return f\n");
  const Parsed p = Parse(text);
  EXPECT_EQ(p.result.skipped_lines, 0u);
  EXPECT_EQ(p.node("cat").args(0).list().items_size(), 20001);
  EXPECT_EQ(p.node("f").args_size(), 20001);
}

// The parse time grows linearly: ten times the nodes (or the arguments per node) must not cost
// anywhere near a hundred times the time. Timed as the best of three to stay clear of noise.
TEST(FxGraphTest, TimeIsLinear) {
  const auto best_seconds = [](const std::string& text) {
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const Parsed p = Parse(text);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      EXPECT_EQ(p.result.skipped_lines, 0u);
    }
    return best;
  };
  const double small = best_seconds(ChainGraph(2000, 4));
  const double nodes = best_seconds(ChainGraph(20000, 4));
  const double args = best_seconds(ChainGraph(200, 400));
  std::cout << "[ fx timing ] 2000 nodes " << small << " s, 20000 nodes " << nodes
            << " s, 200 nodes of 400 args " << args << " s\n";
  EXPECT_LT(nodes, 40 * small + 0.05) << small << " s for 2000 nodes, " << nodes << " s for 20000";
  EXPECT_LT(args, 40 * small + 0.05) << small << " s for 2000 nodes, " << args << " s for 200 long ones";
}

TEST(FxGraphTest, DeepNestingIsBoundedNotRecursive) {
  const std::string deep = std::string(1'000'000, '[') + "x" + std::string(1'000'000, ']');
  const Parsed p =
      Parse(absl::StrCat("def forward(self, x: \"f32", deep, "cpu\"):\n    y = torch.ops.f.default(", deep,
                         ", ", std::string(1'000'000, '('), ")\n    return y\n"));
  EXPECT_THAT(Names(p.graph), ElementsAre("x", "output"));
  EXPECT_GE(p.result.skipped_lines, 1u);
  // Within the bound, lists nest; past it the rest is one literal.
  const Parsed q =
      Parse(absl::StrCat("def forward(self, x):\n    y = torch.ops.f.default(", std::string(100, '['), "x",
                         std::string(100, ']'), ")\n    return y\n"));
  EXPECT_EQ(q.result.skipped_lines, 0u);
  const v1::Arg* a = &q.node("y").args(0);
  int depth = 0;
  while (a->has_list()) {
    a = &a->list().items(0);
    ++depth;
  }
  EXPECT_EQ(depth, 32);
  EXPECT_EQ(a->literal(), std::string(68, '[') + "x" + std::string(68, ']'));
}

TEST(FxGraphTest, LongSourceCommentsAreCapped) {
  // Every node after a comment carries its source: a huge comment must not be copied whole.
  const std::string code = std::string(5000, 'x') + "\xc3\xa9";
  const Parsed p = Parse(absl::StrCat("def forward(self, a):\n     # File: /m.py:3 in f, code: ", code,
                                      "\n    b = a.neg()\n    c = b.neg()\n    return c\n"));
  EXPECT_EQ(p.result.skipped_lines, 0u);
  EXPECT_EQ(p.node("c").source().code(), std::string(1024, 'x') + "...");
  EXPECT_EQ(p.node("c").source().line(), 3u);
  const Parsed q =
      Parse(absl::StrCat("def forward(self, a):\n     # File: /m.py:3 in f, code: ", std::string(1023, 'x'),
                         "\xc3\xa9\n    b = a.neg()\n    return b\n"));
  EXPECT_EQ(q.node("b").source().code(), std::string(1023, 'x') + "...");  // not half of the é
  ExpectConsistent(q.graph);
}

TEST(FxGraphTest, ProblemsAreCountedAndCapped) {
  std::string text = "class M(torch.nn.Module):\n    def forward(self, x):\n";
  for (int i = 0; i < 50; ++i) absl::StrAppend(&text, "        this is not fx ", i, "\n");
  absl::StrAppend(&text, "        y = torch.ops.aten.relu.default(x)\n        return y\n");
  const Parsed p = Parse(text);
  EXPECT_EQ(p.result.skipped_lines, 50u);
  EXPECT_THAT(p.result.problems, SizeIs(kMaxFxProblems));
  EXPECT_THAT(p.result.problems[0], HasSubstr("line 3: "));
  EXPECT_THAT(Names(p.graph), ElementsAre("x", "y", "output"));
}

TEST(FxGraphTest, HostileInputs) {
  const std::vector<std::string> inputs = {
      "",
      "\n\n   \n",
      "garbage",
      "class X(torch.nn.Module):\n",
      "class X(torch.nn.Module):\n    def forward(self, x",
      "class X(torch.nn.Module):\n    def forward(self, x):\n        y = torch.ops.f.default(x, "
      "'unterminated)\n"
      "        z = torch.ops.g.default(x)\n        return z\n",
      "def forward(self, x):\n    y = torch.ops.f.default(x, [1, 2)\n    z = torch.ops.g.default(x]\n    "
      "return (z\n",
      "def forward(self, x):\n    y: \"f32[3 = torch.ops.f(x)\n    y2: \"f32[3][1]\" = ((((\n    return y\n",
      "def forward(self, x):\n    y = x\n    y = torch.ops.f(x)\n    y = torch.ops.g(x)\n    x = x + 1\n    "
      "return y\n",
      "def forward(self, x, x):\n    return\n",
      "def forward(self, \xff\xfe: \"f32[2]\"):\n    y = torch.ops.f('\xc3\x28')\n    return y\n",
      absl::StrCat("def forward(self, x):\n    y = torch.ops.f(x, '", std::string(1, '\0'),
                   "')\n    return y\n"),
      "def forward(self, x):\n    y = \n    = x\n    y = self.\n    z = getattr(self, \n    return\n",
      "def forward(self, x):\n    y = x.neg()\n    z = x\n    return z\n",  // a late rename would dangle
      "def forward(self, x):\n    return (x,)\n    after = x\nclass Y(torch.nn.Module):\n    q = 1\nnot "
      "indented\n",
  };
  for (const std::string& in : inputs) {
    const Parsed p = Parse(in);
    ExpectConsistent(p.graph);
    EXPECT_EQ(p.result.nodes, static_cast<size_t>(p.graph.nodes_size()));
    EXPECT_LE(p.result.problems.size(), kMaxFxProblems);
    EXPECT_GE(p.result.skipped_lines, p.result.problems.size());
    for (const std::string& problem : p.result.problems) EXPECT_TRUE(IsValidUtf8(problem)) << problem;
  }
  EXPECT_EQ(Parse("").result.skipped_lines, 1u);  // no forward at all
  // A cut-off statement does not swallow the statements after it.
  const Parsed cut = Parse(inputs[5]);
  EXPECT_THAT(Names(cut.graph), ElementsAre("x", "z", "output"));
  EXPECT_EQ(cut.result.skipped_lines, 1u);
  // A name defined twice keeps its first definition (here `y = x` renamed the placeholder).
  const Parsed twice = Parse(inputs[8]);
  EXPECT_THAT(Names(twice.graph), ElementsAre("y", "x", "output"));
  EXPECT_EQ(twice.node("y").op(), "placeholder");
  EXPECT_EQ(twice.node("y").target(), "x");
  EXPECT_EQ(twice.result.skipped_lines, 2u);
}

TEST(FxGraphTest, EveryPrefixOfARealGraph) {
  ASSERT_OK_AND_ASSIGN(const std::string text, ReadFile(kGoldenDir + "/corpus_joint_pytree_multiline.txt"));
  // A cut inside `return pytree.tree_unflatten(` can still read as a whole `return <value>`.
  const size_t last_statement = text.rfind("        return ");
  for (size_t n = 0; n <= text.size(); n += 7) {
    const Parsed p = Parse(text.substr(0, n));
    ExpectConsistent(p.graph);
    if (n <= last_statement) {
      EXPECT_GE(p.result.skipped_lines, 1u) << n;  // it never returned
    }
  }
}

TEST(FxGraphTest, BinaryGarbage) {
  std::mt19937 rng(1234);
  ASSERT_OK_AND_ASSIGN(const std::string real, ReadFile(kGoldenDir + "/hero_dynamo_output.txt"));
  for (int round = 0; round < 200; ++round) {
    std::string text = real;
    // Overwrite some bytes with random ones (brackets, quotes, newlines, and anything else).
    const int edits = 1 + static_cast<int>(rng() % 40);
    for (int e = 0; e < edits; ++e) {
      const char kNasty[] = "([{}])'\"\\#:;=, \n\t\xff\x80";
      text[rng() % text.size()] =
          (rng() % 2 == 0) ? kNasty[rng() % (sizeof(kNasty) - 1)] : static_cast<char>(rng());
    }
    const Parsed p = Parse(text);
    ExpectConsistent(p.graph);
  }
  std::string noise(1 << 16, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  const Parsed p = Parse(noise);
  ExpectConsistent(p.graph);
  EXPECT_GE(p.result.skipped_lines, 1u);
}

// ---- Every graph in the shared TORCH_TRACE fixtures ----------------------------------------

// FX graph payloads: the events and artifacts that carry `print_readable` text.
constexpr absl::string_view kGraphEvents[] = {"dynamo_output_graph",      "aot_forward_graph",
                                              "aot_backward_graph",       "aot_joint_graph",
                                              "aot_inference_graph",      "inductor_pre_grad_graph",
                                              "inductor_post_grad_graph", "compiled_autograd_graph",
                                              "optimize_ddp_split_graph", "optimize_ddp_split_child"};
constexpr absl::string_view kGraphArtifacts[] = {"before_pre_grad_graph", "after_pre_grad_graph",
                                                 "before_post_grad_graph", "after_post_grad_graph",
                                                 "dynamo_output_graph"};

struct Payload {
  size_t line = 0;
  std::string event;
  std::string text;
};

// A deliberately plain reader of the log format (tlparse.md §1.2): a header line, then the payload
// lines, each starting with a tab; empty lines are skipped.
std::vector<Payload> GraphPayloads(absl::string_view log) {
  std::vector<absl::string_view> lines = absl::StrSplit(log, '\n');
  std::vector<Payload> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const absl::string_view header = lines[i];
    if (header.empty() || header[0] == '\t' || !absl::StrContains(header, "\"has_payload\"")) continue;
    std::string event;
    for (absl::string_view e : kGraphEvents) {
      if (absl::StrContains(header, absl::StrCat("{\"", e, "\": "))) event = std::string(e);
    }
    for (absl::string_view a : kGraphArtifacts) {
      if (absl::StrContains(header, absl::StrCat("{\"artifact\": {\"name\": \"", a, "\"")))
        event = absl::StrCat("artifact:", a);
    }
    if (event.empty()) continue;
    std::vector<absl::string_view> body;
    size_t j = i + 1;
    for (; j < lines.size() && (lines[j].empty() || lines[j][0] == '\t'); ++j) {
      if (!lines[j].empty()) body.push_back(lines[j].substr(1));
    }
    out.push_back({i + 1, event, absl::StrJoin(body, "\n")});
    i = j - 1;
  }
  return out;
}

// The nodes a graph should have, counted without the parser: the lines that define a node in the
// top-level forward (`name = ...` or `name: "ann" = ...`, but not dynamo's `l_x_ = L_x_`, which
// renames a placeholder), its inputs (the signature's parameters, or the names a pytree forward
// flattens them into) and the output.
re2::StringPiece Piece(absl::string_view s) { return re2::StringPiece(s.data(), s.size()); }

size_t CountNodesIndependently(absl::string_view payload) {
  static const RE2 kDef(R"(^(\s*)def \w+\()");
  static const RE2 kNested(R"(^\s*class )");
  static const RE2 kNode(R"(^\s+\w+(: "[^"]*")? = )");
  static const RE2 kRename(R"(^\s+\w+ = \w+$)");
  static const RE2 kFlatten(R"(^\s+((?:\w+, )+)= fx_pytree\.tree_flatten_spec)");
  static const RE2 kReturn(R"(^\s+return\b)");
  static const RE2 kSignatureEnd(R"(\)(\s*->.*)?:$)");
  static const RE2 kQuoted(R"("[^"]*")");
  std::vector<absl::string_view> lines = absl::StrSplit(payload, '\n');
  for (absl::string_view& l : lines) l = absl::StripTrailingAsciiWhitespace(l);  // some logs have CRLF
  size_t i = 0;
  while (i < lines.size() && !RE2::PartialMatch(Piece(lines[i]), kDef)) ++i;
  if (i == lines.size()) return 0;
  std::string signature;
  for (; i < lines.size(); ++i) {
    std::string l(lines[i]);
    RE2::GlobalReplace(&l, kQuoted, "\"\"");
    l = l.substr(0, l.find('#'));
    absl::StrAppend(&signature, absl::StripAsciiWhitespace(l));
    if (RE2::PartialMatch(Piece(absl::StripAsciiWhitespace(l)), kSignatureEnd)) break;
  }
  size_t params = 0;
  const size_t open = signature.find('('), close = signature.rfind(')');
  for (absl::string_view p : absl::StrSplit(signature.substr(open + 1, close - open - 1), ',')) {
    p = absl::StripAsciiWhitespace(p);
    if (!p.empty() && p != "self") ++params;
  }
  size_t nodes = 0, output = 0;
  for (++i; i < lines.size() && !RE2::PartialMatch(Piece(lines[i]), kNested); ++i) {
    std::string flat;
    if (RE2::PartialMatch(Piece(lines[i]), kFlatten, &flat))
      params = std::count(flat.begin(), flat.end(), ',');
    if (RE2::PartialMatch(Piece(lines[i]), kNode) && !RE2::FullMatch(Piece(lines[i]), kRename)) ++nodes;
    if (RE2::PartialMatch(Piece(lines[i]), kReturn)) output = 1;
  }
  return params + nodes + output;
}

// Payloads that are not real torch output, with why.
struct Exception {
  absl::string_view file_suffix;
  absl::string_view why;
};
constexpr Exception kNotTorchOutput[] = {
    {"tlparse_newer/subgraph_name.log",
     "a hand-written tlparse test: the payload is \"test payload no subgraph\""},
};

TEST(FxGraphCorpusTest, EveryFixtureGraph) {
  size_t total_graphs = 0;
  for (const std::string& root : {std::string(CL_SHARED_DIR) + "/fixtures/torch_trace",
                                  std::string(CL_SOURCE_DIR) + "/examples/hero/traces"}) {
    ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
    std::vector<std::filesystem::path> paths;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.is_regular_file() && entry.file_size() > 0) paths.push_back(entry.path());
    }
    std::sort(paths.begin(), paths.end());
    size_t files = 0, graphs = 0, nodes = 0, nested = 0;
    for (const std::filesystem::path& path : paths) {
      ASSERT_OK_AND_ASSIGN(const std::string log, ReadFile(path.string()));
      const std::vector<Payload> payloads = GraphPayloads(log);
      if (!payloads.empty()) ++files;
      const Exception* exception = nullptr;
      for (const Exception& e : kNotTorchOutput) {
        if (absl::EndsWith(path.string(), e.file_suffix)) exception = &e;
      }
      for (const Payload& payload : payloads) {
        SCOPED_TRACE(absl::StrCat(path.string(), ":", payload.line, " ", payload.event));
        const Parsed p = Parse(payload.text);
        ++graphs;
        nodes += p.result.nodes;
        nested += p.result.nested_classes;
        EXPECT_EQ(p.result.nodes, static_cast<size_t>(p.graph.nodes_size()));
        ExpectConsistent(p.graph);
        if (exception != nullptr) {
          std::cout << "[ fx corpus ] expected problems in " << path.filename() << " (" << exception->why
                    << "): " << absl::StrJoin(p.result.problems, "; ") << "\n";
          continue;
        }
        EXPECT_EQ(p.result.skipped_lines, 0u) << absl::StrJoin(p.result.problems, "\n");
        EXPECT_EQ(p.result.nodes, CountNodesIndependently(payload.text)) << Dump(p.graph, p.result);
      }
    }
    std::cout << "[ fx corpus ] " << root << ": " << paths.size() << " files, " << files << " with graphs, "
              << graphs << " graphs, " << nodes << " nodes, " << nested << " nested classes skipped\n";
    total_graphs += graphs;
  }
  EXPECT_GT(total_graphs, 500u);
}

}  // namespace
}  // namespace cl

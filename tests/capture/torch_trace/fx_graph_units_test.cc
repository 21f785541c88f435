// The FX text parser, one statement shape or source form at a time.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/capture/torch_trace/fx_graph_testing.h"

namespace cl::fx_testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

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

// What an analysis keeps of a lowered graph's nodes (FxDetail::kAnalysis): the same nodes, names,
// ops, targets, arguments, dtypes, shapes, files and lines as a full parse, and no stride, device,
// SymInt expression, function or code, which no pass reads.
TEST(FxGraphTest, AnalysisDetailKeepsWhatThePassesRead) {
  constexpr char kText[] = R"fx(class <lambda>(torch.nn.Module):
    def forward(self, s0: "Sym(s0)", arg0_1: "f32[s0, 64][64, 1]cpu", arg1_1: "f32[16, 64][64, 1]cpu"):
         # File: /mnt/project/examples/hero_scene.py:69 in forward, code: h = self.up(x)
        permute: "f32[64, s0][1, 64]cpu" = torch.ops.aten.permute.default(arg0_1, [1, 0]);  arg0_1 = None
        mm: "f32[16, s0][s0, 1]cpu" = torch.ops.aten.mm.default(arg1_1, permute);  arg1_1 = permute = None
        var_mean: "(f32[16, 1][1, 1]cpu, f32[16, 1][1, 1]cpu)" = torch.ops.aten.var_mean.correction(mm, [1])
        return (mm, var_mean))fx";
  const Parsed full = Parse(kText);
  const Parsed lean = Parse(kText, FxDetail::kAnalysis);
  EXPECT_EQ(lean.result.skipped_lines, 0u) << Dump(lean.graph, lean.result);
  EXPECT_EQ(lean.result.nodes, full.result.nodes);
  ASSERT_EQ(Names(lean.graph), Names(full.graph));
  for (int i = 0; i < full.graph.nodes_size(); ++i) {
    const v1::Node& f = full.graph.nodes(i);
    const v1::Node& l = lean.graph.nodes(i);
    SCOPED_TRACE(f.name());
    EXPECT_EQ(l.op(), f.op());
    EXPECT_EQ(l.target(), f.target());
    ASSERT_EQ(l.args_size(), f.args_size());
    for (int a = 0; a < f.args_size(); ++a) EXPECT_EQ(DumpArg(l.args(a)), DumpArg(f.args(a)));
    EXPECT_EQ(l.meta().dtype(), f.meta().dtype());
    EXPECT_THAT(l.meta().shape(), ::testing::ElementsAreArray(f.meta().shape()));
    EXPECT_THAT(l.meta().stride(), IsEmpty());
    EXPECT_EQ(l.meta().device(), "");
    EXPECT_EQ(l.meta().sym_expr(), "");
    EXPECT_EQ(l.source().file(), f.source().file());
    EXPECT_EQ(l.source().line(), f.source().line());
    EXPECT_EQ(l.source().fn(), "");
    EXPECT_EQ(l.source().code(), "");
  }
  // The full parse had them all, so the comparison above left something out.
  EXPECT_EQ(full.node("s0").meta().sym_expr(), "s0");
  EXPECT_THAT(full.node("mm").meta().stride(), ElementsAre("s0", "1"));
  EXPECT_EQ(full.node("mm").source().code(), "h = self.up(x)");
  EXPECT_EQ(full.node("var_mean").meta().device(), "cpu");
  ExpectConsistent(lean.graph);
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
  EXPECT_EQ(
      DumpArg(c.args(0)),
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
        "        tangents_1: \"f32[32, 10][10, 1]cpu\"  # "
        "TangentAOTInput(output=PlainAOTOutput(idx=0))"}) {
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
    const Parsed p = Parse(absl::StrCat(
        "class M(torch.nn.Module):\n    def forward(self, a, b):\n        ", ret, "\n"));
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

}  // namespace
}  // namespace cl::fx_testing

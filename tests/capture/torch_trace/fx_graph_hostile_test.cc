// The FX text parser on large, slow-to-parse, deeply nested, cut-off and hostile input: it never
// fails, stays linear in time, bounds its recursion and its copies, and keeps the graph consistent.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/capture/torch_trace/fx_graph_testing.h"
#include "tests/testing/status_matchers.h"

namespace cl::fx_testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

std::string ChainGraph(int nodes, int args_per_node) {
  std::string text =
      "class <lambda>(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[16][1]cpu\"):\n";
  std::string prev = "arg0_1";
  for (int i = 0; i < nodes; ++i) {
    const std::string name = absl::StrCat("add_", i);
    if (i % 100 == 0)
      absl::StrAppend(&text, "        \n         # File: /m.py:", i,
                      " in forward, code: x = x + 1\n");
    absl::StrAppend(&text, "        ", name, ": \"f32[16][1]cpu\" = torch.ops.aten.add.Tensor(",
                    prev, ", 1");
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
      best = std::min(
          best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
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
  EXPECT_LT(args, 40 * small + 0.05)
      << small << " s for 2000 nodes, " << args << " s for 200 long ones";
}

TEST(FxGraphTest, DeepNestingIsBoundedNotRecursive) {
  const std::string deep = std::string(1'000'000, '[') + "x" + std::string(1'000'000, ']');
  const Parsed p = Parse(absl::StrCat("def forward(self, x: \"f32", deep,
                                      "cpu\"):\n    y = torch.ops.f.default(", deep, ", ",
                                      std::string(1'000'000, '('), ")\n    return y\n"));
  EXPECT_THAT(Names(p.graph), ElementsAre("x", "output"));
  EXPECT_GE(p.result.skipped_lines, 1u);
  // Within the bound, lists nest; past it the rest is one literal.
  const Parsed q =
      Parse(absl::StrCat("def forward(self, x):\n    y = torch.ops.f.default(",
                         std::string(100, '['), "x", std::string(100, ']'), ")\n    return y\n"));
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
  const Parsed p =
      Parse(absl::StrCat("def forward(self, a):\n     # File: /m.py:3 in f, code: ", code,
                         "\n    b = a.neg()\n    c = b.neg()\n    return c\n"));
  EXPECT_EQ(p.result.skipped_lines, 0u);
  EXPECT_EQ(p.node("c").source().code(), std::string(1024, 'x') + "\u2026");
  EXPECT_EQ(p.node("c").source().line(), 3u);
  const Parsed q = Parse(absl::StrCat(
      "def forward(self, a):\n     # File: /m.py:3 in f, code: ", std::string(1023, 'x'),
      "\xc3\xa9\n    b = a.neg()\n    return b\n"));
  EXPECT_EQ(q.node("b").source().code(), std::string(1023, 'x') + "\u2026");  // not half of the é
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

TEST(FxGraphTest, ProblemExcerptsAreEscapedAndClipped) {
  // 79 bytes, then an é across the 80-byte excerpt's end: it is left out whole.
  const std::string junk = absl::StrCat("this is not fx \"", std::string(63, 'x'), "\xc3\xa9",
                                        std::string(50, 'y'), "\"");
  const Parsed p = Parse(absl::StrCat("def forward(self, x):\n    ", junk, "\n    return x\n"));
  ASSERT_THAT(p.result.problems, SizeIs(1));
  EXPECT_EQ(p.result.problems[0],
            absl::StrCat("line 2: not an FX node statement: this is not fx \\\"",
                         std::string(63, 'x'), "\u2026"));
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
      "def forward(self, x):\n    y = torch.ops.f.default(x, [1, 2)\n    z = "
      "torch.ops.g.default(x]\n    "
      "return (z\n",
      "def forward(self, x):\n    y: \"f32[3 = torch.ops.f(x)\n    y2: \"f32[3][1]\" = ((((\n    "
      "return y\n",
      "def forward(self, x):\n    y = x\n    y = torch.ops.f(x)\n    y = torch.ops.g(x)\n    x = x "
      "+ 1\n    "
      "return y\n",
      "def forward(self, x, x):\n    return\n",
      "def forward(self, \xff\xfe: \"f32[2]\"):\n    y = torch.ops.f('\xc3\x28')\n    return y\n",
      absl::StrCat("def forward(self, x):\n    y = torch.ops.f(x, '", std::string(1, '\0'),
                   "')\n    return y\n"),
      "def forward(self, x):\n    y = \n    = x\n    y = self.\n    z = getattr(self, \n    "
      "return\n",
      "def forward(self, x):\n    y = x.neg()\n    z = x\n    return z\n",  // a late rename would
                                                                            // dangle
      "def forward(self, x):\n    return (x,)\n    after = x\nclass Y(torch.nn.Module):\n    q = "
      "1\nnot "
      "indented\n",
  };
  for (const std::string& in : inputs) {
    const Parsed p = Parse(in);
    ExpectConsistent(p.graph);
    EXPECT_EQ(p.result.nodes, static_cast<size_t>(p.graph.nodes_size()));
    EXPECT_LE(p.result.problems.size(), kMaxFxProblems);
    EXPECT_GE(p.result.skipped_lines, p.result.problems.size());
    for (const std::string& problem : p.result.problems)
      EXPECT_TRUE(IsValidUtf8(problem)) << problem;
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
  ASSERT_OK_AND_ASSIGN(const std::string text,
                       ReadFile(kGoldenDir + "/corpus_joint_pytree_multiline.txt"));
  // A cut inside `return pytree.tree_unflatten(` can still read as a whole `return <value>`.
  const size_t last_statement = text.rfind("        return ");
  for (size_t n = 0; n <= text.size(); n += 7) {
    const Parsed p = Parse(text.substr(0, n));
    ExpectConsistent(p.graph);
    if (n <= last_statement) {
      EXPECT_GE(p.result.skipped_lines, 1u) << n;  // it never returned
      // Nor is it the outline the scan takes in the parse's place: the caller parses it.
      absl::flat_hash_set<std::string> files;
      EXPECT_FALSE(ScanFxSourceFiles(text.substr(0, n), &files)) << n;
      EXPECT_TRUE(files.empty()) << n;
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
    absl::flat_hash_set<std::string> files;
    (void)ScanFxSourceFiles(text, &files);
  }
  std::string noise(1 << 16, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  const Parsed p = Parse(noise);
  ExpectConsistent(p.graph);
  EXPECT_GE(p.result.skipped_lines, 1u);
}

// The scan that stands in for the parse where a graph's nodes are not kept: the files of the
// forward's source comments, and false for a text that is not the outline of a GraphModule.
TEST(FxGraphTest, ScanFindsTheForwardsSourceFiles) {
  const std::string graph = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4][1]cpu"):
        # File: /m/model.py:12 in forward, code: y = x.relu()
        relu: "f32[4][1]cpu" = torch.ops.aten.relu.default(x)
        # No stacktrace found for following nodes
        neg: "f32[4][1]cpu" = torch.ops.aten.neg.default(relu)
        # File: /m/layers.py:3 in f, code: return y * 2
        mul: "f32[4][1]cpu" = torch.ops.aten.mul.Tensor(
            neg, 2
        )
        return (mul,)

    class submod_0(torch.nn.Module):
        def forward(self, a):
            # File: /m/nested.py:1 in g, code: a
            return (a,)
)";
  absl::flat_hash_set<std::string> files;
  ASSERT_TRUE(ScanFxSourceFiles(graph, &files));
  EXPECT_THAT(files, ::testing::UnorderedElementsAre("/m/model.py", "/m/layers.py"));
  const Parsed parsed = Parse(graph);
  absl::flat_hash_set<std::string> named;
  for (const v1::Node& n : parsed.graph.nodes()) {
    if (!n.source().file().empty()) named.insert(n.source().file());
  }
  EXPECT_EQ(files, named);

  for (const std::string& broken : {
           std::string("test payload no subgraph"),        // not FX at all
           std::string("import torch\n") + graph,          // a stray preamble
           std::string("class A:\n") + graph,              // a second class
           std::string("torch.fx.wrap('f')\n") + graph,    // wrap() outside the class
           graph.substr(0, graph.find("        return")),  // cut off
           absl::StrCat(graph.substr(0, graph.find("model.py")), "\xff.py:1 in f, code: y\n",
                        graph.substr(graph.find("        relu"))),  // not UTF-8
       }) {
    absl::flat_hash_set<std::string> none;
    EXPECT_FALSE(ScanFxSourceFiles(broken, &none)) << broken;
    EXPECT_TRUE(none.empty()) << broken;
    EXPECT_GE(Parse(broken).result.skipped_lines, 1u) << broken;  // what the caller then reports
  }
}

}  // namespace
}  // namespace cl::fx_testing

// The tree-sitter front end: modern syntax parses cleanly; hostile sources (syntax errors, invalid
// UTF-8, binary bytes, huge files, deep nesting, a parse over its time budget) give findings for
// what parsed and a diagnostic, never a crash or a hang.
#include "lint/python_parser.h"

#include <time.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/lint/lint_testing.h"

namespace cl::lint {
namespace {

// The scan's own CPU time: a bound on wall time fails when the machine is busy (ctest -j, other
// builds), which says nothing about the scan.
double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

using namespace ::cl::lint::testing;  // NOLINT(build/namespaces): the helpers and matchers

// Tree-sitter's parse budget is wall time (2 s + 1 s a MiB): a busy machine can run it out on
// these multi-MiB sources and the file is then not scanned at all. These tests bound the scan's
// cost themselves, in CPU time, so they lift the budget.
// They also lift the per-file line limit, to measure what a file past it would cost.
LintOptions Unhurried() {
  LintOptions options;
  options.limits.timeout_micros = 600'000'000;
  options.limits.max_lines = 1'000'000;
  return options;
}

std::string Messages(const ParsedSource& p) {
  std::string out;
  for (const SourceDiagnostic& d : p.diagnostics)
    absl::StrAppend(&out, d.line, ": ", d.message, "\n");
  return out;
}

std::string Messages(const LintResult& r) {
  std::string out;
  for (const LintDiagnostic& d : r.diagnostics)
    absl::StrAppend(&out, d.file, ":", d.line, ": ", d.message, "\n");
  return out;
}

// An in-place write through a view in a compiled function: one finding when scanned.
constexpr char kFinding[] = R"py(
@torch.compile
def g(y):
    z = y.view(-1)
    z.mul_(0.5)
    return y
)py";

TEST(PythonParserTest, ModernSyntaxParsesCleanly) {
  PythonParser parser;
  const ParsedSource p = parser.Parse(R"py(import torch
type Vec = list[float]
def f[T](x: T) -> T:
    if (n := len(x)) > 2:
        print(f"{n=} {x!r:>10}")
    match x:
        case [a, *rest]:
            pass
    try:
        pass
    except* ValueError:
        pass
    async def g():
        async with ctx() as c:
            await c
    return x
)py");
  EXPECT_FALSE(p.has_errors) << Messages(p);
  EXPECT_THAT(p.diagnostics, IsEmpty()) << Messages(p);
  EXPECT_EQ(p.lines, 16u);
  EXPECT_EQ(p.tree.kind(p.tree.root()), Kind::kModule);
}

TEST(PythonParserTest, SyntaxErrorsStillScanWhatParsed) {
  const LintResult r =
      LintCode(absl::StrCat("import torch\ndef broken(:\n    return )\n", kFinding));
  EXPECT_THAT(Found(r), ElementsAre("in_place_op_on_alias:8"));
  EXPECT_THAT(Messages(r), HasSubstr("/p/t.py:2: 2 syntax errors at lines 2, 3"));
  EXPECT_THAT(Messages(r), HasSubstr("the parts that parsed were scanned"));
}

TEST(PythonParserTest, InvalidUtf8IsRepaired) {
  const LintResult r = LintCode(absl::StrCat("import torch\nname = \"\xff\xfe\xc3\"\n", kFinding));
  EXPECT_THAT(Found(r), ElementsAre("in_place_op_on_alias:7"));
  EXPECT_THAT(Messages(r), HasSubstr("invalid UTF-8 (bad bytes read as U+FFFD)"));
}

TEST(PythonParserTest, BinaryBytesGiveADiagnosticNotACrash) {
  std::string bytes;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < (1 << 18); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    bytes.push_back(static_cast<char>(state >> 56));
  }
  bytes[100] = '\0';
  const LintResult r = LintCode(bytes);
  EXPECT_EQ(r.files, 1u);
  EXPECT_FALSE(r.diagnostics.empty());
  // And a NUL byte in otherwise good source does not stop the scan.
  // (A std::string of explicit length: a literal through StrCat would stop at the NUL.)
  constexpr char kHead[] = "import torch\nx = 1\0\n";
  const std::string with_nul = std::string(kHead, sizeof kHead - 1) + kFinding;
  ASSERT_EQ(with_nul[18], '\0');
  const LintResult nul = LintCode(with_nul);
  EXPECT_EQ(nul.files, 1u);
  EXPECT_THAT(Found(nul), ElementsAre("in_place_op_on_alias:7"));
}

TEST(PythonParserTest, FilesOverTheSizeLimitAreNotParsed) {
  LintOptions options;
  options.limits.max_bytes = 1 << 20;
  const std::string big(2 << 20, '#');
  const LintResult r = LintCode(big, options);
  EXPECT_THAT(Found(r), IsEmpty());
  EXPECT_THAT(Messages(r), HasSubstr("not scanned: 2097152 bytes is over the 1048576-byte limit"));
}

TEST(PythonParserTest, FilesOverTheLineLimitAreNotParsed) {
  LintOptions options;
  options.limits.max_lines = 1000;
  std::string many;
  for (int i = 0; i < 1500; ++i) absl::StrAppend(&many, "x", i, " = ", i, "\n");
  const LintResult r = LintCode(absl::StrCat(many, kFinding), options);
  EXPECT_THAT(Found(r), IsEmpty());
  EXPECT_THAT(Messages(r), HasSubstr("lines is over the 1000-line limit for one source file"));
  EXPECT_THAT(Found(LintCode(kFinding, options)), ElementsAre("in_place_op_on_alias:5"));
}

// Many files each within the per-file limits: the scan stops reading at its total, file by file,
// and names each file it left.
TEST(PythonParserTest, ASessionsSourcesPastTheTotalAreNotScanned) {
  LintOptions options;
  options.max_total_bytes = 2 * sizeof(kFinding);
  const LintResult r = LintFiles(
      {{"/p/a.py", kFinding}, {"/p/b.py", kFinding}, {"/p/c.py", kFinding}, {"/p/d.py", kFinding}},
      options);
  EXPECT_EQ(r.files, 2u);
  EXPECT_THAT(Found(r), ElementsAre("in_place_op_on_alias:5", "in_place_op_on_alias:5"));
  EXPECT_THAT(Messages(r), HasSubstr("/p/c.py:0: not scanned: the session's sources are over the"));
  EXPECT_THAT(Messages(r), HasSubstr("/p/d.py:0: not scanned"));
}

TEST(PythonParserTest, AHugeFileIsScannedInTime) {
  std::string source = "import torch\n";
  for (int i = 0; i < 20000; ++i) {
    absl::StrAppend(&source, "def f", i, "(x):\n    y = x + ", i, "\n    return y * 2\n\n");
  }
  absl::StrAppend(&source, kFinding);
  const double start = ThreadCpuSeconds();
  const LintResult r = LintCode(source, Unhurried());
  const double seconds = ThreadCpuSeconds() - start;
  EXPECT_THAT(Found(r), ElementsAre("in_place_op_on_alias:80006"));
  EXPECT_LT(seconds, 20.0);
}

// A generated function of tens of thousands of statements on a few names: the alias checks stay
// near-linear (bounded scans), not quadratic.
TEST(PythonParserTest, AGeneratedFunctionWithManyStatementsOnFewNames) {
  std::string source = "import torch\n@torch.compile\ndef f(x, y):\n";
  for (int i = 0; i < 30000; ++i) {
    absl::StrAppend(&source, "    z = x.view(-1)\n    y = y + z\n    z.add_(", i,
                    ")\n    x += 1\n");
  }
  source += "    return x, y\n";
  const double start = ThreadCpuSeconds();
  const LintResult r = LintCode(source, Unhurried());
  const double seconds = ThreadCpuSeconds() - start;
  EXPECT_EQ(Found(r, "in_place_op_on_alias").size(),
            59999u);  // every z.add_, every x += 1 but the last
  EXPECT_LT(seconds, 20.0);
}

TEST(PythonParserTest, DeepNestingIsCutNotRecursedInto) {
  for (const std::string& nested :
       {absl::StrCat("x = ", std::string(50000, '('), "1", std::string(50000, ')'), "\n"),
        absl::StrCat("x = ", std::string(50000, '['), std::string(50000, ']'), "\n"),
        [] {
          std::string s = "x = a";
          for (int i = 0; i < 100000; ++i) s += " + a";
          return s + "\n";
        }(),
        [] {
          std::string s = "x = f";
          for (int i = 0; i < 20000; ++i) s += "(g";
          return s + std::string(20000, ')') + "\n";
        }()}) {
    const LintResult r = LintCode(absl::StrCat("import torch\n", nested, kFinding));
    EXPECT_EQ(r.files, 1u);
    EXPECT_FALSE(r.diagnostics.empty());
  }
  PythonParser parser;
  std::string chain = "x = a";
  for (int i = 0; i < 5000; ++i) chain += " + a";
  const ParsedSource p = parser.Parse(chain);
  EXPECT_THAT(Messages(p), HasSubstr("nested deeper than 200 levels"));
}

TEST(PythonParserTest, AParseOverItsBudgetIsStoppedAndTheParserReused) {
  PythonParser parser;
  std::string source;
  for (int i = 0; i < 50000; ++i) absl::StrAppend(&source, "def f", i, "(x):\n    return x\n");
  ParseLimits limits;
  limits.timeout_micros = 1;
  const ParsedSource slow = parser.Parse(source, limits);
  EXPECT_EQ(slow.tree.root(), kNoNode);
  EXPECT_THAT(Messages(slow), HasSubstr("not scanned: parsing took longer than its 0 ms budget"));
  const ParsedSource next = parser.Parse("x = 1\n");
  EXPECT_NE(next.tree.root(), kNoNode);
  EXPECT_THAT(next.diagnostics, IsEmpty());
}

TEST(SyntaxTreeTest, SnippetIsOneLineCutOnACharacterBoundary) {
  PythonParser parser;
  const ParsedSource p = parser.Parse("x = f(a,\n      b)\ny = \"ééééééééééééé\"\n");
  const SyntaxTree& t = p.tree;
  NodeId first = t.NamedChild(t.root(), 0);
  EXPECT_EQ(t.Snippet(first), "x = f(a,…");
  NodeId second = t.NamedChild(t.root(), 1);
  EXPECT_EQ(t.Snippet(second, 8), "y = \"é…");
}

}  // namespace
}  // namespace cl::lint

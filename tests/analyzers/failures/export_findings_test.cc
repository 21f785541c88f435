// What torch.export could not prove, on real draft-export logs: torch 2.6's (a fixture of our
// own, scenes/draft_export.py, whose result.json is torch's own report) and tlparse's corpus,
// whose newer torch logs user stacks and locals, and whose 2025-01-27 log tlparse 0.4.3 crashes on.
#include "analyzers/failures/export_findings.h"

#include <set>
#include <string>

#include "analyzers/failures/failures.h"
#include "capture/torch_trace/importer.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "service/engine.h"
#include "service/thread_pool.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/import_fixture.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kDraftExport[] = "torch_trace/torch-2.6/draft_export/trace.log";

// The torch 2.6 draft export with its script's text: the scene ran at /mnt/project, and its
// script is in the fixtures' scenes folder.
v1::SessionCapture ImportWithSources(const std::string& fixture) {
  ImportOptions options;
  options.path_map = {{"/mnt/project", ::cl::testing::FixturePath("torch_trace/torch-2.6/scenes")}};
  absl::StatusOr<v1::SessionCapture> c =
      ImportTraceFile(::cl::testing::FixturePath(fixture), options);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : v1::SessionCapture();
}

v1::FailuresSection Findings(const v1::SessionCapture& capture) {
  return ::cl::testing::RunPassOk(FailuresPass(), capture).failures();
}

const v1::ExportFinding* At(const v1::FailuresSection& s, v1::ExportFinding::Kind kind,
                            uint32_t line) {
  for (const v1::ExportFinding& f : s.export_findings()) {
    if (f.kind() == kind && f.location().line() == line) return &f;
  }
  return nullptr;
}

// The whole engine's verdict on `capture`: each item's text, most costly first.
std::vector<std::string> Verdict(const v1::SessionCapture& capture) {
  ThreadPool pool(2, 8);
  Engine engine(&pool);
  absl::StatusOr<EngineResult> r = engine.Analyze(capture, nullptr, {}, nullptr);
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<std::string> items;
  if (r.ok()) {
    for (const v1::VerdictItem& item : r->report.verdict().items()) {
      EXPECT_EQ(item.section(), "failures") << item.text();
      items.push_back(item.text());
    }
  }
  return items;
}

// A fixture's result.json, as torch's own outcome recorded it.
std::string TorchsResult(const std::string& scene) {
  absl::StatusOr<std::string> text = ::cl::testing::ReadFixture(
      ::cl::testing::FixturePath(absl::StrCat("torch_trace/torch-2.6/", scene, "/result.json")));
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

std::vector<std::string> Checks(const v1::ExportFinding& f) {
  std::vector<std::string> out;
  for (const v1::ExportDecision& d : f.decisions()) out.push_back(d.check());
  return out;
}

TEST(ExportAssertionTest, ReadsSympysDecisionAsPython) {
  struct Case {
    const char* expr;
    const char* result;
    const char* assertion;
  };
  for (const Case& c : {
           Case{"Eq(n, 1)", "False", "n != 1"}, Case{"Eq(n, 1)", "True", "n == 1"},
           Case{"Ne(n, 1)", "True", "n != 1"}, Case{"Ne(n, 1)", "False", "n == 1"},
           Case{"Eq(16, n)", "False", "n != 16"},  // the number on the right
           Case{"u2 < 0", "False", "u2 >= 0"}, Case{"u2 > u0", "False", "u2 <= u0"},
           Case{"n >= 0", "False", "n < 0"}, Case{"n <= 2*s0", "True", "n <= 2*s0"},
           Case{"(((-u0)//3)) + 5 < 2*s0", "False", "(((-u0)//3)) + 5 >= 2*s0"},
           Case{"Eq(Mod(u0, 2), 0)", "False", "Mod(u0, 2) != 0"},
           Case{"Eq(a, b) | Eq(c, d)", "False", "not (Eq(a, b) | Eq(c, d))"},
           Case{"pos", "3", "pos == 3"},  // a value torch needed itself
       }) {
    EXPECT_EQ(ExportAssertion(c.expr, c.result), c.assertion) << c.expr << " " << c.result;
  }
}

// scenes/draft_export.py: a MoE router with a custom op that has no fake kernel and a capacity
// from `.item()`, and a KV-cache decode step indexed by `.item()`. Every issue torch's own report
// names (result.json) is a finding at the same user line, in the user's names.
TEST(ExportFindingsTest, TorchsDraftExportReadAsTheUsersCode) {
  const v1::FailuresSection s = Findings(ImportWithSources(kDraftExport));
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.compiles(), 0u);
  EXPECT_EQ(s.exported_program(), "");  // torch 2.6 logs none
  ASSERT_EQ(s.export_findings_size(), 4);

  const v1::ExportFinding* op = At(s, v1::ExportFinding::MISSING_FAKE_KERNEL, 32);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->op(), "lensdemo.route_topk.default");
  EXPECT_EQ(op->code(), "idx = route_topk(scores, 2)");
  EXPECT_EQ(op->records(), 2u);  // export traces twice
  EXPECT_THAT(op->remedy(), HasSubstr("@torch.library.register_fake(\"lensdemo::route_topk\")"));

  const v1::ExportFinding* kept = At(s, v1::ExportFinding::DATA_DEPENDENT, 34);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->code(), "kept = x[:capacity]");
  EXPECT_THAT(Checks(*kept), Contains("torch._check(capacity >= 0)"));
  EXPECT_THAT(Checks(*kept), Contains("torch._check(capacity <= 16)"));
  EXPECT_THAT(Checks(*kept), Contains("torch._check(capacity != 0)"));
  // The second trace's u5 is the first's u2: one decision each, and one symbol.
  std::set<std::string> exprs;
  for (const v1::ExportDecision& d : kept->decisions()) {
    EXPECT_TRUE(exprs.insert(d.assertion()).second) << d.assertion();
    EXPECT_THAT(d.expr(), Not(HasSubstr("u")));
  }
  ASSERT_EQ(kept->symbols_size(), 1);
  EXPECT_EQ(kept->symbols(0).user_name(), "capacity");
  EXPECT_EQ(kept->symbols(0).code(), "capacity = budget.item()");
  EXPECT_EQ(kept->symbols(0).location().line(), 33u);
  EXPECT_THAT(kept->remedy(), HasSubstr("Runtime assertion failed"));

  const v1::ExportFinding* written = At(s, v1::ExportFinding::DATA_DEPENDENT, 36);
  ASSERT_NE(written, nullptr);
  EXPECT_THAT(Checks(*written), Contains("torch._check(capacity != 16)"));

  // Each export numbers its symbols from u0 again: the decoder's u0 is `pos`, not the router's.
  const v1::ExportFinding* index = At(s, v1::ExportFinding::DATA_DEPENDENT, 51);
  ASSERT_NE(index, nullptr);
  ASSERT_EQ(index->decisions_size(), 1);
  EXPECT_EQ(index->decisions(0).expr(), "pos");
  EXPECT_EQ(index->decisions(0).result(), "3");
  EXPECT_EQ(index->decisions(0).check(), "");  // fixing pos at 3 in the code is no remedy
  ASSERT_EQ(index->symbols_size(), 1);
  EXPECT_EQ(index->symbols(0).code(), "pos = start.item()");
  EXPECT_THAT(index->remedy(), HasSubstr("fixed it at the example's 3"));
  EXPECT_THAT(index->remedy(), Not(HasSubstr("torch._check")));  // no fact to state

  // torch's own report: every failure it lists is one of ours, at its user line.
  google::protobuf::Struct torch;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(TorchsResult("draft_export"), &torch).ok());
  int named = 0;
  for (const auto& [model, failures] : torch.fields()) {
    for (const google::protobuf::Value& f : failures.list_value().values()) {
      const auto& fields = f.struct_value().fields();
      const std::string type = fields.at("type").string_value();
      ++named;
      if (type == "MISSING_FAKE_KERNEL") {
        EXPECT_EQ(fields.at("op").string_value(), op->op());
        continue;
      }
      ASSERT_EQ(type, "DATA_DEPENDENT_ERROR");
      const auto& lines = fields.at("lines").list_value().values();
      ASSERT_FALSE(lines.empty());
      const uint32_t line = static_cast<uint32_t>(lines.rbegin()->number_value());
      EXPECT_NE(At(s, v1::ExportFinding::DATA_DEPENDENT, line), nullptr) << model << " " << line;
    }
  }
  EXPECT_EQ(named, 4);
}

// Without the script's text the symbols have no names: the decisions stay in torch's, and no
// torch._check is offered for a symbol the user never wrote.
TEST(ExportFindingsTest, WithoutTheSourceTheDecisionsStayInTorchsNames) {
  const v1::FailuresSection s = Findings(::cl::testing::ImportFixtureLog(kDraftExport));
  ASSERT_EQ(s.export_findings_size(), 4);
  const v1::ExportFinding* kept = At(s, v1::ExportFinding::DATA_DEPENDENT, 34);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->code(), "");
  EXPECT_THAT(kept->decisions(0).assertion(), HasSubstr("u2"));
  for (const std::string& check : Checks(*kept)) EXPECT_EQ(check, "");
  EXPECT_THAT(kept->remedy(), HasSubstr("with torch._check"));
}

// tlparse's export.log (newer torch): the record carries the user's stack with each line's text
// and the line's locals, so `Eq((((-u0)//3)) + 5, 0)` reads `Eq(a, 0)`.
TEST(ExportFindingsTest, NewerTorchsLocalsNameTheExpression) {
  const v1::FailuresSection s =
      Findings(::cl::testing::ImportFixtureLog("torch_trace/tlparse-corpus/tlparse/export.log"));
  ASSERT_EQ(s.export_findings_size(), 1);
  const v1::ExportFinding& f = s.export_findings(0);
  EXPECT_EQ(f.kind(), v1::ExportFinding::DATA_DEPENDENT);
  EXPECT_EQ(f.location().line(), 279u);
  EXPECT_EQ(f.code(), "return z[:a]");
  ASSERT_EQ(f.decisions_size(), 1);
  EXPECT_EQ(f.decisions(0).expr(), "Eq(a, 0)");
  EXPECT_EQ(f.decisions(0).check(), "torch._check(a != 0)");
  // u0 was made by `a = x.item()` (line 269), but `a` means another value by line 279: the
  // symbol keeps torch's name where the locals say so.
  ASSERT_EQ(f.symbols_size(), 1);
  EXPECT_EQ(f.symbols(0).location().line(), 269u);
  EXPECT_EQ(f.symbols(0).code(), "a = x.item()");
  // Later torch logs the program it exported: the section shows it, whole here.
  EXPECT_THAT(s.exported_program(), ::testing::StartsWith("ExportedProgram:"));
  EXPECT_THAT(s.exported_program(), HasSubstr("Range constraints:"));
  EXPECT_FALSE(s.exported_program_clipped());
}

// export_guard_added.log: a guard export evaluated on a size declared dynamic.
TEST(ExportFindingsTest, AGuardOnADynamicSizeNamesItsSource) {
  const v1::FailuresSection s = Findings(
      ::cl::testing::ImportFixtureLog("torch_trace/tlparse-corpus/tlparse/export_guard_added.log"));
  ASSERT_EQ(s.export_findings_size(), 1);
  const v1::ExportFinding& f = s.export_findings(0);
  EXPECT_EQ(f.kind(), v1::ExportFinding::GUARD_EVALUATED);
  EXPECT_EQ(f.location().line(), 297u);
  EXPECT_EQ(f.code(), "assert a.shape[0] == 3");
  ASSERT_EQ(f.decisions_size(), 1);
  EXPECT_EQ(f.decisions(0).expr(), "Eq(s0, 3)");
  EXPECT_THAT(f.remedy(), HasSubstr("s0 is L['args'][0][0].size()[0]"));
  EXPECT_THAT(f.remedy(), HasSubstr("dynamic_shapes"));
}

// scenes/draft_export_dims.py: a ResNet-style classifier declared dynamic in its batch, whose head
// flattens with `view(4, -1)`. Torch 2.6 logs no evaluated guard; its specialization of the batch
// is the finding, at the line torch's own report (result.json, a constraint violation) means.
TEST(ExportFindingsTest, ASizeDeclaredDynamicThatTheCodePinsIsFound) {
  const v1::FailuresSection s =
      Findings(ImportWithSources("torch_trace/torch-2.6/draft_export_dims/trace.log"));
  ASSERT_EQ(s.export_findings_size(), 1);
  const v1::ExportFinding& f = s.export_findings(0);
  EXPECT_EQ(f.kind(), v1::ExportFinding::SPECIALIZED);
  EXPECT_EQ(f.location().line(), 39u);
  EXPECT_EQ(f.code(), "return self.fc(x.view(4, -1))");
  ASSERT_EQ(f.decisions_size(), 1);
  EXPECT_EQ(f.decisions(0).expr(), "s0");
  EXPECT_EQ(f.decisions(0).result(), "4");
  EXPECT_EQ(f.decisions(0).check(), "");
  EXPECT_THAT(f.remedy(), HasSubstr("`s0` (L['args'][0][0].size()[0]) can only be 4 here"));
  EXPECT_THAT(f.remedy(), HasSubstr("declare it static in dynamic_shapes"));

  const std::string torch = TorchsResult("draft_export_dims");
  EXPECT_THAT(torch, HasSubstr("CONSTRAINT_VIOLATION_ERROR"));
  EXPECT_THAT(torch, HasSubstr("L['args'][0][0].size()[0]"));
}

// scenes/draft_export_swiglu.py: a pre-norm SwiGLU block that keeps `mask.nonzero()[:, 1]`.
// torch's own fake kernel for aten.select.int disagrees on a storage offset, torch cannot infer
// one, and draft_export raises (result.json): the finding says the export stopped there, and points
// at the user's line rather than at a fake kernel to register.
TEST(ExportFindingsTest, TorchsOwnFakeKernelThatStopsTheExportIsNotTheUsersToRegister) {
  const v1::SessionCapture capture =
      ImportWithSources("torch_trace/torch-2.6/draft_export_swiglu/trace.log");
  const v1::FailuresSection s = Findings(capture);
  ASSERT_EQ(s.export_findings_size(), 1);
  const v1::ExportFinding& f = s.export_findings(0);
  EXPECT_EQ(f.kind(), v1::ExportFinding::MISMATCHED_FAKE_KERNEL);
  EXPECT_EQ(f.op(), "aten.select.int");
  EXPECT_EQ(f.location().line(), 44u);
  EXPECT_EQ(f.code(), "keep = mask.nonzero()[:, 1]");
  EXPECT_TRUE(f.stopped());
  EXPECT_THAT(f.remedy(), HasSubstr("the export stops with an error here"));
  EXPECT_THAT(f.remedy(), HasSubstr("not one to register"));
  EXPECT_THAT(f.remedy(), Not(HasSubstr("register_fake(")));

  EXPECT_THAT(TorchsResult("draft_export_swiglu"),
              HasSubstr("non-zero storage offset"));  // torch did stop

  const std::vector<std::string> verdict = Verdict(capture);
  ASSERT_EQ(verdict.size(), 1u);
  EXPECT_THAT(verdict[0], HasSubstr("torch.export stopped with an error at aten.select.int"));
  EXPECT_THAT(verdict[0], Not(HasSubstr("could not prove")));
}

// scenes/export_nonstrict.py: a non-strict torch.export that raised. The log names no compile and
// holds no error, only the graph traced so far: its last op's line is where the export stopped,
// with the data-dependent value the trace had made.
TEST(ExportFindingsTest, ANonStrictExportThatRaisedStopsAtItsLastTracedLine) {
  const v1::SessionCapture capture =
      ImportWithSources("torch_trace/torch-2.6/export_nonstrict/trace.log");
  EXPECT_EQ(capture.compiles_size(), 0);
  const v1::FailuresSection s = Findings(capture);
  ASSERT_EQ(s.export_findings_size(), 1);
  const v1::ExportFinding& f = s.export_findings(0);
  EXPECT_EQ(f.kind(), v1::ExportFinding::TRACE_FAILED);
  EXPECT_TRUE(f.stopped());
  EXPECT_EQ(f.op(), "aten.slice.Tensor");
  EXPECT_EQ(f.location().line(), 26u);
  EXPECT_EQ(f.code(), "return self.box(feats)[order[:n]]");
  ASSERT_EQ(f.symbols_size(), 1);
  EXPECT_EQ(f.symbols(0).user_name(), "n");
  EXPECT_EQ(f.symbols(0).location().line(), 24u);
  EXPECT_THAT(f.remedy(), HasSubstr("n at /mnt/project/export_nonstrict.py:24"));
  EXPECT_THAT(f.remedy(), HasSubstr("torch._check"));

  EXPECT_THAT(TorchsResult("export_nonstrict"),
              HasSubstr("GuardOnDataDependentSymNode"));  // torch did raise

  EXPECT_THAT(Verdict(capture),
              ElementsAre("torch.export stopped with an error at "
                          "/mnt/project/export_nonstrict.py:26 (aten.slice.Tensor)"));
}

// The 2025-01-27 log (tlparse 0.4.3 panics on it in --export): a custom op with no fake kernel,
// and data-dependent decisions from torch's older record name, with no user stack of its own.
TEST(ExportFindingsTest, AnOlderLogThatTlparseCannotReadIsRead) {
  const v1::FailuresSection s = Findings(::cl::testing::ImportFixtureLog(
      "torch_trace/tlparse-corpus/tlparse_history/export.log@2025-01-27_d54c9e0.log"));
  ASSERT_EQ(s.export_findings_size(), 2);
  EXPECT_EQ(s.export_findings(0).kind(), v1::ExportFinding::MISSING_FAKE_KERNEL);
  EXPECT_EQ(s.export_findings(0).op(), "mylib.foo1.default");
  EXPECT_THAT(s.export_findings(0).remedy(), HasSubstr("\"mylib::foo1\""));
  EXPECT_EQ(s.export_findings(1).kind(), v1::ExportFinding::DATA_DEPENDENT);
  EXPECT_THAT(s.export_findings(1).location().file(), HasSubstr("test_draft_export.py"));
  EXPECT_EQ(s.export_findings(1).records(), 8u);
}

// scenes/real_tensors_compile.py: torch.compile with fake_tensor_propagate_real_tensors logs the
// same decisions under its compile, with no user frame (Dynamo traces bytecode): they are the
// compiled frame's, and the verdict says torch compiled it, not that export exported it.
TEST(ExportFindingsTest, DecisionsUnderACompileAreTheCompiledFramesAndSaySo) {
  const v1::SessionCapture capture =
      ::cl::testing::ImportFixtureLog("torch_trace/torch-2.6/real_tensors_compile/trace.log");
  const v1::FailuresSection s = Findings(capture);
  ASSERT_EQ(s.export_findings_size(), 1);
  const v1::ExportFinding& f = s.export_findings(0);
  EXPECT_EQ(f.compile_id(), "0/0");
  EXPECT_EQ(f.location().file(), "/mnt/project/real_tensors_compile.py");
  EXPECT_EQ(f.location().line(), 20u);  // forward
  EXPECT_EQ(f.records(), 4u);
  EXPECT_THAT(f.remedy(), HasSubstr("the compiled graph asserts it at run time"));

  const std::vector<std::string> verdict = Verdict(capture);
  ASSERT_EQ(verdict.size(), 1u);
  EXPECT_THAT(verdict[0],
              HasSubstr("torch could not prove what it compiled: 4 decisions at 1 line"));
  EXPECT_THAT(verdict[0], HasSubstr("which the compiled graph asserts"));
}

// A log of no export has no findings, and a log of only an export is not "no compile" skipped.
TEST(ExportFindingsTest, TheVerdictSaysWhatExportCouldNotProve) {
  const std::vector<std::string> verdict = Verdict(ImportWithSources(kDraftExport));
  ASSERT_EQ(verdict.size(), 1u);
  EXPECT_THAT(verdict[0],
              HasSubstr("torch.export could not prove what it exported: 7 decisions at 3 lines"));
  EXPECT_THAT(verdict[0], HasSubstr("no fake kernel for lensdemo.route_topk.default"));

  const v1::FailuresSection plain =
      Findings(::cl::testing::ImportFixtureLog("torch_trace/torch-2.6/export_model/trace.log"));
  EXPECT_THAT(plain.export_findings(), IsEmpty());
}

}  // namespace
}  // namespace cl

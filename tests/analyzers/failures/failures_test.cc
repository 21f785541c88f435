// The failures pass on real logs from tlparse's corpus: a backend that raised (comp_failure.log),
// graph breaks that torch took as restarts (comp_metrics.log), and a clean session (the hero's).
#include "analyzers/failures/failures.h"

#include <string>

#include "analyzers/common/restarts.h"
#include "capture/torch_trace/importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/engine.h"
#include "service/thread_pool.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/import_fixture.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

v1::SessionCapture Import(const std::string& fixture) {
  return ::cl::testing::ImportFixtureLog(fixture);
}

TEST(FailuresTest, ABackendThatRaisedIsListedWithItsTracebackAndRemedy) {
  const v1::AnalysisReport report = ::cl::testing::RunPassOk(
      FailuresPass(), Import("torch_trace/tlparse-corpus/tlparse/comp_failure.log"));
  const v1::FailuresSection& s = report.failures();
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.compiles(), 1u);
  ASSERT_EQ(s.failed_size(), 1);
  const v1::FailedCompile& f = s.failed(0);
  EXPECT_EQ(f.compile_id(), "0/0");
  EXPECT_EQ(f.frame(), "fn");
  EXPECT_EQ(f.location().line(), 10755u);
  EXPECT_THAT(f.location().file(), HasSubstr("test_misc.py"));
  EXPECT_EQ(f.fail_type(), "BackendCompilerFailed");
  EXPECT_EQ(f.reason(), "backend='broken_backend' raised:\nRuntimeError: broken backend");
  // The traceback torch logged, without the record's JSON line in front of it.
  EXPECT_THAT(f.traceback(), StartsWith("Traceback (most recent call last):"));
  EXPECT_THAT(f.traceback(), HasSubstr("convert_frame.py"));
  EXPECT_THAT(f.remedy(), HasSubstr("(broken_backend)"));
  EXPECT_THAT(f.remedy(), HasSubstr("TORCHDYNAMO_REPRO_AFTER"));
  EXPECT_THAT(s.restarts(), IsEmpty());
}

// fixtures/torch_trace/torch-2.6/custom_op: a custom op with no fake kernel fails the trace, twice.
// Torch blames custom_ops.py's __call__, inside torch; the failure is listed at the user's line
// torch's text names, and its remedy is the fake kernel, not "it fails eagerly too".
TEST(FailuresTest, ACustomOpWithNoFakeKernelIsBlamedOnTheUsersLine) {
  const v1::AnalysisReport report =
      ::cl::testing::RunPassOk(FailuresPass(), Import("torch_trace/torch-2.6/custom_op/trace.log"));
  const v1::FailuresSection& s = report.failures();
  ASSERT_EQ(s.failed_size(), 2);
  for (const v1::FailedCompile& f : s.failed()) {
    SCOPED_TRACE(f.compile_id());
    EXPECT_EQ(f.fail_type(), "TorchRuntimeError");
    EXPECT_EQ(f.location().file(), "/mnt/project/custom_op.py");
    EXPECT_EQ(f.location().line(), 18u);
    EXPECT_THAT(f.remedy(), StartsWith("The custom op `scene::scaled_clip` has no fake kernel"));
    EXPECT_THAT(f.remedy(), HasSubstr("`@scaled_clip.register_fake`"));
  }
}

// fixtures/torch_trace/torch-2.6/no_cxx: Inductor found no C++ compiler for a compiled
// nn.Sequential. The frame is torch's wrapper `inner`: the failure is listed at the user's call
// and named as the wrapper, and the remedy is the compiler, not a minifier.
TEST(FailuresTest, NoCxxCompilerIsTheMachinesNotTheModels) {
  const v1::AnalysisReport report =
      ::cl::testing::RunPassOk(FailuresPass(), Import("torch_trace/torch-2.6/no_cxx/trace.log"));
  const v1::FailuresSection& s = report.failures();
  ASSERT_EQ(s.failed_size(), 1);
  const v1::FailedCompile& f = s.failed(0);
  EXPECT_EQ(f.fail_type(), "BackendCompilerFailed");
  EXPECT_EQ(f.frame(), "inner (torch's wrapper of a compiled module)");
  EXPECT_EQ(f.location().file(), "/mnt/project/no_cxx.py");
  EXPECT_EQ(f.location().line(), 19u);
  EXPECT_THAT(f.remedy(), StartsWith("Inductor found no working C++ compiler"));
  EXPECT_THAT(f.remedy(), ::testing::Not(HasSubstr("TORCHDYNAMO_REPRO_AFTER")));
}

// fixtures/torch_trace/torch-2.6/loop_break: Layer.forward restarted at the `mask.any()` break;
// the restart's reason reads as the graph-break table words it, without torch's docs link.
TEST(FailuresTest, ARestartAtABreakIsWordedAsTheBreak) {
  const v1::AnalysisReport report = ::cl::testing::RunPassOk(
      FailuresPass(), Import("torch_trace/torch-2.6/loop_break/trace.log"));
  ASSERT_EQ(report.failures().restarts_size(), 1);
  const v1::RestartedCompile& r = report.failures().restarts(0);
  EXPECT_TRUE(r.graph_break());
  EXPECT_THAT(r.reasons(), ElementsAre("Dynamic control flow is not supported at the moment. "
                                       "Please use functorch.experimental.control_flow.cond to "
                                       "explicitly capture the control flow."));
}

TEST(FailuresTest, GraphBreakRestartsAreListedAndCountAsGraphBreaks) {
  const v1::SessionCapture capture = Import("torch_trace/tlparse-corpus/tlparse/comp_metrics.log");
  const v1::FailuresSection s = ::cl::testing::RunPassOk(FailuresPass(), capture).failures();
  EXPECT_THAT(s.failed(), IsEmpty());
  ASSERT_EQ(s.restarts_size(), 2);
  for (const v1::RestartedCompile& r : s.restarts()) {
    EXPECT_THAT(r.reasons(), ElementsAre(HasSubstr("skip function graph_break")));
    EXPECT_TRUE(r.graph_break());
  }
  EXPECT_EQ(s.restarts(0).compile_id(), "0/0_1");
  EXPECT_EQ(s.restarts(1).compile_id(), "1/0_1");

  // The whole report agrees: two graph breaks, in the Recompile section and in Raw.
  ThreadPool pool(2, 8);
  Engine engine(&pool);
  absl::StatusOr<EngineResult> r = engine.Analyze(capture, nullptr, {}, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->report.raw().graph_breaks(), 2u);
  ASSERT_EQ(r->report.recompile().graph_breaks_size(), 1);
  EXPECT_EQ(r->report.recompile().graph_breaks(0).count(), 2u);
  EXPECT_EQ(r->report.recompile().graph_breaks(0).category(),
            v1::GraphBreakCategory::USER_REQUESTED);
}

TEST(FailuresTest, ACleanSessionSaysSo) {
  const v1::FailuresSection s =
      ::cl::testing::RunPassOk(FailuresPass(), Import("torch_trace/torch-2.6/train/trace.log"))
          .failures();
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_GT(s.compiles(), 0u);
  EXPECT_THAT(s.failed(), IsEmpty());
}

TEST(FailuresTest, NoCompileIsSkipped) {
  const v1::FailuresSection s =
      ::cl::testing::RunPassOk(FailuresPass(), v1::SessionCapture()).failures();
  EXPECT_EQ(s.status(), v1::SKIPPED);
  EXPECT_EQ(s.reason(), "the capture holds no compile");
}

TEST(FailuresTest, Cancelled) {
  v1::SessionCapture capture;
  capture.add_compiles()->set_id("0/0");
  EXPECT_EQ(::cl::testing::RunPassCancelled(FailuresPass(), capture).code(),
            absl::StatusCode::kCancelled);
}

TEST(RestartsTest, OnlyARestartWithAReasonIsAGraphBreak) {
  EXPECT_TRUE(IsGraphBreakRestart("'skip function graph_break in file decorators.py'"));
  EXPECT_FALSE(IsGraphBreakRestart("<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>"));
  EXPECT_FALSE(IsGraphBreakRestart("  "));
  // A restart whose break the compile also recorded is not counted twice.
  v1::SessionCapture capture;
  v1::Compile& compile = *capture.add_compiles();
  compile.add_restart_reasons("'generic_jump TensorVariable()'");
  EXPECT_EQ(GraphBreakRestarts(capture).Count(compile), 1u);
  compile.add_graph_breaks()->set_reason("Graph break: generic_jump TensorVariable() at f.py:3");
  EXPECT_EQ(GraphBreakRestarts(capture).Count(compile), 1u);
  // Torch records the break on attempt 0 and the restart reason on attempt 1: one break.
  v1::Compile& first = *capture.add_compiles();
  first.set_frame_id(2);
  first.add_graph_breaks()->set_reason(
      "Graph break in user code at a.py:32\nReason: Tensor.backward");
  v1::Compile& second = *capture.add_compiles();
  second.set_frame_id(2);
  second.set_attempt(1);
  second.add_restart_reasons("Tensor.backward");
  EXPECT_EQ(GraphBreakRestarts(capture).Count(second), 0u);
  // The record and the restart often word one break differently ("Data-dependent jump" against
  // the exception's "Dynamic control flow is not supported"): still one break.
  second.clear_restart_reasons();
  second.add_restart_reasons("Dynamic control flow is not supported at the moment.");
  EXPECT_EQ(GraphBreakRestarts(capture).Count(second), 0u);
  second.set_frame_compile_id(1);
  EXPECT_EQ(GraphBreakRestarts(capture).Count(second), 1u);
}

TEST(FailureRemedyTest, KnownKindsHaveOne) {
  EXPECT_THAT(FailureRemedy("InternalTorchDynamoError", ""), HasSubstr("bug in Dynamo"));
  EXPECT_THAT(FailureRemedy("Unsupported", ""), HasSubstr("fullgraph=True"));
  EXPECT_THAT(FailureRemedy("TorchRuntimeError", ""), HasSubstr("fake tensors"));
  EXPECT_EQ(FailureRemedy("SomethingNew", ""), "");
  // What an image lacks, by what Inductor raised.
  EXPECT_THAT(FailureRemedy("BackendCompilerFailed",
                            "backend='inductor' raised:\nCppCompileError: C++ compile error\n"
                            "/tmp/x.cpp:1:10: fatal error: Python.h: No such file or directory"),
              HasSubstr("`python3-dev`"));
  EXPECT_THAT(FailureRemedy("BackendCompilerFailed",
                            "backend='inductor' raised:\nRuntimeError: Cannot find a working "
                            "triton installation. Either the package is not installed or it is "
                            "too old."),
              HasSubstr("install the `triton` build that matches this torch"));
  EXPECT_THAT(FailureRemedy("BackendCompilerFailed",
                            "backend='inductor' raised:\nCppCompileError: C++ compile error\n"
                            "/tmp/x.cpp:2:10: fatal error: omp.h: No such file or directory"),
              HasSubstr("install OpenMP for that compiler"));
}

// Torch 2.6's CPU flex_attention under the sandbox's GCC 14 (the text of a real failure, its
// command and paths shortened): the remedy quotes the compiler's first error, not the command.
TEST(FailureRemedyTest, GeneratedCxxThatDoesNotCompileQuotesTheFirstError) {
  const std::string reason =
      "backend='inductor' raised:\nCppCompileError: C++ compile error\n\nCommand:\ng++ "
      "/tmp/c/fy/cfyiuq7.cpp -D TORCH_INDUCTOR_CPP_WRAPPER -shared -fPIC -O3 -o "
      "/tmp/c/fy/cfyiuq7.so"
      "\n\nOutput:\n/tmp/c/fy/cfyiuq7.cpp: In lambda function:\n/tmp/c/fy/cfyiuq7.cpp:709:36: "
      "error: no matching function for call to ‘map<accum_t>(kernel(const float*, const float*, "
      "const float*, const int32_t*, const int32_t*, const int32_t*, float*)::<lambda(int64_t, "
      "int64_t)>::<lambda(Vec)>, accum_t*, accum_t*, int64_t&)’\n  709 | at::vec::map<accum_t>(\n";
  const std::string remedy = FailureRemedy("BackendCompilerFailed", reason);
  EXPECT_THAT(remedy, HasSubstr("Inductor's generated C++ did not compile (the compiler's first "
                                "error: no matching function for call to ‘map<accum_t>(kernel("));
  EXPECT_THAT(remedy, HasSubstr("…). Generated code that does not compile is a bug in Inductor"));
  EXPECT_THAT(remedy, Not(HasSubstr("-fPIC")));
  // No output to quote: the remedy still says what kind of failure it is.
  EXPECT_THAT(FailureRemedy("BackendCompilerFailed",
                            "backend='inductor' raised:\nCppCompileError: C++ compile error"),
              HasSubstr("Inductor's generated C++ did not compile. Generated code"));
}

// Under fullgraph=True what would have been a graph break fails the compile (a sandbox run of
// `@torch.compile(fullgraph=True)` over `.item()`: fail_reason "Tensor.item"): the break's own
// remedy is the useful one; a reason no rule knows keeps the general one.
TEST(FailureRemedyTest, AnUnsupportedCompileGetsTheRemedyOfTheBreakItNames) {
  const std::string item = FailureRemedy("Unsupported", "Tensor.item");
  EXPECT_THAT(item, HasSubstr("capture_scalar_outputs = True"));
  EXPECT_THAT(item, HasSubstr("Under fullgraph=True, compiling without it lets the frame break"));
  EXPECT_THAT(FailureRemedy("Unsupported", "something no rule knows"),
              HasSubstr("rewrite that code, or pass that input in a form torch.compile "
                        "supports."));
}

// A timing context manager class of the user's in a compiled forward (a torch 2.6 sandbox scene,
// its fail_reason verbatim): the frame ran eagerly, and the remedy names the class and says what
// Dynamo does trace there. Torch's own classes keep the general remedy.
TEST(FailureRemedyTest, AContextManagerClassOfTheUsersIsNamed) {
  const std::string timer = FailureRemedy(
      "Unsupported",
      "Unsupported context manager <__main__.Timer object at 0x7f6ac54d8ec0>'s __enter__ "
      "function");
  EXPECT_THAT(timer, HasSubstr("`Timer` (a context manager class, from `__main__`)"));
  EXPECT_THAT(timer, HasSubstr("could not trace its `__enter__`"));
  EXPECT_THAT(timer, HasSubstr("`torch.profiler.record_function(name)`"));
  EXPECT_THAT(FailureRemedy("Unsupported",
                            "Unsupported context manager <torch.x.Mode object at 0x1>'s __enter__ "
                            "function"),
              Not(HasSubstr("a context manager class, from")));
}

// fixtures/torch_trace/torch-2.6/nested_jagged: the resume function after jagged SDPA's break fails
// on its input (`torch.compile does not support strided NestedTensor`), with no fullgraph=True
// asked for: the remedy says where a break was impossible rather than blaming fullgraph.
TEST(FailuresPassTest, AnInputDynamoCannotWrapIsNotBlamedOnFullgraph) {
  const v1::FailuresSection s =
      testing::RunPassOk(FailuresPass(),
                         testing::ImportFixtureLog("torch_trace/torch-2.6/nested_jagged/trace.log"))
          .failures();
  ASSERT_EQ(s.failed_size(), 1);
  EXPECT_EQ(s.failed(0).fail_type(), "Unsupported");
  EXPECT_EQ(s.failed(0).location().line(), 28u);
  EXPECT_THAT(s.failed(0).remedy(), HasSubstr("or at an input of the frame it cannot wrap), so the "
                                              "frame ran eagerly: rewrite that code, or pass that "
                                              "input in a form torch.compile supports."));
}

// fixtures/torch_trace/torch-2.6/inference_habits: `torch.split(e, lengths.tolist())` made
// AOTAutograd's fake tensors raise; the retry with a graph break failed the same way. The code runs
// fine eagerly, so the remedy is not "the traced code raises".
TEST(FailuresPassTest, AFakeTensorExceptionInTheBackendPointsAtTheBreak) {
  const v1::FailuresSection s =
      testing::RunPassOk(FailuresPass(), testing::ImportFixtureLog(
                                             "torch_trace/torch-2.6/inference_habits/trace.log"))
          .failures();
  ASSERT_EQ(s.failed_size(), 1);
  EXPECT_EQ(s.failed(0).compile_id(), "0/0_1");
  EXPECT_THAT(s.failed(0).remedy(),
              HasSubstr("The backend raised on fake tensors while compiling the captured graph"));
  EXPECT_THAT(s.failed(0).remedy(), Not(HasSubstr("traced code raises")));
}

// fixtures/torch_trace/torch-2.6/data_dependent (scenes/data_dependent.py): `mark_dynamic` on the
// batch of a head that reshapes to a batch of 8 fails with ConstraintViolationError. The failure
// is listed at the line that pinned the size (torch's symbolic_shape_specialization of that
// source), not at the frame's first line, and its remedy names the size, the value and
// maybe_mark_dynamic. `fullgraph=True` over a Python `if` on a tensor is a UserError whose remedy
// is torch.cond, not torch's own "functorch.experimental.control_flow.cond".
TEST(FailuresTest, AMarkedDynamicSizeTheCodePinnedAndAFullGraphBranch) {
  const v1::AnalysisReport report = ::cl::testing::RunPassOk(
      FailuresPass(), Import("torch_trace/torch-2.6/data_dependent/trace.log"));
  const v1::FailuresSection& s = report.failures();
  ASSERT_EQ(s.failed_size(), 2);
  const v1::FailedCompile& pinned = s.failed(0);
  EXPECT_EQ(pinned.fail_type(), "ConstraintViolationError");
  EXPECT_EQ(pinned.location().file(), "/mnt/project/data_dependent.py");
  EXPECT_EQ(pinned.location().line(), 55u);
  EXPECT_THAT(pinned.remedy(),
              StartsWith("`x` dim 0 was marked dynamic (`torch._dynamo.mark_dynamic`), but the "
                         "code needs it to be exactly 8 at /mnt/project/data_dependent.py:55"));
  EXPECT_THAT(pinned.remedy(), HasSubstr("`torch._dynamo.maybe_mark_dynamic`"));
  const v1::FailedCompile& branch = s.failed(1);
  EXPECT_EQ(branch.fail_type(), "UserError");
  EXPECT_EQ(branch.frame(), "gate");
  EXPECT_THAT(branch.remedy(), HasSubstr("`torch.cond(pred, true_fn, false_fn, (x,))`"));
  EXPECT_THAT(branch.remedy(), HasSubstr("compile without fullgraph=True"));
  EXPECT_FALSE(pinned.exported());
  EXPECT_FALSE(branch.exported());
}

// fixtures/torch_trace/torch-2.6/export_model (scenes/export_model.py): torch.export of a model
// with a data-dependent branch and of one whose code pins the batch it was told is dynamic. Both
// failures are exports' (their stacks run through torch/export): the branch's remedy offers no
// "compile without fullgraph=True", which export has no form of, and the pinned batch names the
// Dim it was declared with.
TEST(FailuresTest, FailedExportsAreExportsNotFramesThatRanEagerly) {
  const v1::AnalysisReport report = ::cl::testing::RunPassOk(
      FailuresPass(), Import("torch_trace/torch-2.6/export_model/trace.log"));
  const v1::FailuresSection& s = report.failures();
  EXPECT_EQ(s.compiles(), 3u);
  ASSERT_EQ(s.failed_size(), 2);
  const v1::FailedCompile& branch = s.failed(0);
  EXPECT_EQ(branch.fail_type(), "UserError");
  EXPECT_TRUE(branch.exported());
  EXPECT_EQ(branch.location().line(), 30u);
  EXPECT_THAT(branch.remedy(), StartsWith("torch.export needs the whole forward as one graph"));
  EXPECT_THAT(branch.remedy(), HasSubstr("`torch.cond(pred, true_fn, false_fn, (x,))`"));
  EXPECT_THAT(branch.remedy(), Not(HasSubstr("fullgraph")));
  const v1::FailedCompile& pinned = s.failed(1);
  EXPECT_EQ(pinned.fail_type(), "ConstraintViolationError");
  EXPECT_TRUE(pinned.exported());
  EXPECT_EQ(pinned.location().line(), 41u);
  EXPECT_THAT(pinned.remedy(), HasSubstr("`Dim(\"batch\")` in `dynamic_shapes`"));
}

TEST(FailureRemedyTest, AConstraintViolationWithoutTheCapturesLineStillNamesTheSize) {
  EXPECT_THAT(
      FailureRemedy("ConstraintViolationError",
                    "Constraints violated (L['self']._modules['enc'].size()[1])! - Not all values "
                    "of RelaxedUnspecConstraint(L['batch']['ids'].size()[1]) are valid because "
                    "L['batch']['ids'].size()[1] was inferred to be equal to L['y'].size()[0]."),
      StartsWith("`self.enc` dim 1 was marked dynamic"));
  EXPECT_THAT(FailureRemedy("ConstraintViolationError",
                            "Not all values of RelaxedUnspecConstraint(L['x'].size()[2]) are valid "
                            "because L['x'].size()[2] was inferred to be a constant (64)."),
              StartsWith("`x` dim 2 was marked dynamic (`torch._dynamo.mark_dynamic`), but the "
                         "code needs it to be exactly 64,"));
  EXPECT_THAT(FailureRemedy("ConstraintViolationError", "something else"),
              StartsWith("A size was marked dynamic"));
  // torch.export's wording (torch 2.6, a sandbox run, verbatim): the size is a named Dim of
  // `dynamic_shapes`, and the remedy is export's, not mark_dynamic's.
  const std::string exported = FailureRemedy(
      "ConstraintViolationError",
      "Constraints violated (seq)! For more information, run with TORCH_LOGS=\"+dynamic\".\n  - "
      "Not all values of seq = L['ids'].size()[1] in the specified range are valid because seq "
      "was inferred to be a constant (8).");
  EXPECT_THAT(exported, StartsWith("`ids` dim 1 was declared dynamic (`Dim(\"seq\")` in "
                                   "`dynamic_shapes`), but the code needs it to be exactly 8,"));
  EXPECT_THAT(exported, HasSubstr("`Dim.AUTO`"));
  EXPECT_THAT(exported, ::testing::Not(HasSubstr("mark_dynamic")));
}

// fixtures/torch_trace/torch-2.6/training_habits: the compile of a tagger whose forward calls an
// nn.LSTM fails with torch's "purposely graph breaks on RNN, GRU, LSTMs". No fullgraph=True was
// asked for; the remedy is allow_rnn, not "compile without fullgraph=True".
TEST(FailuresTest, AnLstmsCompileFailsOnPurpose) {
  const v1::AnalysisReport report = ::cl::testing::RunPassOk(
      FailuresPass(), Import("torch_trace/torch-2.6/training_habits/trace.log"));
  const v1::FailuresSection& s = report.failures();
  ASSERT_EQ(s.failed_size(), 1);
  EXPECT_EQ(s.failed(0).fail_type(), "Unsupported");
  EXPECT_THAT(s.failed(0).remedy(), HasSubstr("`torch._dynamo.config.allow_rnn = True`"));
  EXPECT_THAT(s.failed(0).remedy(), ::testing::Not(HasSubstr("fullgraph")));
}

// fixtures/torch_trace/torch-2.6/config_values: a float made a graph input feeds
// F.interpolate's scale_factor and Dynamo's restarted trace diverges (AssertionError:
// SpeculationLog diverged), a Dynamo bug. The remedy says so and names what avoided it in that
// scene (specialize_float = True, checked in the sandbox: level_fixed in the same log compiles).
TEST(FailuresTest, ASpeculationLogThatDivergedIsDynamosBug) {
  const v1::AnalysisReport report = ::cl::testing::RunPassOk(
      FailuresPass(), Import("torch_trace/torch-2.6/config_values/trace.log"));
  const v1::FailuresSection& s = report.failures();
  ASSERT_EQ(s.failed_size(), 1);
  EXPECT_EQ(s.failed(0).fail_type(), "AssertionError");
  EXPECT_EQ(s.failed(0).frame(), "level");
  EXPECT_THAT(s.failed(0).remedy(), StartsWith("A bug in Dynamo"));
  EXPECT_THAT(s.failed(0).remedy(), HasSubstr("`torch._dynamo.config.specialize_float = True`"));
}

}  // namespace
}  // namespace cl

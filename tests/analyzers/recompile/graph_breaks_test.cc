#include "analyzers/recompile/graph_breaks.h"

#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/report_words.h"
#include "tests/analyzers/torch_trace_scan.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/import_fixture.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;

// Appends the frame `name` at `file`:`line` to the break's user stack (innermost last).
void AddStackFrame(v1::GraphBreak* gb, const char* file, uint32_t line, const char* name) {
  v1::StackFrame* frame = gb->add_user_stack();
  frame->set_file(file);
  frame->set_line(line);
  frame->set_name(name);
}

// The real torch 2.6 graph-break scene (fixtures/torch_trace/torch-2.6/graph_breaks): four
// dynamo_graph_break_reason artifacts, two of them the same `float(n)` break.
std::vector<std::pair<std::string, std::string>> FixtureBreaks() {
  absl::StatusOr<std::string> text =
      testing::ReadFixture(testing::FixturePath("torch_trace/torch-2.6/graph_breaks/trace.log"));
  EXPECT_TRUE(text.ok()) << text.status();
  std::vector<std::pair<std::string, std::string>> out;  // (compile id, payload)
  if (!text.ok()) return out;
  testing::ScanTorchTrace(*text, {"dynamo_graph_break_reason"},
                          [&](const testing::TraceRecord& record) {
                            out.emplace_back(testing::RecordCompileId(record), record.payload);
                          });
  return out;
}

TEST(ParseGraphBreakTest, ReadsTheTorch26Payloads) {
  const auto breaks = FixtureBreaks();
  ASSERT_THAT(breaks, SizeIs(4));

  ParsedGraphBreak user = ParseGraphBreak(breaks[0].second);
  EXPECT_EQ(user.reason,
            "skip function graph_break in file "
            "/usr/lib/python3/dist-packages/torch/_dynamo/decorators.py");
  EXPECT_EQ(Word(user.category), "user_requested");
  EXPECT_EQ(user.file, "/opt/scenes/breaks2.py");
  EXPECT_EQ(user.line, 10u);
  EXPECT_EQ(user.function, "step");
  EXPECT_FALSE(user.frame_skipped);

  ParsedGraphBreak jump = ParseGraphBreak(breaks[1].second);
  EXPECT_EQ(jump.reason, "Data-dependent jump");
  EXPECT_EQ(Word(jump.category), "data_dependent_branch");
  EXPECT_EQ(jump.line, 11u);
  EXPECT_EQ(jump.function, "torch_dynamo_resume_in_step_at_10");

  ParsedGraphBreak item = ParseGraphBreak(breaks[2].second);
  EXPECT_EQ(item.reason,
            "data dependent operator: aten._local_scalar_dense.default; to enable, set "
            "torch._dynamo.config.capture_scalar_outputs = True");
  EXPECT_EQ(Word(item.category), "scalar_extraction");
  EXPECT_EQ(item.line, 15u);
  EXPECT_THAT(item.remedy, ::testing::HasSubstr("capture_scalar_outputs"));
}

// A call into a function under torch.compiler.disable (torch 2.6's wording, from a sandbox scene
// whose forward logs a statistic through one): the user asked for the break, and the remedy names
// the function. The object's address, new in every run, is dropped, so that a base and a head
// run show the same break and not one fixed and one new.
TEST(ParseGraphBreakTest, ADisabledFunctionIsTheUsersOwnBreak) {
  for (const char* name : {"log_stats", "Model.forward.<locals>.stats"}) {
    const ParsedGraphBreak parsed = ParseGraphBreak(absl::StrCat(
        "Graph break in user code at /w/model.py:16\nReason: Unsupported: call "
        "torch._dynamo.disable() wrapped function <function ",
        name,
        " at 0x7f374737e980>\nUser code traceback:\n  File \"/w/model.py\", line 16, in "
        "forward\n    log_stats(h)\n"));
    EXPECT_EQ(parsed.reason,
              absl::StrCat("call torch._dynamo.disable() wrapped function <function ", name, ">"));
    EXPECT_EQ(Word(parsed.category), "user_requested");
    EXPECT_THAT(parsed.remedy, ::testing::HasSubstr(
                                   absl::StrCat("`", name, "` is under `torch.compiler.disable`")));
  }
}

// Torch 2.6 on a GCN's `torch.sparse.mm` with a COO adjacency (a sandbox scene, the reason
// verbatim): the remedy is the message-passing form that compiles, not a custom op.
TEST(ParseGraphBreakTest, ASparseTensorGetsTheMessagePassingRemedy) {
  const ParsedGraphBreak sparse = ParseGraphBreak(
      "Graph break in user code at /mnt/project/sparse.py:13\nReason: Unsupported: "
      "torch.compile does not support sparse Tensors\n");
  EXPECT_EQ(sparse.reason, "torch.compile does not support sparse Tensors");
  EXPECT_THAT(sparse.remedy, HasSubstr("index_add_"));
  EXPECT_THAT(sparse.remedy, Not(HasSubstr("custom_op")));
}

// Torch 2.6 on `h.register_hook(lambda g: g.clamp(-1, 1))` inside a compiled forward (a sandbox
// scene, verbatim): the remedy moves the gradient change out, since compiled autograd alone made
// that scene's backward fail; not a custom op.
TEST(ParseGraphBreakTest, AnActivationHookNeedsCompiledAutograd) {
  const ParsedGraphBreak hook = ParseGraphBreak(
      "Graph break in user code at /mnt/project/hook.py:9\nReason: Unsupported: Compilation of "
      "intermediate hooks requires compiled autograd\n");
  EXPECT_EQ(hook.reason, "Compilation of intermediate hooks requires compiled autograd");
  EXPECT_THAT(hook.remedy, HasSubstr("A hook on an intermediate tensor"));
  EXPECT_THAT(hook.remedy, HasSubstr("after `backward()`"));
  EXPECT_THAT(hook.remedy, Not(HasSubstr("custom_op")));
}

// Torch 2.6's wording for a clock read and for torch.manual_seed inside a compiled function (a
// sandbox scene, verbatim): the paragraph torch appends to every unsupported builtin is dropped,
// and each gets a remedy that fits it rather than "wrap it as a custom op".
TEST(ParseGraphBreakTest, AClockReadAndASeedGetTheirOwnRemedies) {
  const ParsedGraphBreak clock = ParseGraphBreak(
      "Graph break in user code at /w/m.py:10\nReason: Unsupported: Graph break due to "
      "unsupported builtin time.time. This function is either a Python builtin (e.g. "
      "_warnings.warn) or a third-party C/C++ Python extension (perhaps created with pybind). If "
      "it is a Python builtin, please file an issue on GitHub so the PyTorch team can add support "
      "for it and see the next case for a workaround. If it is a third-party C/C++ Python "
      "extension, please either wrap it into a PyTorch-understood custom operator (see "
      "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html for more details) or, "
      "if it is traceable, use torch.compiler.allow_in_graph.\n");
  EXPECT_EQ(clock.reason, "Graph break due to unsupported builtin time.time.");
  EXPECT_THAT(clock.remedy, ::testing::StartsWith("A clock read"));
  const ParsedGraphBreak seed = ParseGraphBreak(
      "Graph break in user code at /w/m.py:6\nReason: Unsupported: 'skip function manual_seed in "
      "file /usr/lib/python3/dist-packages/torch/_compile.py'\n");
  EXPECT_THAT(seed.remedy, ::testing::HasSubstr("torch keeps `manual_seed` out of compiled code"));
  EXPECT_THAT(seed.remedy, ::testing::HasSubstr("seed once, before the call"));
}

TEST(SummarizeGraphBreaksTest, DeduplicatesTheFixtureByReasonAndUserLine) {
  v1::SessionCapture capture;
  capture.mutable_session()->set_project_root("/opt/scenes");
  for (const auto& [compile_id, payload] : FixtureBreaks()) {
    v1::Compile* compile = capture.add_compiles();
    compile->set_id(compile_id);
    compile->add_graph_breaks()->set_reason(payload);
  }
  PassOptions options;
  PassInput in{capture, nullptr, options};
  ASSERT_OK_AND_ASSIGN(auto summaries, SummarizeGraphBreaks(in));
  ASSERT_EQ(summaries.size(), 3u);
  // The repeated break first.
  EXPECT_EQ(Word(summaries[0].category()), "scalar_extraction");
  EXPECT_EQ(summaries[0].count(), 2u);
  EXPECT_EQ(summaries[0].location().file(), "breaks2.py");
  EXPECT_EQ(summaries[0].location().line(), 15u);
  EXPECT_EQ(summaries[0].frame(), "torch_dynamo_resume_in_step_at_11");
  EXPECT_EQ(Word(summaries[1].category()), "user_requested");
  EXPECT_EQ(summaries[1].location().line(), 10u);
  EXPECT_EQ(summaries[1].frame(), "step");
  EXPECT_EQ(Word(summaries[2].category()), "data_dependent_branch");
  EXPECT_EQ(summaries[2].count(), 1u);
}

// The scene's source (fixtures/torch_trace/torch-2.6/scenes/breaks2.py, the file torch ran as
// /opt/scenes/breaks2.py) in the capture: each break shows its line's text; a break whose source
// the capture lacks shows none.
TEST(SummarizeGraphBreaksTest, ABreakShowsItsSourceLineWhenTheCaptureHasTheSource) {
  v1::SessionCapture capture;
  capture.mutable_session()->set_project_root("/opt/scenes");
  for (const auto& [compile_id, payload] : FixtureBreaks()) {
    v1::Compile* compile = capture.add_compiles();
    compile->set_id(compile_id);
    compile->add_graph_breaks()->set_reason(payload);
  }
  absl::StatusOr<std::string> source =
      testing::ReadFixture(testing::FixturePath("torch_trace/torch-2.6/scenes/breaks2.py"));
  ASSERT_TRUE(source.ok()) << source.status();
  v1::SourceFile* file = capture.add_sources();
  file->set_path("/opt/scenes/breaks2.py");
  file->set_text(*source);
  PassOptions options;
  PassInput in{capture, nullptr, options};
  ASSERT_OK_AND_ASSIGN(auto summaries, SummarizeGraphBreaks(in));
  ASSERT_EQ(summaries.size(), 3u);
  EXPECT_EQ(summaries[0].source_line(), "return z + float(n)");
  EXPECT_EQ(summaries[1].source_line(), "torch._dynamo.graph_break()");

  capture.mutable_sources(0)->set_path("/elsewhere/breaks2.py");
  ASSERT_OK_AND_ASSIGN(summaries, SummarizeGraphBreaks(in));
  EXPECT_EQ(summaries[0].source_line(), "");
}

TEST(SummarizeGraphBreaksTest, CapturedUserStackWinsAndSplitsLines) {
  v1::SessionCapture capture;
  capture.mutable_session()->set_project_root("/w");
  capture.add_frames()->set_name("train_step");
  auto add = [&](uint32_t line) {
    v1::GraphBreak* gb = capture.add_compiles()->add_graph_breaks();
    gb->set_reason("generic_jump TensorVariable()");
    AddStackFrame(gb, "/w/main.py", 3, "main");
    AddStackFrame(gb, "/w/model.py", line, "forward");
  };
  add(40);
  add(40);
  add(41);
  PassOptions options;
  PassInput in{capture, nullptr, options};
  ASSERT_OK_AND_ASSIGN(auto summaries, SummarizeGraphBreaks(in));
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0].reason(), "generic_jump TensorVariable()");
  EXPECT_EQ(summaries[0].count(), 2u);
  EXPECT_EQ(summaries[0].location().file(), "model.py");
  EXPECT_EQ(summaries[0].location().line(), 40u);
  EXPECT_EQ(summaries[0].frame(), "forward");
  EXPECT_EQ(summaries[1].location().line(), 41u);
}

// `.item()` read into a Python `if`: capture_scalar_outputs only moves the break to the branch
// (torch 2.6, checked in the sandbox), so that line is not told to set it; a value kept as a
// number still is.
TEST(SummarizeGraphBreaksTest, AnItemThatDecidesABranchIsNotToldToCaptureScalars) {
  v1::SessionCapture capture;
  capture.mutable_session()->set_project_root("/w");
  for (uint32_t line : {1u, 2u}) {
    v1::GraphBreak* gb = capture.add_compiles()->add_graph_breaks();
    gb->set_reason("Tensor.item");
    AddStackFrame(gb, "/w/model.py", line, "forward");
  }
  v1::SourceFile* file = capture.add_sources();
  file->set_path("/w/model.py");
  file->set_text("scale = x.abs().max().item()\n    if logits.max().item() > 100:\n");
  PassOptions options;
  PassInput in{capture, nullptr, options};
  ASSERT_OK_AND_ASSIGN(auto summaries, SummarizeGraphBreaks(in));
  ASSERT_EQ(summaries.size(), 2u);
  for (const v1::GraphBreakSummary& s : summaries) {
    SCOPED_TRACE(s.source_line());
    EXPECT_EQ(Word(s.category()), "scalar_extraction");
    if (s.location().line() == 1) {
      EXPECT_THAT(s.remedy(), HasSubstr("capture_scalar_outputs = True` (env"));
    } else {
      EXPECT_THAT(s.remedy(), HasSubstr("decides a Python branch on this line"));
      EXPECT_THAT(s.remedy(), HasSubstr("torch.cond"));
    }
  }
}

TEST(SummarizeGraphBreaksTest, SkippedFramesComeFirstAndCancelStops) {
  v1::SessionCapture capture;
  for (int i = 0; i < 3; ++i) capture.add_compiles()->add_graph_breaks()->set_reason("Tensor.item");
  capture.add_compiles()->add_graph_breaks()->set_reason(
      "Graph break: skip: from user code at:\n  File \"/a.py\", line 5, in fn\n    x = f(x)");
  PassOptions options;
  PassInput in{capture, nullptr, options};
  ASSERT_OK_AND_ASSIGN(auto summaries, SummarizeGraphBreaks(in));
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_TRUE(summaries[0].frame_skipped());
  EXPECT_EQ(Word(summaries[0].category()), "frame_skip");
  EXPECT_EQ(summaries[0].location().file(), "/a.py");
  EXPECT_EQ(Word(summaries[1].category()), "scalar_extraction");
  EXPECT_EQ(summaries[1].count(), 3u);

  std::atomic<bool> cancelled{true};
  PassInput cancelled_in{capture, nullptr, options, &cancelled};
  EXPECT_THAT(SummarizeGraphBreaks(cancelled_in),
              cl::testing::StatusIs(absl::StatusCode::kCancelled, ::testing::_));
}

struct Message {
  const char* name;
  const char* text;
  const char* reason;
  const char* category;
  const char* gb_id;
  bool frame_skipped;
};

void PrintTo(const Message& m, std::ostream* os) { *os << m.name; }

class GraphBreakMessageTest : public ::testing::TestWithParam<Message> {};

TEST_P(GraphBreakMessageTest, Categorises) {
  const Message& m = GetParam();
  ParsedGraphBreak parsed = ParseGraphBreak(m.text);
  EXPECT_EQ(parsed.reason, m.reason);
  EXPECT_EQ(Word(parsed.category), m.category);
  EXPECT_EQ(parsed.gb_id, m.gb_id);
  EXPECT_EQ(parsed.frame_skipped, m.frame_skipped);
  EXPECT_FALSE(parsed.remedy.empty());
}

// Structured (unimplemented_v2, §2.1) messages and the legacy terse reasons.
const Message kMessages[] = {
    {"structured data-dependent",
     "Data-dependent branching\n"
     "  Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). Dynamo "
     "does not support tracing dynamic control flow.\n"
     "  Hint: This graph break is fundamental - it is unlikely that Dynamo will ever be able to "
     "trace through your code. Consider finding a workaround.\n"
     "  Hint: Use `torch.cond` to express dynamic control flow.\n\n"
     "  Developer debug context: attempted to jump with TensorVariable()\n\n"
     " For more details about this graph break, please visit: "
     "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html",
     "Data-dependent branching", "data_dependent_branch", "GB0170", false},
    {"structured item, vercel link",
     "Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
     "  Explanation: Dynamo does not support tracing `Tensor.item()` with "
     "config.capture_scalar_outputs=False.\n"
     "  Hint: Set `torch._dynamo.config.capture_scalar_outputs = True`.\n\n"
     "  Developer debug context: call_method TensorVariable() item () {}\n\n"
     " For more details about this graph break, please visit: "
     "https://compile-graph-break-site.vercel.app/gb/GB0124",
     "Unsupported Tensor.item() call with capture_scalar_outputs=False", "scalar_extraction",
     "GB0124", false},
    {"structured print",
     "Failed to trace builtin operator\n"
     "  Explanation: Dynamo does not know how to trace builtin operator `print` with argument "
     "types ['str'] (has_kwargs False)\n"
     "  Hint: Avoid calling builtin `print` with argument types ['str'].\n\n"
     "  Developer debug context: builtin print [<class "
     "'torch._dynamo.variables.constant.ConstantVariable'>] False\n",
     "Failed to trace builtin operator", "logging", "", false},
    {"structured skipped C function, registry id only",
     "Attempted to call function marked as skipped\n"
     "  Explanation: Dynamo does not know how to trace the builtin `mylib.fast_op.` This function "
     "is either a Python builtin or a third-party C/C++ Python extension.\n\n"
     "  Developer debug context: module: mylib, qualname: fast_op, skip reason: <missing "
     "reason>\n\n"
     " For more details about this graph break, please visit: "
     "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html",
     "Attempted to call function marked as skipped", "unsupported_call", "GB0007", false},
    {"structured recompile limit, fullgraph",
     "torch._dynamo.exc.Unsupported: Dynamo recompile limit exceeded\n"
     "  Explanation: Dynamo attempted to recompile the code object too many times, exceeding the "
     "recompile_limit cache size limit (currently set to 8).\n\n"
     "  Developer debug context: Limit type: recompile_limit\n\n"
     "from user code:\n"
     "   File \"/w/model.py\", line 12, in forward\n"
     "    return x + n",
     "Dynamo recompile limit exceeded", "recompile_limit", "", false},
    {"graph_breaks log, user-requested",
     "Graph break (user stack suppressed due to duplicate graph break) in user code at /a.py:7\n"
     "Graph Break Reason: Call to `torch._dynamo.graph_break()`\n"
     "  Explanation: User-inserted graph break. Message: None\n"
     "  Hint: Remove the `torch._dynamo.graph_break()` call.\n",
     "Call to `torch._dynamo.graph_break()`", "user_requested", "", false},
    {"skip with cause",
     "Graph break: torch.compile cannot properly resume from this graph break, which results in a "
     "skip.\n"
     "torch.compile will skip tracing the frame fn (/a.py line 3) and fall back to eager.\n"
     "The graph break occurred in the following user code:\n"
     "  File \"/a.py\", line 5, in fn\n"
     "    with ctx():\n\n"
     "Graph Break Reason: Unsupported context manager\n"
     "  Explanation: Dynamo does not know how to enter a `MyCtx` context manager.\n",
     "Unsupported context manager", "context_manager", "", true},
    {"legacy jump", "generic_jump TensorVariable()", "generic_jump TensorVariable()",
     "data_dependent_branch", "", false},
    {"legacy print", "call_function BuiltinVariable(print) [ConstantVariable(str)] {}",
     "call_function BuiltinVariable(print) [ConstantVariable(str)] {}", "logging", "", false},
    {"legacy nonzero", "dynamic shape operator: aten.nonzero.default",
     "dynamic shape operator: aten.nonzero.default", "dynamic_output_shape", "", false},
    {"legacy skipfiles", "inline in skipfiles: Foo.bar | helper /usr/lib/python3/x.py",
     "inline in skipfiles: Foo.bar | helper /usr/lib/python3/x.py", "unsupported_call", "", false},
    {"legacy non-Tensor",
     "torch.* op returned non-Tensor bool call_function <built-in method is_floating_point>",
     "torch.* op returned non-Tensor bool call_function <built-in method is_floating_point>",
     "unsupported_call", "", false},
    {"2.3 reason line",
     "Graph break in user code at /w/a.py:9\nReason: Unsupported: Tensor.item\nUser code "
     "traceback:\n  File \"/w/a.py\", line 9, in f\n    return x.item()",
     "Tensor.item", "scalar_extraction", "", false},
    {"item helper",
     "Graph break from `Tensor.item()`, consider setting:\n"
     "    torch._dynamo.config.capture_scalar_outputs = True\nor:\n"
     "    env TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1\nto include these operations in the captured "
     "graph.",
     "Graph break from `Tensor.item()`, consider setting:", "scalar_extraction", "", false},
    // torch 2.6 on `if mask is not None and mask.any():` in a sandbox encoder (verbatim).
    {"dynamic control flow",
     "Graph break in user code at /mnt/project/hfstyle.py:39\nReason: Unsupported: Dynamic "
     "control flow is not supported at the moment. Please use "
     "functorch.experimental.control_flow.cond to explicitly capture the control flow. For more "
     "information about this error, see: "
     "https://pytorch.org/docs/main/generated/exportdb/index.html#cond-operands",
     "Dynamic control flow is not supported at the moment. Please use "
     "functorch.experimental.control_flow.cond to explicitly capture the control flow.",
     "data_dependent_branch", "", false},
    // torch 2.6 on `if rows.numel() == 0:` after `torch.where(idx == e)` under
    // capture_dynamic_output_shape_ops (verbatim, less the ATTENTION paragraph): the advice torch
    // puts first is not the reason.
    {"unbacked guard",
     "Graph break in user code at /mnt/project/moe.py:28\nReason: Unsupported: Consider "
     "annotating your code using torch._check*(). Could not guard on data-dependent expression "
     "Eq(u0, 0) (unhinted: Eq(u0, 0)).  (Size-like symbols: u0)",
     "Could not guard on data-dependent expression Eq(u0, 0) (unhinted: Eq(u0, 0)).  (Size-like "
     "symbols: u0)",
     "data_dependent_branch", "", false},
    // torch 2.6's legacy print message names Dynamo's variable classes of the arguments.
    {"builtin print",
     "builtin: print [<class 'torch._dynamo.variables.constant.ConstantVariable'>, <class "
     "'torch._dynamo.variables.lists.SizeVariable'>] False",
     "builtin: print", "logging", "", false},
    {"fast path operator",
     "unsupported operator: aten._transformer_encoder_layer_fwd.default (see "
     "https://docs.google.com/document/d/1GgvOe7C8_NVOMLOCwDaYV1mXXyHMXY7ExoewHqooxrs/"
     "edit#heading=h.64r4npvq0w0 for how to fix)",
     "unsupported operator: aten._transformer_encoder_layer_fwd.default", "unsupported_call", "",
     false},
    {"garbage", "zxcv qwerty", "zxcv qwerty", "other", "", false},
};
INSTANTIATE_TEST_SUITE_P(Messages, GraphBreakMessageTest, ::testing::ValuesIn(kMessages));

// The graph-break summaries of a fixture log, imported as cl-client imports it.
absl::StatusOr<std::vector<v1::GraphBreakSummary>> FixtureBreaks(absl::string_view log) {
  const v1::SessionCapture capture = testing::ImportFixtureLog(log);
  PassOptions options;
  PassInput in{capture, nullptr, options};
  return SummarizeGraphBreaks(in);
}

// A compile that broke and left no guards and no graph behind (torch's metrics say so) was
// skipped whole: its break is a summary of its own, marked, whose remedy names the frame; the same
// break where the frame still compiled stays apart. Without the metrics, or with metrics that lack
// those fields, nothing is concluded.
TEST(SummarizeGraphBreaksTest, AFrameThatCompiledNothingForItsBreakWasSkipped) {
  v1::SessionCapture capture;
  v1::Frame* encoder = capture.add_frames();
  encoder->set_id(0);
  encoder->set_name("forward");
  encoder->set_file("/m/encoder.py");
  encoder->set_line(65);
  const auto add = [&](uint32_t frame, bool compiled, bool metrics) {
    v1::Compile* c = capture.add_compiles();
    c->set_frame_id(frame);
    c->set_status(v1::Compile::OK);
    v1::GraphBreak* gb = c->add_graph_breaks();
    gb->set_reason(
        "Graph break in user code at /m/encoder.py:39\nReason: Unsupported: Dynamic "
        "control flow is not supported at the moment.");
    AddStackFrame(gb, "/m/encoder.py", 39, "forward");
    auto& fields = *c->mutable_metrics()->mutable_fields();
    if (metrics) {
      fields["guard_count"].set_null_value(google::protobuf::NULL_VALUE);
      fields["graph_op_count"].set_null_value(google::protobuf::NULL_VALUE);
    } else {
      fields["co_name"].set_string_value("forward");  // metrics of a torch without those fields
    }
    if (compiled) {
      c->set_guard_count(36);
      c->add_graph_ids("g");
      fields["guard_count"].set_number_value(36);
    }
  };
  add(0, /*compiled=*/false, /*metrics=*/true);
  add(2, /*compiled=*/true, /*metrics=*/true);
  add(3, /*compiled=*/false, /*metrics=*/false);
  PassOptions options;
  PassInput in{capture, nullptr, options};
  ASSERT_OK_AND_ASSIGN(auto summaries, SummarizeGraphBreaks(in));
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_TRUE(summaries[0].frame_skipped());
  EXPECT_EQ(summaries[0].count(), 1u);
  EXPECT_THAT(summaries[0].remedy(),
              ::testing::StartsWith("Torch compiled nothing for `forward` (/m/encoder.py:65) and "
                                    "runs it eagerly on every call"));
  EXPECT_FALSE(summaries[1].frame_skipped());
  EXPECT_EQ(summaries[1].count(), 2u);
  EXPECT_EQ(summaries[1].location().line(), 39u);
}

// fixtures/torch_trace/torch-2.6/loop_break: the `mask.any()` branch breaks inside
// Encoder.forward's `for layer in self.layers:` loop, and torch compiled nothing for
// Encoder.forward; the same break in Layer.forward and Attention.forward, compiled as frames of
// their own, left them compiled.
TEST(SummarizeGraphBreaksTest, ABreakInsideALoopSkippedTheEncodersForward) {
  ASSERT_OK_AND_ASSIGN(auto summaries, FixtureBreaks("torch_trace/torch-2.6/loop_break/trace.log"));
  ASSERT_EQ(summaries.size(), 3u);
  EXPECT_TRUE(summaries[0].frame_skipped());
  EXPECT_EQ(Word(summaries[0].category()), "data_dependent_branch");
  EXPECT_EQ(summaries[0].location().line(), 27u);
  EXPECT_THAT(summaries[0].remedy(),
              ::testing::StartsWith(
                  "Torch compiled nothing for `forward` (/mnt/project/loop_break.py:52)"));
  for (size_t i = 1; i < summaries.size(); ++i) {
    EXPECT_FALSE(summaries[i].frame_skipped()) << i;
    EXPECT_EQ(summaries[i].location().line(), 27u) << i;
    EXPECT_EQ(Word(summaries[i].category()), "data_dependent_branch") << i;
  }
}

// fixtures/torch_trace/torch-2.6/health-head: `int(self.pos)` breaks Decoder.forward, and the
// resume function after it breaks again on a block's `.item()` inside the `for block in ...`
// loop: torch compiled nothing for the resume function (1/0) and ran it eagerly; each block
// still compiled as a frame of its own, with the same break.
TEST(SummarizeGraphBreaksTest, TheHealthScenesBreakInALoopSkippedItsResumeFunction) {
  ASSERT_OK_AND_ASSIGN(auto summaries,
                       FixtureBreaks("torch_trace/torch-2.6/health-head/trace.log"));
  std::vector<std::string> skipped;
  for (const v1::GraphBreakSummary& s : summaries) {
    if (s.frame_skipped())
      skipped.push_back(absl::StrCat(s.reason(), " at ", s.location().line(), " ×", s.count()));
  }
  EXPECT_THAT(skipped, ::testing::ElementsAre("Tensor.item at 39 ×1"));
  ASSERT_FALSE(summaries.empty());
  EXPECT_THAT(
      summaries[0].remedy(),
      ::testing::HasSubstr("Torch compiled nothing for `torch_dynamo_resume_in_forward_at_54`"));
}

// fixtures/torch_trace/torch-2.6/break_families: one compiled function per break family torch
// 2.6 emits (scenes/breaks_all.py). Each break is filed under its family, by what torch said:
// sdp_kernel's `_GeneratorContextManager` is a context manager, not a generator; zlib.crc32 is an
// unsupported call although torch's explanation cites `_warnings.warn` as an example; a skipped
// frame's cause is the exception that ends torch's traceback.
TEST(SummarizeGraphBreaksTest, EveryBreakFamilyOfARealSceneIsItsOwn) {
  ASSERT_OK_AND_ASSIGN(auto summaries,
                       FixtureBreaks("torch_trace/torch-2.6/break_families/trace.log"));
  std::map<std::string, std::string> by_function;  // the first break of each function
  for (const v1::GraphBreakSummary& s : summaries)
    by_function.emplace(s.frame(), Word(s.category()));
  const std::map<std::string, std::string> expected = {{"ctx_sdp_kernel", "context_manager"},
                                                       {"ctx_suppress", "context_manager"},
                                                       {"data_branch", "data_dependent_branch"},
                                                       {"item_call", "scalar_extraction"},
                                                       {"print_call", "logging"},
                                                       {"logging_call", "logging"},
                                                       {"warnings_call", "logging"},
                                                       {"c_builtin", "unsupported_call"},
                                                       {"generator_arg", "generator"},
                                                       {"explicit_break", "user_requested"},
                                                       {"exception_raised", "exception"},
                                                       {"nonzero_shape", "dynamic_output_shape"},
                                                       {"deepcopy_call", "unsupported_call"},
                                                       {"break_in_try", "unsupported_call"}};
  for (const auto& [function, category] : expected) {
    ASSERT_TRUE(by_function.contains(function)) << function;
    EXPECT_EQ(by_function.at(function), category) << function;
  }
  int logger_breaks = 0;
  for (const v1::GraphBreakSummary& s : summaries) {
    EXPECT_NE(Word(s.category()), "other") << s.reason();
    if (s.frame() == "ctx_sdp_kernel") {
      EXPECT_THAT(s.remedy(), ::testing::HasSubstr("torch.nn.attention.sdpa_kernel"));
    }
    // A logger's methods have their own switch (the break in logging_call's resume function,
    // once getLogger() broke first); print and warnings.warn can be reordered.
    if (absl::StrContains(s.reason(), "Logger not supported")) {
      ++logger_breaks;
      EXPECT_THAT(s.remedy(), ::testing::HasSubstr("ignore_logger_methods = {logging.Logger."));
      EXPECT_THAT(s.remedy(), ::testing::HasSubstr("does not apply to logger methods"));
    }
    if (s.frame() == "logging_call") {
      EXPECT_THAT(s.reason(), ::testing::HasSubstr("getLogger"));
      EXPECT_THAT(s.remedy(), ::testing::HasSubstr("logging.getLogger(__name__)"));
    }
    if (s.frame() == "print_call" || s.frame() == "warnings_call") {
      EXPECT_THAT(s.remedy(), ::testing::HasSubstr("reorderable_logging_functions"));
      EXPECT_THAT(s.remedy(), ::testing::Not(::testing::HasSubstr("ignore_logger_methods")));
    }
    if (s.frame_skipped() && s.location().line() == 27) {
      EXPECT_EQ(s.reason(), "BEFORE_WITH UserDefinedObjectVariable(suppress)");
    }
  }
  EXPECT_EQ(logger_breaks, 1);
}

// fixtures/torch_trace/torch-2.6/ddp_wrapper: torch.compile(DDP(model)) breaks inside DDP's
// _pre_forward, and no frame of the break's stack is the user's: it is filed at the user's line
// that called the compiled wrapper (the compile's stack), with DDP's own remedy.
TEST(SummarizeGraphBreaksTest, ABreakInsideACompiledDdpWrapperIsFiledAtTheCall) {
  ASSERT_OK_AND_ASSIGN(auto summaries,
                       FixtureBreaks("torch_trace/torch-2.6/ddp_wrapper/trace.log"));
  ASSERT_EQ(summaries.size(), 1u);
  const v1::GraphBreakSummary& s = summaries[0];
  EXPECT_EQ(s.location().file(), "/mnt/project/ddp_wrapper.py");
  EXPECT_EQ(s.location().line(), 30u);
  EXPECT_EQ(s.frame(), "main");
  EXPECT_THAT(s.remedy(), ::testing::HasSubstr("inside `torch/nn/parallel/distributed.py:1511`"));
  EXPECT_THAT(s.remedy(), ::testing::HasSubstr("`DDP(torch.compile(model))`"));
}

// A graph_break() another library calls on purpose is not the optimizer's: the remedy names the
// library's file from its package on and does not speak of optimizer steps.
TEST(SummarizeGraphBreaksTest, ABreakALibraryAsksForIsNotCalledTheOptimizers) {
  v1::SessionCapture capture;
  capture.mutable_session()->set_project_root("/w");
  v1::GraphBreak* gb = capture.add_compiles()->add_graph_breaks();
  gb->set_reason(
      "skip function graph_break in file /usr/lib/python3/dist-packages/torch/_dynamo/"
      "decorators.py");
  AddStackFrame(gb, "/w/model.py", 12, "forward");
  AddStackFrame(gb, "/venv/lib/python3.11/site-packages/somelib/layers.py", 88, "call");
  PassOptions options;
  PassInput in{capture, nullptr, options};
  ASSERT_OK_AND_ASSIGN(auto summaries, SummarizeGraphBreaks(in));
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].location().file(), "model.py");
  EXPECT_THAT(summaries[0].remedy(),
              ::testing::HasSubstr("The break is inside `somelib/layers.py:88`, reached through "
                                   "`call`, not in your code"));
  EXPECT_THAT(summaries[0].remedy(), ::testing::HasSubstr("`torch._dynamo.graph_break()`"));
  EXPECT_THAT(summaries[0].remedy(), ::testing::Not(::testing::HasSubstr("optimizer")));
}

// torch.nn.utils.clip_grad_norm_ in a compiled step (a sandbox scene, torch 2.6's stack and
// reason): the break is deep in torch's foreach grouping, reached through clip_grad_norm_ past its
// decorator wrappers, and the remedy names that call, not a custom op.
TEST(SummarizeGraphBreaksTest, ABreakDeepInsideALibraryNamesTheCallThatReachedIt) {
  v1::SessionCapture capture;
  v1::GraphBreak* gb = capture.add_compiles()->add_graph_breaks();
  gb->set_reason(
      "torch.* op returned non-Tensor dict call_function <built-in method "
      "_group_tensors_by_device_and_dtype of PyCapsule object at 0x7f8199f7cef0>");
  const std::string torch = "/usr/lib/python3/dist-packages/torch/";
  AddStackFrame(gb, "/w/train.py", 17, "opt_step");
  AddStackFrame(gb, (torch + "nn/utils/clip_grad.py").c_str(), 34, "_no_grad_wrapper");
  AddStackFrame(gb, (torch + "nn/utils/clip_grad.py").c_str(), 215, "clip_grad_norm_");
  AddStackFrame(gb, (torch + "nn/utils/clip_grad.py").c_str(), 34, "_no_grad_wrapper");
  AddStackFrame(gb, (torch + "nn/utils/clip_grad.py").c_str(), 78, "_get_total_norm");
  AddStackFrame(gb, (torch + "utils/_contextlib.py").c_str(), 116, "decorate_context");
  AddStackFrame(gb, (torch + "utils/_foreach_utils.py").c_str(), 37,
                "_group_tensors_by_device_and_dtype");
  PassOptions options;
  PassInput in{capture, nullptr, options};
  ASSERT_OK_AND_ASSIGN(auto summaries, SummarizeGraphBreaks(in));
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].location().line(), 17u);
  EXPECT_EQ(summaries[0].remedy(),
            "The break is inside `torch/utils/_foreach_utils.py:37`, reached through "
            "`clip_grad_norm_`, not in your code: Dynamo cannot trace that call here. Call "
            "`clip_grad_norm_` outside the compiled function (before or after the compiled "
            "call), or check whether a newer torch traces it.");
}

// fixtures/torch_trace/torch-2.6/adamw_step: a compiled training step with AdamW. The optimizer's
// own graph_break() (torch/optim/optimizer.py:90) is filed at the user's line that called into it
// and says it is inside torch (the package's path, not the machine's), why torch breaks there, and
// when compiling the step on its own helps, with no "remove it"; backward() and zero_grad() have
// their own remedies, and each break is counted once (attempt 0's record and attempt 1's restart
// reason are one break).
TEST(SummarizeGraphBreaksTest, ABreakInsideTorchIsFiledAtTheUsersLine) {
  ASSERT_OK_AND_ASSIGN(auto summaries, FixtureBreaks("torch_trace/torch-2.6/adamw_step/trace.log"));
  int in_torch = 0, backward = 0;
  for (const v1::GraphBreakSummary& s : summaries) {
    EXPECT_THAT(s.location().file(), ::testing::Not(::testing::HasSubstr("dist-packages")));
    if (absl::StrContains(s.remedy(), "The break is inside `")) {
      ++in_torch;
      EXPECT_THAT(s.remedy(), ::testing::HasSubstr("inside `torch/optim/optimizer.py:90`"));
      EXPECT_THAT(s.remedy(), ::testing::HasSubstr("pytorch/pytorch#104053"));
      EXPECT_THAT(s.remedy(), ::testing::HasSubstr("`torch.compile(opt.step)`"));
      EXPECT_THAT(s.remedy(), ::testing::Not(::testing::HasSubstr("dist-packages")));
      EXPECT_THAT(s.remedy(), ::testing::Not(::testing::HasSubstr("remove it")));
    }
    if (s.reason() == "Tensor.backward") {
      backward += s.count();
      EXPECT_EQ(s.location().line(), 32u);
      EXPECT_THAT(s.remedy(), ::testing::HasSubstr("compiled autograd"));
    }
  }
  EXPECT_EQ(in_torch, 2);
  EXPECT_EQ(backward, 1);
  ASSERT_FALSE(summaries.empty());
  bool at_user_line = false;
  for (const v1::GraphBreakSummary& s : summaries) {
    at_user_line = at_user_line ||
                   (absl::StrContains(s.remedy(), "The break is inside `") &&
                    s.location().file() == "/mnt/project/adamw.py" && s.location().line() == 33u);
  }
  EXPECT_TRUE(at_user_line);
}

// fixtures/torch_trace/torch-2.6/lr_schedule: the compiled-optimizer recipe's pattern (a compiled
// function that only calls opt.step()). The break at the call says it is the pattern's and when it
// matters, not to wrap the call as a custom op; `_use_grad`'s break inside torch stays explained.
TEST(SummarizeGraphBreaksTest, OptStepInACompiledFunctionIsTheRecipesPattern) {
  ASSERT_OK_AND_ASSIGN(auto summaries,
                       FixtureBreaks("torch_trace/torch-2.6/lr_schedule/trace.log"));
  ASSERT_EQ(summaries.size(), 2u);
  const v1::GraphBreakSummary& at_call = summaries[0];
  EXPECT_EQ(at_call.reason(), "call_method OptimizerVariable(AdamW) step [] {}");
  EXPECT_EQ(at_call.location().file(), "/mnt/project/lr_schedule.py");
  EXPECT_EQ(at_call.location().line(), 20u);
  EXPECT_THAT(at_call.remedy(), ::testing::HasSubstr("compiled-optimizer recipe"));
  EXPECT_THAT(at_call.remedy(), ::testing::HasSubstr("Expected where the function only steps"));
  EXPECT_THAT(at_call.remedy(), ::testing::Not(::testing::HasSubstr("custom_op")));
  EXPECT_THAT(summaries[1].remedy(),
              ::testing::HasSubstr("The break is inside `torch/optim/optimizer.py:90`"));
}

// fixtures/torch_trace/torch-2.6/data_dependent (scenes/data_dependent.py): a mixture-of-experts
// dispatch that picks each expert's rows with one-argument `torch.where` breaks on `nonzero`, and
// the remedy says that call is `nonzero` (it used to offer `torch.where` as the way out); under
// capture_dynamic_output_shape_ops the `if rows.numel() == 0` check on the unbacked size breaks
// next, a data-dependent branch whose remedy is to drop the check or `torch._check`, not a custom
// op.
TEST(SummarizeGraphBreaksTest, DataDependentSizesInAMixtureOfExpertsDispatch) {
  ASSERT_OK_AND_ASSIGN(auto summaries,
                       FixtureBreaks("torch_trace/torch-2.6/data_dependent/trace.log"));
  int nonzero = 0, unbacked = 0;
  for (const v1::GraphBreakSummary& s : summaries) {
    SCOPED_TRACE(s.reason());
    EXPECT_EQ(s.location().file(), "/mnt/project/data_dependent.py");
    if (s.category() == v1::GraphBreakCategory::DYNAMIC_OUTPUT_SHAPE) {
      ++nonzero;
      EXPECT_EQ(s.location().line(), 34u);
      EXPECT_THAT(s.remedy(), HasSubstr("one-argument `torch.where(cond)` (which is `nonzero`)"));
      EXPECT_THAT(s.remedy(), HasSubstr("a Python `if` on it"));
      EXPECT_THAT(s.remedy(), HasSubstr("`F.cross_entropy(..., ignore_index=-100)`"));
    } else {
      ++unbacked;
      EXPECT_EQ(s.category(), v1::GraphBreakCategory::DATA_DEPENDENT_BRANCH);
      EXPECT_EQ(s.location().line(), 35u);
      EXPECT_THAT(s.reason(), StartsWith("Could not guard on data-dependent expression Eq(u0, 0)"));
      EXPECT_THAT(s.remedy(), HasSubstr("`torch._check_is_size(n)`"));
      EXPECT_THAT(s.remedy(), Not(HasSubstr("custom_op")));
    }
  }
  // The first `route` frame breaks in its expert loop (skipped whole), its resume does not.
  EXPECT_EQ(nonzero, 2);
  EXPECT_EQ(unbacked, 1);
}

// fixtures/torch_trace/torch-2.6/module_habits (scenes/module_habits.py): a text encoder in eval
// under no_grad, called with a second length, cannot trace nn.TransformerEncoderLayer's fused fast
// path; the remedy turns the fast path off, not "call the `forward` outside the compiled function"
// (a library break's generic remedy). A debug print's reason is the builtin's name, without
// Dynamo's variable classes.
TEST(SummarizeGraphBreaksTest, TheTransformerFastPathAndADebugPrint) {
  ASSERT_OK_AND_ASSIGN(auto summaries,
                       FixtureBreaks("torch_trace/torch-2.6/module_habits/trace.log"));
  std::map<std::string, const v1::GraphBreakSummary*> by_reason;
  for (const v1::GraphBreakSummary& s : summaries) by_reason[s.reason()] = &s;
  ASSERT_THAT(by_reason, SizeIs(2));
  const auto fast =
      by_reason.find("unsupported operator: aten._transformer_encoder_layer_fwd.default");
  ASSERT_NE(fast, by_reason.end());
  EXPECT_EQ(fast->second->location().file(), "/mnt/project/module_habits.py");
  EXPECT_EQ(fast->second->location().line(), 27u);
  EXPECT_THAT(fast->second->remedy(),
              HasSubstr("reached through the `forward` of `torch/nn/modules/transformer.py`"));
  EXPECT_THAT(fast->second->remedy(),
              HasSubstr("`torch.backends.mha.set_fastpath_enabled(False)`"));
  EXPECT_THAT(fast->second->remedy(), Not(HasSubstr("outside the compiled function")));
  const auto print = by_reason.find("builtin: print");
  ASSERT_NE(print, by_reason.end());
  EXPECT_EQ(print->second->category(), v1::GraphBreakCategory::LOGGING);
  EXPECT_EQ(print->second->location().line(), 53u);
}

// fixtures/torch_trace/torch-2.6/training_habits (scenes/training_habits.py): an nn.LSTM (torch
// breaks on RNNs on purpose: allow_rnn), a torch.Generator (an RNG, not a Python generator, whose
// remedy would be about iterators), and a WGAN-GP gradient penalty's requires_grad_() and
// autograd.grad (not custom ops: the penalty stays eager, there is no double backward).
TEST(SummarizeGraphBreaksTest, TrainingHabitsTorchDoesNotTrace) {
  ASSERT_OK_AND_ASSIGN(auto summaries,
                       FixtureBreaks("torch_trace/torch-2.6/training_habits/trace.log"));
  ASSERT_THAT(summaries, SizeIs(4));
  std::map<std::string, const v1::GraphBreakSummary*> by_line;
  for (const v1::GraphBreakSummary& s : summaries) {
    EXPECT_EQ(s.location().file(), "/mnt/project/training_habits.py");
    EXPECT_THAT(s.remedy(), Not(HasSubstr("custom_op"))) << s.reason();
    by_line[absl::StrCat(s.location().line())] = &s;
  }
  ASSERT_THAT(by_line, SizeIs(4));
  EXPECT_EQ(by_line["27"]->category(), v1::GraphBreakCategory::NN_MODULE);
  EXPECT_THAT(by_line["27"]->remedy(), HasSubstr("`torch._dynamo.config.allow_rnn = True`"));
  // allow_rnn is no sure remedy: torch 2.6's compiled nn.LSTM failed at run time where it was
  // checked, so the remedy leads with compiling around the RNN and says to compare.
  EXPECT_THAT(by_line["27"]->remedy(), HasSubstr("compile the code before and after it"));
  EXPECT_THAT(by_line["27"]->remedy(), HasSubstr("compare with eager before keeping it"));
  EXPECT_EQ(by_line["54"]->category(), v1::GraphBreakCategory::UNSUPPORTED_CALL);
  EXPECT_THAT(by_line["54"]->remedy(), HasSubstr("A `torch.Generator` handed to a random op"));
  EXPECT_THAT(by_line["67"]->remedy(), HasSubstr("`requires_grad_()` inside a compiled function"));
  EXPECT_THAT(by_line["68"]->remedy(), HasSubstr("AOTAutograd has no double backward"));
}

// fixtures/torch_trace/torch-2.6/rnn_lm (scenes/rnn_lm.py): torch 2.6 breaks on an nn.LSTM read as
// `self.rnn` with a restart whose reason is only "Unknown fail_and_restart_analysis", and no
// graph-break record. The break says what that restart means (the rest of forward ran eagerly,
// with no resume function) and the RNN cause, not "run with TORCH_LOGS=graph_breaks", which
// prints nothing for it.
TEST(SummarizeGraphBreaksTest, ARestartWithNoReasonSaysTheRestOfTheFrameRanEagerly) {
  ASSERT_OK_AND_ASSIGN(auto summaries, FixtureBreaks("torch_trace/torch-2.6/rnn_lm/trace.log"));
  ASSERT_THAT(summaries, SizeIs(1));
  const v1::GraphBreakSummary& s = summaries[0];
  EXPECT_EQ(s.reason(), "Unknown fail_and_restart_analysis");
  EXPECT_EQ(s.count(), 1u);
  EXPECT_EQ(s.frame(), "forward");
  EXPECT_THAT(s.remedy(), HasSubstr("runs the rest of the frame eagerly, uncompiled"));
  EXPECT_THAT(s.remedy(), HasSubstr("no resume function"));
  EXPECT_THAT(s.remedy(), HasSubstr("`nn.LSTM`"));
  EXPECT_THAT(s.remedy(), HasSubstr("step triggered compile"));
  EXPECT_THAT(s.remedy(), Not(HasSubstr("TORCH_LOGS=graph_breaks")));
}

// fixtures/torch_trace/torch-2.6/amp_step (scenes/amp_step.py): a whole AMP step compiled; torch
// 2.6 does not trace into GradScaler (its file is on the skip list), so each of its four calls
// breaks the graph. The remedy is to call them outside, as the AMP recipe does (checked when the
// fixture was recorded), not to wrap torch's method as a custom op.
TEST(SummarizeGraphBreaksTest, TorchsOwnSkippedMethodsAreCalledOutsideNotWrapped) {
  ASSERT_OK_AND_ASSIGN(auto summaries, FixtureBreaks("torch_trace/torch-2.6/amp_step/trace.log"));
  EXPECT_THAT(summaries, SizeIs(8));
  int scaler = 0;
  for (const v1::GraphBreakSummary& s : summaries) {
    EXPECT_THAT(s.remedy(), Not(HasSubstr("custom_op"))) << s.reason();
    if (!absl::StrContains(s.reason(), "GradScaler.")) continue;
    ++scaler;
    EXPECT_THAT(s.remedy(), HasSubstr("Dynamo does not trace into torch's `GradScaler."));
    EXPECT_THAT(s.remedy(), HasSubstr("`torch/amp/grad_scaler.py`, on its skip list"));
    EXPECT_THAT(s.remedy(), HasSubstr("`scaler.scale(loss).backward()`"));
  }
  EXPECT_EQ(scaler, 4);
  // A function of another library's on the skip list keeps the generic remedy.
  EXPECT_THAT(ParseGraphBreak("inline in skipfiles: Foo.bar | helper /usr/lib/python3/x.py").remedy,
              HasSubstr("custom_op"));
}

// The same reason, as torch writes it in compilation_metrics' restart_reasons, and quoted.
TEST(ParseGraphBreakTest, UnknownRestartHasItsOwnRemedy) {
  for (absl::string_view reason :
       {"Unknown fail_and_restart_analysis", "'Unknown fail_and_restart_analysis'"}) {
    const ParsedGraphBreak parsed = ParseGraphBreak(reason);
    EXPECT_TRUE(parsed.specific) << reason;
    EXPECT_THAT(parsed.remedy, HasSubstr("no resume function")) << reason;
  }
  EXPECT_FALSE(ParseGraphBreak("Unknown fail_and_restart_analysis of a Tensor.item call").specific);
}

// fixtures/torch_trace/torch-2.6/python_state: fairseq-style LayerDrop decides with
// `random.random()` inside the layer loop; the remedy is the decision outside or DropPath's tensor
// op (checked in the sandbox to compile as one graph), not a custom op.
// fixtures/torch_trace/torch-2.6/inference_habits: torch 2.6 logs a frame it gave up on as
// "WON'T CONVERT forward … line 23" followed by torch's traceback; the cause is the exception that
// ends it and the user line of its "Original traceback" (`torch.split(e, lengths.tolist())`). A
// quantize_dynamic Linear breaks inside torch.ao, whose remedy is a quantization flow that
// compiles (PT2E, checked in the sandbox: no break), not a custom op.
TEST(SummarizeGraphBreaksTest, InferenceHabitsAFrameTorchWouldNotConvertAndQuantizedModules) {
  ASSERT_OK_AND_ASSIGN(auto summaries,
                       FixtureBreaks("torch_trace/torch-2.6/inference_habits/trace.log"));
  ASSERT_THAT(summaries, SizeIs(2));
  const v1::GraphBreakSummary& split = summaries[0];
  EXPECT_EQ(split.reason(), "DataDependentOutputException: aten._local_scalar_dense.default");
  EXPECT_EQ(split.location().line(), 25u);
  EXPECT_EQ(split.count(), 2u);
  EXPECT_TRUE(split.frame_skipped());
  EXPECT_EQ(Word(split.category()), "scalar_extraction");
  EXPECT_THAT(split.remedy(), HasSubstr("capture_scalar_outputs = True"));
  const v1::GraphBreakSummary& quantized = summaries[1];
  EXPECT_EQ(quantized.location().line(), 40u);
  EXPECT_THAT(quantized.remedy(),
              HasSubstr("inside `torch/ao/nn/quantized/dynamic/modules/linear.py:57`"));
  EXPECT_THAT(quantized.remedy(), HasSubstr("`prepare_pt2e` / `convert_pt2e`"));
  EXPECT_THAT(quantized.remedy(), Not(HasSubstr("custom_op")));
}

// fixtures/torch_trace/torch-2.6/extension_habits: a submodule under @torch.compiler.disable is a
// break the user asked for (torch 2.6 names the disable wrapper, not the decorator); the hooks of
// saved_tensors_hooks go around the compiled call; a tensor subclass is made traceable. The last
// two remedies were checked in the sandbox: no break, one graph.
TEST(SummarizeGraphBreaksTest, ExtensionHabitsDisableSavedTensorsHooksAndASubclass) {
  ASSERT_OK_AND_ASSIGN(auto summaries,
                       FixtureBreaks("torch_trace/torch-2.6/extension_habits/trace.log"));
  std::map<uint32_t, const v1::GraphBreakSummary*> by_line;
  for (const v1::GraphBreakSummary& s : summaries) by_line[s.location().line()] = &s;
  ASSERT_TRUE(by_line.contains(38) && by_line.contains(49) && by_line.contains(20));
  EXPECT_EQ(Word(by_line[38]->category()), "user_requested");
  EXPECT_THAT(by_line[38]->remedy(),
              HasSubstr("`Accuracy.forward` is under `torch.compiler.disable`"));
  EXPECT_THAT(by_line[49]->remedy(), HasSubstr("Enter the hooks around the compiled call instead"));
  EXPECT_THAT(by_line[49]->remedy(), Not(HasSubstr("custom_op")));
  EXPECT_THAT(by_line[20]->remedy(), HasSubstr("add `Tagged` to it"));
  EXPECT_THAT(by_line[20]->remedy(), Not(HasSubstr("outside the compiled function")));
}

TEST(SummarizeGraphBreaksTest, LayerDropByPythonsRandomSkipsTheFrame) {
  ASSERT_OK_AND_ASSIGN(auto summaries,
                       FixtureBreaks("torch_trace/torch-2.6/python_state/trace.log"));
  ASSERT_THAT(summaries, SizeIs(1));
  EXPECT_EQ(summaries[0].location().line(), 41u);
  EXPECT_THAT(summaries[0].remedy(), HasSubstr("Torch compiled nothing for `forward`"));
  EXPECT_THAT(summaries[0].remedy(), HasSubstr("`keep = (torch.rand(()) >= p).to(x.dtype)`"));
  EXPECT_THAT(summaries[0].remedy(), Not(HasSubstr("custom_op")));
}

}  // namespace
}  // namespace cl

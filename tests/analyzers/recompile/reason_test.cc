#include "analyzers/recompile/reason.h"

#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/report_words.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::SizeIs;

// What one check of a reason should parse into.
struct Expect {
  const char* category;  // its word, as the report prints it
  const char* variable;
  const char* axis;
  const char* expected;
  const char* actual;
  const char* entry_id = "";
};

struct Case {
  const char* name;  // where the text comes from
  const char* text;
  Expect want;
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name; }

void ExpectFailure(const GuardFailure& f, const Expect& want, const std::string& text) {
  SCOPED_TRACE(text);
  EXPECT_EQ(Word(f.category), want.category) << "rule " << f.rule;
  EXPECT_EQ(f.variable, want.variable);
  EXPECT_EQ(f.Axis(), want.axis);
  EXPECT_EQ(f.expected, want.expected);
  EXPECT_EQ(f.actual, want.actual);
  EXPECT_EQ(f.entry_id, want.entry_id);
}

class SingleCheckTest : public ::testing::TestWithParam<Case> {};

TEST_P(SingleCheckTest, ParsesIntoOneFailure) {
  const Case& c = GetParam();
  std::vector<GuardFailure> failures = ParseRecompileReason(c.text);
  ASSERT_THAT(failures, SizeIs(1)) << c.text;
  ExpectFailure(failures[0], c.want, c.text);
}

// docs/torch-semantics.md §1.4: examples 1–38, real messages from PyTorch's tests, docs and
// issues, in torch's full text (multi-check examples have their own tests below).
const Case kExamples[] = {
    {"ex1",
     "tensor 'a' size mismatch at index 0. expected 3, actual 2",
     {"size", "a", "a[0]", "3", "2"}},
    {"ex2",
     "tensor 'a' stride mismatch at index 0. expected 20, actual 1",
     {"stride", "a", "a[0]", "20", "1"}},
    {"ex3", "tensor 'a' rank mismatch. expected 3, actual 2", {"size", "a", "a.ndim", "3", "2"}},
    {"ex4 (old, no key sets)",
     "tensor 'a' dispatch key set mismatch.",
     {"device", "a", "a", "", ""}},
    {"ex4 (moved to meta)",
     "tensor 'a' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect, "
     "ADInplaceOrView, AutogradCPU), actual DispatchKeySet(Meta, BackendSelect, ADInplaceOrView, "
     "AutogradMeta)",
     {"device", "a", "a", "DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU)",
      "DispatchKeySet(Meta, BackendSelect, ADInplaceOrView, AutogradMeta)"}},
    {"ex5",
     "tensor 'a' dtype mismatch. expected Float, actual Half",
     {"dtype", "a", "a", "Float", "Half"}},
    {"ex6",
     "tensor 'a' requires_grad mismatch. expected requires_grad=0",
     {"requires_grad", "a", "a", "0", "1"}},
    {"ex7 current",
     "expected type of 'b' to be <class 'torch.Tensor'>, but found <class 'int'>",
     {"type", "b", "b", "<class 'torch.Tensor'>", "<class 'int'>"}},
    {"ex7 mid",
     "expected type of 'b' to be a tensor type, ' but found <class 'int'>",
     {"type", "b", "b", "a tensor", "<class 'int'>"}},
    {"ex7 old",
     "expected type of 'L['b']' to be a tensor type, ' but found <class 'int'>",
     {"type", "b", "b", "a tensor", "<class 'int'>"}},
    {"ex8",
     "expected type of 'b' to be <class 'torch.nn.parameter.Parameter'>, but found <class "
     "'torch.Tensor'>",
     {"type", "b", "b", "<class 'torch.nn.parameter.Parameter'>", "<class 'torch.Tensor'>"}},
    {"ex9",
     "tensor 'x' size mismatch at index 0. expected 11, actual 12",
     {"size", "x", "x[0]", "11", "12"}},
    {"ex10 a", "len(x) == 3", {"value", "x", "len(x)", "3", ""}},
    {"ex10 b", "len(x) == 2", {"value", "x", "len(x)", "2", ""}},
    {"ex13",
     "tensor 'x' size mismatch at index 0. expected 2, actual 5",
     {"size", "x", "x[0]", "2", "5"}},
    {"ex14 (no tensor name)",
     "size mismatch at index 0. expected 10, actual 9",
     {"size", "", "[0]", "10", "9"}},
    {"ex15 a",
     "GLOBAL_STATE changed: default_dtype ",
     {"global_state", "default_dtype", "default_dtype", "", ""}},
    {"ex15 b",
     "GLOBAL_STATE changed: deterministic_algorithms ",
     {"global_state", "deterministic_algorithms", "deterministic_algorithms", "", ""}},
    {"ex16 a",
     "L['zs'][0] == 3.0  # for y, z in zip(ys, zs):",
     {"value", "zs[0]", "zs[0]", "3.0", ""}},
    {"ex16 b",
     "- len(L['ys']) == 2  # for y, z in zip(ys, zs):",
     {"value", "ys", "len(ys)", "2", ""}},
    {"ex17", "set.__contains__(s, 'PyTorch')", {"container", "s", "s", "'PyTorch'", ""}},
    {"ex18",
     "torch._functorch.pyfunctorch.compare_functorch_state([])",
     {"global_state", "functorch", "functorch", "", ""}},
    {"ex19",
     "0/0: check_overlapping(overlapping=[args[1], args[2]], non_overlapping=[args[0]])",
     {"aliasing", "args[1], args[2]", "args[1], args[2]", "", "", "0/0"}},
    {"ex20 a",
     "ID_MATCH: ___check_obj_id(L['Config'], 140234567), type=<class '__main__.Config'>",
     {"identity", "Config", "Config", "<class '__main__.Config'>", ""}},
    {"ex20 b",
     "TYPE_MATCH: ___check_type_id(L['point'], 9876543), type=<class '__main__.Point'>",
     {"type", "point", "point", "<class '__main__.Point'>", ""}},
    // torch 2.6, a sandbox function called with torch.relu and then a lambda as `act`.
    {"getattr failed",
     "0/3: getattr failed on source L['act'].__code__",
     {"type", "act", "act", "", "", "0/3"}},
    {"ex21",
     "- 0/0: tensor 'L['x']' size mismatch at index 0. expected 3, actual 4",
     {"size", "x", "x[0]", "3", "4", "0/0"}},
    {"ex22", "- L['b'] == 'Hello'", {"value", "b", "b", "'Hello'", ""}},
    {"ex23 a", "L['c'] == 8.5", {"value", "c", "c", "8.5", ""}},
    {"ex23 b", "L['c'] == 1.5", {"value", "c", "c", "1.5", ""}},
    {"ex23 lr",
     "L['self'].param_groups[0]['lr'] == 0.01",
     {"value", "self.param_groups[0]['lr']", "self.param_groups[0]['lr']", "0.01", ""}},
    {"ex24",
     "- 0/0: tensor 'L['a']' requires_grad mismatch. expected requires_grad=0",
     {"requires_grad", "a", "a", "0", "1", "0/0"}},
    {"ex25",
     "- tensor 'L['tgt']' dtype mismatch. expected Half, actual Float",
     {"dtype", "tgt", "tgt", "Half", "Float"}},
    {"ex26",
     "torch._dynamo hit config.cache_size_limit (64) function: 'forward' (/m.py:3) last reason: "
     "1/0: tensor 'L['images']' size mismatch at index 2. expected 1696, actual 1248",
     {"size", "images", "images[2]", "1696", "1248", "1/0"}},
    {"ex27",
     "- 5/2: tensor 'L['x']' size mismatch at index 1. expected 1024, actual 128",
     {"size", "x", "x[1]", "1024", "128", "5/2"}},
    {"ex28",
     "- 0/3: ___check_obj_id(self._modules['attn'].processor, 140576345756128)",
     {"identity", "self.attn.processor", "self.attn.processor", "", "", "0/3"}},
    {"ex29 a",
     "- 16/7: L['self']._modules['mixer']._modules['conv'].layer_idx == (8, 'conv')",
     {"value", "self.mixer.conv.layer_idx", "self.mixer.conv.layer_idx", "(8, 'conv')", "",
      "16/7"}},
    {"ex29 b",
     "- 16/2: ___check_type_id(L['self']._modules['mixer'], 157671424)",
     {"type", "self.mixer", "self.mixer", "", "", "16/2"}},
    {"ex30",
     "- 2 <= L['x'].size()[0]  # _dynamo/output_graph.py:452 in init_ambient_guards",
     {"symbolic_shape", "x", "x[0]", "2 <= x[0]", ""}},
    {"ex31",
     "- Eq(L['x'].size()[0], 5) & Eq(L['x'].size()[2], 2) & Eq(L['x'].size()[3], 3)",
     {"symbolic_shape", "x", "x[0]", "Eq(x[0], 5) & Eq(x[2], 2) & Eq(x[3], 3)", ""}},
    {"ex32", "- 6/0: L['y'] == 1.5", {"value", "y", "y", "1.5", "", "6/0"}},
    {"ex33",
     "tensor 'L['input_ids']' dispatch key set mismatch. expected DispatchKeySet(HPU, "
     "BackendSelect), actual DispatchKeySet(HPU, BackendSelect, ADInplaceOrView)",
     {"global_state", "input_ids", "input_ids", "DispatchKeySet(HPU, BackendSelect)",
      "DispatchKeySet(HPU, BackendSelect, ADInplaceOrView)"}},
    {"ex34",
     "__nn_module_guard_0(L['self'], debug_msg=\"versions(mod=1189643, _parameters=1186941, "
     "_buffers=1186942)\")",
     {"container", "self", "self", "", ""}},
    {"ex35", "- 0/0: ", {"unknown", "", "", "", "", "0/0"}},
    {"ex36",
     "0/0: tensor 'L['y']' size mismatch at index 0. expected 4, actual 6",
     {"size", "y", "y[0]", "4", "6", "0/0"}},
    {"ex37",
     "tensor 'L['x']' size mismatch at index 0. expected 24, actual 25",
     {"size", "x", "x[0]", "24", "25"}},
};
INSTANTIATE_TEST_SUITE_P(TorchSemanticsExamples, SingleCheckTest, ::testing::ValuesIn(kExamples));

// §1.5 Step E: one row per rule (and each rule's sub-cases) that the examples above miss.
const Case kRuleRows[] = {
    {"device_index",
     "tensor 'x' Tensor device index mismatch. Expected device index to be 0, actual 1",
     {"device", "x", "x", "0", "1"}},
    {"dispatch_key cpu->cuda",
     "tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect, "
     "AutogradCPU), actual DispatchKeySet(CUDA, BackendSelect, AutogradCUDA)",
     {"device", "x", "x", "DispatchKeySet(CPU, BackendSelect, AutogradCPU)",
      "DispatchKeySet(CUDA, BackendSelect, AutogradCUDA)"}},
    // torch 2.6: the same CPU tensor passed under torch.inference_mode(), then under no_grad.
    {"dispatch_key inference mode",
     "tensor 'L['x']' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect, "
     "ADInplaceOrView), actual DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU)",
     {"global_state", "x", "x", "DispatchKeySet(CPU, BackendSelect, ADInplaceOrView)",
      "DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU)"}},
    {"dispatch_key python mode",
     "tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, BackendSelect), actual "
     "DispatchKeySet(CPU, Python, BackendSelect, PythonTLSSnapshot)",
     {"global_state", "x", "x", "DispatchKeySet(CPU, BackendSelect)",
      "DispatchKeySet(CPU, Python, BackendSelect, PythonTLSSnapshot)"}},
    {"strides (torchdynamo)",
     "tensor 'position_bias' strides mismatch at index 0. expected 16, actual 1",
     {"stride", "position_bias", "position_bias[0]", "16", "1"}},
    {"global_state several fields",
     "GLOBAL_STATE changed: grad_mode autocast ",
     {"global_state", "grad_mode, autocast", "grad_mode, autocast", "", ""}},
    {"global_flag grad",
     "___is_grad_enabled()",
     {"global_state", "grad_mode", "grad_mode", "True", "False"}},
    {"global_flag not grad",
     "not ___is_grad_enabled()",
     {"global_state", "grad_mode", "grad_mode", "False", "True"}},
    {"global_flag deterministic",
     "___are_deterministic_algorithms_enabled()",
     {"global_state", "deterministic_algorithms", "deterministic_algorithms", "True", "False"}},
    {"global_flag check",
     "___check_global_state()",
     {"global_state", "global_state", "global_state", "", ""}},
    {"mode stack",
     "___check_torch_function_mode_stack()",
     {"global_state", "torch_function_mode_stack", "torch_function_mode_stack", "", ""}},
    {"default device",
     "utils_device.CURRENT_DEVICE == None",
     {"global_state", "default_device", "default_device", "None", ""}},
    {"backend 2.2",
     "(___skip_backend_check() or ___current_backend() == ___lookup_backend(140234))",
     {"backend_config", "backend", "backend", "", ""}},
    {"backend check",
     "___check_current_backend(140234)",
     {"backend_config", "backend", "backend", "", ""}},
    {"config hash",
     "___compile_config_hash() == 'a1b2c3d4'",
     {"backend_config", "dynamo_config", "dynamo_config", "a1b2c3d4", ""}},
    {"needs_nopython",
     "not ___needs_nopython()",
     {"backend_config", "fullgraph", "fullgraph", "", ""}},
    {"backend match",
     "BACKEND_MATCH failure: torch.compile detected different backend callables. If this is "
     "unexpected, wrap your backend in functools.partial (or reuse the same cached backend) to "
     "avoid "
     "creating a new backend function each time. More details: "
     "https://github.com/pytorch/pytorch/issues/168373",
     {"backend_config", "backend", "backend", "", ""}},
    {"duplicate tensors",
     "Duplicate tensors found: [\"L['a']\", \"L['c']\"]",
     {"aliasing", "a, c", "a, c", "", ""}},
    {"duplicate tensor",
     "Duplicate tensor found where not expected! L['b']should not alias to anything, but is "
     "aliased",
     {"aliasing", "b", "b", "", ""}},
    {"aot duplicate input", "L['a'] is L['b']", {"aliasing", "a, b", "a, b", "", ""}},
    {"tuple iterator length",
     "___tuple_iterator_len(L['it']) == 3",
     {"value", "it", "len(it)", "3", ""}},
    {"dynamic marker",
     "hasattr(L['x'], '_dynamo_dynamic_indices') == False",
     {"symbolic_shape", "x", "x", "False", ""}},
    {"symbolic range",
     "3 <= L['y'].size()[0] <= 14",
     {"symbolic_shape", "y", "y[0]", "3 <= y[0] <= 14", ""}},
    {"symbolic relation",
     "L['x'].size()[0] == 2*L['y'].size()[0]",
     {"symbolic_shape", "x", "x[0]", "x[0] == 2*y[0]", ""}},
    {"symbolic modulo",
     "((2*L['y'].size()[0]) % 3) == 0",
     {"symbolic_shape", "y", "y[0]", "((2*y[0]) % 3) == 0", ""}},
    {"symbolic Ne", "Ne(L['x'].size()[1], 1)", {"symbolic_shape", "x", "x[1]", "Ne(x[1], 1)", ""}},
    {"symbolic offset",
     "L['x'].storage_offset() == 0",
     {"symbolic_shape", "x", "x", "x.storage_offset() == 0", ""}},
    // A dynamic int's guard (a sandbox module's `min(1.0, self.step / 4)`), and what it is not.
    {"symbolic value",
     "((1 + L['self'].step) / 4) <= 1.0",
     {"symbolic_shape", "self.step", "self.step", "((1 + self.step) / 4) <= 1.0", ""}},
    {"symbolic value, number first",
     "2 < 3*L['n'] - 1",
     {"symbolic_shape", "n", "n", "2 < 3*n - 1", ""}},
    {"a value with a minus inside a string",
     "L['mode'] == 'pre-norm'",
     {"value", "mode", "mode", "'pre-norm'", ""}},
    {"dict contains", "___dict_contains('key', L['d'])", {"container", "d", "d", "'key'", ""}},
    {"dict keys",
     "set(G['__import_torch_dot_nn_dot_modules_dot_module']._global_forward_hooks.keys()) == set()",
     {"container", "G['__import_torch_dot_nn_dot_modules_dot_module']._global_forward_hooks",
      "G['__import_torch_dot_nn_dot_modules_dot_module']._global_forward_hooks", "", ""}},
    {"empty dict (a length of 0)",
     "not L['self']._parameters",
     {"value", "self._parameters", "len(self._parameters)", "0", ""}},
    {"empty list", "not G['history']", {"value", "G['history']", "len(G['history'])", "0", ""}},
    {"hasattr", "hasattr(L['cfg'], 'use_cache')", {"container", "cfg", "cfg", "use_cache", ""}},
    {"data_ptr", "L['buf'].data_ptr() == 140000000", {"identity", "buf", "buf", "140000000", ""}},
    {"training value (<=2.3)",
     "L['self'].training == True",
     {"module_mode", "self.training", "self.training", "True", ""}},
    {"training id",
     "___check_obj_id(L['self'].training, 7685824)",
     {"module_mode", "self.training", "self.training", "", ""}},
    {"bool id",
     "___check_obj_id(L['flag'], 7685824), type=<class 'bool'>",
     {"value", "flag", "flag", "<class 'bool'>", ""}},
    {"global value", "G['_flag'] == True", {"value", "G['_flag']", "G['_flag']", "True", ""}},
    {"corpus identity with padding",
     "0/0: ___check_obj_id(fn, 139645370122560)                   ",
     {"identity", "fn", "fn", "", "", "0/0"}},
    {"unexpected recompilation",
     "Unexpected recompilation: runtime guards failed even though they passed during "
     "recompilation-reason analysis. Please open an issue with a minimal repro: "
     "https://github.com/pytorch/pytorch",
     {"unknown", "", "", "", ""}},
    {"empty", "", {"unknown", "", "", "", ""}},
    {"garbage", "the moon is made of cheese", {"other", "", "", "", ""}},
};
INSTANTIATE_TEST_SUITE_P(RuleTable, SingleCheckTest, ::testing::ValuesIn(kRuleRows));

// §1.5 Step B: log-line prefixes.
const Case kPrefixed[] = {
    {"glog",
     "V0920 13:54:44.535000 3904 torch/_dynamo/guards.py:4760] [0/1] [__recompiles]     - 0/0: "
     "tensor 'L['x']' size mismatch at index 0. expected 2, actual 3",
     {"size", "x", "x[0]", "2", "3", "0/0"}},
    {"2.1 logging",
     "[2023-11-06 14:54:45,922] torch._dynamo.guards.__recompiles: [DEBUG]     - tensor 'L['x']' "
     "size mismatch at index 0. expected 24, actual 25",
     {"size", "x", "x[0]", "24", "25"}},
    {"rank + glog",
     "[rank6]:V0920 13:54:44.535000 3904 torch/_dynamo/guards.py:4760] [0/1] [__recompiles]     - "
     "0/0: GLOBAL_STATE changed: grad_mode ",
     {"global_state", "grad_mode", "grad_mode", "", "", "0/0"}},
    {"user stack appended",
     "0/0: L['n'] == 3\nUser stack trace:\n  File \"a.py\", line 3, in f\n    return x + n",
     {"value", "n", "n", "3", "", "0/0"}},
    {"limit warning last reason",
     "   last reason: 0/0: n == 0                                                   # return x + n "
     " "
     "# test_error_messages.py:N in fn",
     {"value", "n", "n", "0", "", "0/0"}},
};
INSTANTIATE_TEST_SUITE_P(LogPrefixes, SingleCheckTest, ::testing::ValuesIn(kPrefixed));

std::vector<std::string> Summaries(const std::vector<GuardFailure>& failures) {
  std::vector<std::string> out;
  for (const GuardFailure& f : failures) {
    out.push_back(absl::StrCat(f.entry_id, " ", Word(f.category), " ", f.Axis(), " ", f.expected,
                               "->", f.actual));
  }
  return out;
}

TEST(ParseRecompileReasonTest, Example11LimitWarningGivesItsLastReason) {
  constexpr char kWarning[] =
      "torch._dynamo hit config.recompile_limit (8)\n"
      "   function: 'fn' (/tmp/test_recompile_ux.py:42)\n"
      "   last reason: 0/7: tensor 'x' size mismatch at index 0. expected 8, actual 9\n"
      "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".\n"
      "To diagnose recompilation issues, see "
      "https://pytorch.org/docs/main/torch.compiler_troubleshooting.html";
  EXPECT_THAT(Summaries(ParseRecompileReason(kWarning)), ElementsAre("0/7 size x[0] 8->9"));
  std::optional<CacheLimitMessage> msg = ParseCacheLimitMessage(kWarning);
  ASSERT_TRUE(msg.has_value());
  EXPECT_EQ(msg->limit, "recompile_limit");
  EXPECT_EQ(msg->value, 8u);
  EXPECT_EQ(msg->function, "fn");
  EXPECT_EQ(msg->file, "/tmp/test_recompile_ux.py");
  EXPECT_EQ(msg->line, 42u);
  EXPECT_EQ(msg->last_reason, "0/7: tensor 'x' size mismatch at index 0. expected 8, actual 9");
}

TEST(ParseRecompileReasonTest, Example12FailOnRecompileListsEveryEntry) {
  constexpr char kError[] =
      "Detected recompile when torch.compile stance is 'fail_on_recompile'. filename: "
      "'test_decorators.py', function name: 'f', line number: 12\n"
      "    triggered by the following guard failure(s):\n"
      "    - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 7\n"
      "    - 0/1: tensor 'x' size mismatch at index 0. expected 5, actual 7";
  EXPECT_THAT(Summaries(ParseRecompileReason(kError)),
              ElementsAre("0/0 size x[0] 4->7", "0/1 size x[0] 5->7"));
}

TEST(ParseRecompileReasonTest, Example38OldestLimitFormatListsGuards) {
  constexpr char kOld[] =
      "torchdynamo hit recompilation cache limit (64) for function 'forward' (/x/t5.py:412), due "
      "to "
      "the following guard failures: [['___check_obj_id(self, 140428461148288)'], [\"tensor "
      "'position_bias' strides mismatch at index 0. expected 16, actual 1\"]]";
  EXPECT_THAT(Summaries(ParseRecompileReason(kOld)),
              ElementsAre(" identity self ->", " stride position_bias[0] 16->1"));
  std::optional<CacheLimitMessage> msg = ParseCacheLimitMessage(kOld);
  ASSERT_TRUE(msg.has_value());
  EXPECT_EQ(msg->limit, "cache_size_limit");
  EXPECT_EQ(msg->value, 64u);
  EXPECT_EQ(msg->function, "forward");
}

TEST(ParseRecompileReasonTest, WholeRecompilesRecordGivesOneFailurePerBullet) {
  constexpr char kRecord[] =
      "V0920 13:54:44.535000 3904 torch/_dynamo/guards.py:4760] [0/2] [__recompiles] Recompiling "
      "function forward in /work/model.py:41\n"
      "    triggered by the following guard failure(s):\n"
      "    - 0/1: tensor 'L['x']' size mismatch at index 0. expected 32, actual 64\n"
      "    - 0/0: tensor 'L['x']' size mismatch at index 0. expected 16, actual 64\n";
  EXPECT_THAT(Summaries(ParseRecompileReason(kRecord)),
              ElementsAre("0/1 size x[0] 32->64", "0/0 size x[0] 16->64"));
}

TEST(ParseRecompileReasonTest, VerboseRecordKeepsEntryHeadersOut) {
  constexpr char kVerbose[] =
      "Recompiling function fn in /a.py:3\n"
      "    triggered by the following guard failure(s):\n"
      "    guard 0 failures:\n"
      "    - 0/1: 2 <= L['x'].size()[0]   # _dynamo/output_graph.py:452 in init_ambient_guards\n"
      "    guard 1 failures:\n"
      "    - 0/0: tensor 'L['x']' size mismatch at index 0. expected 3, actual 1\n";
  std::vector<GuardFailure> failures = ParseRecompileReason(kVerbose);
  EXPECT_THAT(Summaries(failures),
              ElementsAre("0/1 symbolic_shape x[0] 2 <= x[0]->", "0/0 size x[0] 3->1"));
  EXPECT_EQ(failures[0].source, "_dynamo/output_graph.py:452 in init_ambient_guards");
  // A comment naming only torch's frame quotes no code of the user's.
  EXPECT_EQ(failures[0].UserCode(), "");
  EXPECT_EQ(failures[0].TorchFrame(), "_dynamo/output_graph.py:452 in init_ambient_guards");
}

// What a guard's source comment says asked for the guard, on torch 2.6's forms (sandbox scenes
// and fixtures, verbatim): the user's line before torch's frame; torch's frame alone in
// parentheses (the fx_graph_runnable writer); torch's own code quoted (torch-2.6/detect_head: a
// module's `return F.conv2d(`, the guard added by the fake-tensor conv rule), which is no line of
// the user's, the frame that added it being named instead, or without one in parentheses (the
// 0/1-specialisation note) the quoted code's own frame.
TEST(ParseRecompileReasonTest, TheSourceCommentsUserCodeAndTorchFrame) {
  struct Case {
    const char* reason;
    const char* user_code;
    const char* torch_frame;
  };
  const Case kCases[] = {
      {"0/0: L['x'].size()[0] <= 8  # if x.shape[0] > 8:  # nt/project/thresh.py:7 in forward "
       "(_dynamo/variables/tensor.py:1201 in evaluate_expr)",
       "if x.shape[0] > 8:", ""},
      {"0/1: (4 + 4*(((-1) + L['mel'].size()[2]) // 2)) == 320  # "
       "(_dynamo/debug_utils.py:661 in tensor)",
       "", "_dynamo/debug_utils.py:661 in tensor"},
      {"0/3: 3*L['img'].size()[2]*L['img'].size()[3] > 20480  # return F.conv2d(  # "
       "nn/modules/conv.py:549 in _conv_forward (_subclasses/fake_impls.py:743 in conv)",
       "", "_subclasses/fake_impls.py:743 in conv"},
      {"0/0: L['x'].size()[0] >= 2  # return F.linear(input, self.weight, self.bias)  # "
       "nn/modules/linear.py:125 in forward (user code shown is first use of this value--the "
       "guard itself is not due user code but due to 0/1 specialization in the framework; to "
       "avoid specialization try torch._dynamo.mark_unbacked(tensor, dim))",
       "", "nn/modules/linear.py:125 in forward"},
      // torch's top-level files, in the code's frame or in parentheses.
      {"0/0: L['x'].size()[1] > 64  # return torch.layer_norm(  # functional.py:2910 in "
       "layer_norm (_meta_registrations.py:3878 in common_meta_baddbmm_bmm)",
       "", "_meta_registrations.py:3878 in common_meta_baddbmm_bmm"},
      // A user's file shares a prefix with torch's directory, and keeps what is left of its path.
      {"0/0: L['x'].size()[0] <= 8  # if n > 8:  # nt/project/nn/layers.py:7 in forward "
       "(_dynamo/variables/tensor.py:1201 in evaluate_expr)",
       "if n > 8:", ""},
      // The user's code with torch's frame that added the guard after it stays the user's.
      {"0/0: L['x'].size()[1] > 64  # y = F.scaled_dot_product_attention(q, k, v)  # "
       "nt/project/greedy_decode.py:28 in forward (_meta_registrations.py:3878 in "
       "common_meta_baddbmm_bmm)",
       "y = F.scaled_dot_product_attention(q, k, v)", ""},
  };
  for (const Case& c : kCases) {
    const std::vector<GuardFailure> failures = ParseRecompileReason(c.reason);
    ASSERT_EQ(failures.size(), 1u) << c.reason;
    EXPECT_EQ(failures[0].UserCode(), c.user_code) << c.reason;
    EXPECT_EQ(failures[0].TorchFrame(), c.torch_frame) << c.reason;
  }
}

TEST(ParseRecompileReasonTest, SplitsJoinedChecksOutsideBracketsAndQuotes) {
  std::vector<GuardFailure> failures = ParseRecompileReason(
      "0/0: tensor 'L['x']' dtype mismatch. expected Float, actual Half; len(L['ys']) == 2; "
      "L['flag'] == 'a; b'; Eq(L['x'].size()[0], 5); ___check_obj_id(f(a; b), 1)");
  EXPECT_THAT(
      Summaries(failures),
      ElementsAre("0/0 dtype x Float->Half", "0/0 value len(ys) 2->", "0/0 value flag 'a; b'->",
                  "0/0 symbolic_shape x[0] Eq(x[0], 5)->", "0/0 identity f(a; b) ->"));
}

TEST(ParseRecompileReasonTest, UnbalancedQuotesStillSplit) {
  // The old tensor-type text carries a stray quote; a later check must still be found.
  std::vector<GuardFailure> failures = ParseRecompileReason(
      "expected type of 'b' to be a tensor type, ' but found <class 'int'>; L['c'] == 1");
  EXPECT_THAT(Summaries(failures), ElementsAre(" type b a tensor-><class 'int'>", " value c 1->"));
}

TEST(ParseRecompileReasonTest, GarbageKeepsTheCheckText) {
  std::vector<GuardFailure> failures = ParseRecompileReason("0/4: ¯\\_(ツ)_/¯ no idea");
  ASSERT_THAT(failures, SizeIs(1));
  EXPECT_EQ(failures[0].category, v1::RecompileCategory::OTHER);
  EXPECT_EQ(failures[0].check, "¯\\_(ツ)_/¯ no idea");
  EXPECT_EQ(failures[0].entry_id, "0/4");
}

TEST(StripLocalScopeTest, StripsLocalsKeepsGlobals) {
  EXPECT_EQ(StripLocalScope("L['self']._modules['attn'] is G['x']"),
            "self._modules['attn'] is G['x']");
  EXPECT_EQ(StripLocalScope("tensor 'L[\"x\"]' size"), "tensor 'x' size");
}

TEST(StripLogPrefixTest, LeavesPythonListsAlone) {
  EXPECT_EQ(StripLogPrefix("[['a'], ['b']] rest"), "[['a'], ['b']] rest");
  EXPECT_EQ(StripLogPrefix("[rank0]:[0/3] [__recompiles] - 0/2: x"), "- 0/2: x");
}

TEST(ParseCacheLimitMessageTest, ReadsEveryLimitForm) {
  auto fail_on_hit = ParseCacheLimitMessage(
      "torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached, because "
      "fail_on_recompile_limit_hit = True this is a HARD failure");
  ASSERT_TRUE(fail_on_hit.has_value());
  EXPECT_EQ(fail_on_hit->limit, "recompile_limit");
  EXPECT_FALSE(fail_on_hit->value.has_value());

  auto fullgraph = ParseCacheLimitMessage(
      "cache_size_limit reached with one_graph=True. Excessive recompilations can degrade "
      "performance");
  ASSERT_TRUE(fullgraph.has_value());
  EXPECT_EQ(fullgraph->limit, "cache_size_limit");

  auto graph_break = ParseCacheLimitMessage(
      "Dynamo recompile limit exceeded\n"
      "  Explanation: Dynamo attempted to recompile the code object too many times, exceeding the "
      "recompile_limit cache size limit (currently set to 1). Excessive recompilations can degrade "
      "performance due to the compilation overhead of each recompilation.\n"
      "  Hint: To monitor recompilations, enable TORCH_LOGS=recompiles.\n\n"
      "  Developer debug context: Limit type: recompile_limit\n");
  ASSERT_TRUE(graph_break.has_value());
  EXPECT_EQ(graph_break->limit, "recompile_limit");
  EXPECT_EQ(graph_break->value, 1u);

  EXPECT_FALSE(ParseCacheLimitMessage("backend='inductor' raised: RuntimeError: oops").has_value());
  EXPECT_FALSE(ParseCacheLimitMessage("the limit was reached, because why not").has_value());
}

// Module guards name their source through nn.Module's dicts; the report names it as written.
TEST(ReadableSourceTest, ModuleDictsBecomeAttributesAndIndices) {
  EXPECT_EQ(ReadableSource("model._modules['layers']._modules['0'].attention"),
            "model.layers[0].attention");
  EXPECT_EQ(ReadableSource("self._parameters['weight']"), "self.weight");
  EXPECT_EQ(ReadableSource("self._buffers[\"k_cache\"]"), "self.k_cache");
  EXPECT_EQ(ReadableSource("G['scale']"), "G['scale']");
  const GuardFailure f = ClassifyGuardCheck(
      "tensor 'L['self']._modules['layers']._modules['1']._parameters['weight']' size mismatch at "
      "index 0. expected 8, actual 16");
  EXPECT_EQ(f.variable, "self.layers[1].weight");
}

}  // namespace
}  // namespace cl

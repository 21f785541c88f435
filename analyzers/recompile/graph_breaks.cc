#include "analyzers/recompile/graph_breaks.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analyzers/common/frame_skip.h"
#include "analyzers/common/location.h"
#include "analyzers/common/restarts.h"
#include "analyzers/recompile/first_match.h"
#include "re2/re2.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using Category = v1::GraphBreakCategory;

re2::StringPiece Piece(absl::string_view s) { return re2::StringPiece(s.data(), s.size()); }

// torch.compile's RNN modules, whose break is on purpose.
constexpr char kRnnRemedy[] =
    "torch.compile leaves `nn.RNN`, `nn.GRU` and `nn.LSTM` out on purpose (Dynamo breaks the graph "
    "at the module), so it runs eagerly: compile the code before and after it as functions of "
    "their own. `torch._dynamo.config.allow_rnn = True` traces it instead (the recurrence "
    "unrolled over the sequence), but compare with eager before keeping it: on torch 2.6 (CPU) a "
    "compiled `nn.LSTM` raised an AssertionError at run time where an `nn.GRU` compiled and "
    "matched.";

struct CategoryRule {
  Category::Value category;
  const char* pattern;  // RE2, searched in the reason, the explanation and the debug context
};

// §2.2, most specific first: a reason can mention several things ("data dependent operator:
// ...; to enable, set capture_scalar_outputs") and the first rule names its cause.
constexpr CategoryRule kCategoryRules[] = {
    {Category::RECOMPILE_LIMIT,
     R"re((?i)recompile limit exceeded|hit config\.\w*(?:cache_size|recompile)_limit)re"},
    {Category::USER_REQUESTED,
     R"re(torch\._dynamo\.graph_break\(\)|skip function graph_break in file|Call to .torch\._dynamo\.graph_break|torch\._dynamo\.disable\(\) wrapped function|\| _fn \S*torch/_dynamo/eval_frame\.py)re"},
    {Category::DATA_DEPENDENT_BRANCH,
     R"re((?i)data-dependent (?:branching|jump|expression)|generic_jump|jump with TensorVariable|dynamic control flow is not supported|GuardOnDataDependentSymNode)re"},
    {Category::SCALAR_EXTRACTION,
     R"re((?i)Tensor\.item|_local_scalar_dense|data dependent operator|capture_scalar_outputs|\.tolist\(|aten\.equal)re"},
    {Category::DYNAMIC_OUTPUT_SHAPE,
     R"re((?i)dynamic shape operator|capture_dynamic_output_shape_ops|\bnonzero\b)re"},
    {Category::LOGGING, R"re(\bprint\b|\blogging\b|(?i:\blogger\b)|_?warnings\.warn)re"},
    // `_GeneratorContextManager` (a @contextmanager such as sdp_kernel) is a context manager, not
    // a generator; so is anything contextlib's (`suppress`) or a `with` Dynamo cannot enter.
    {Category::CONTEXT_MANAGER,
     R"re((?i)context ?manager|GenericContextWrappingVariable|BEFORE_WITH|SETUP_WITH|contextlib\.py)re"},
    {Category::FAKE_TENSOR,
     R"re(NotImplementedError|UnsupportedFakeTensorException|FakeTensor|(?i:fake kernel|meta kernel|register_fake)|Backend compiler exception)re"},
    {Category::EXCEPTION, R"re((?i)observed exception|\bexception\b)re"},
    {Category::NN_MODULE,
     R"re(nn\.Module|NNModuleVariable|(?i:RNN, GRU,? (?:or )?LSTM)|allow_rnn)re"},
    // A torch.Generator (`generator=g`, an RNG's state) is no Python generator.
    {Category::UNSUPPORTED_CALL, R"re(Variable\(Generator\)|torch\.(?:_C\.)?Generator)re"},
    {Category::GENERATOR, R"re((?i)generator|iterator|comprehension)re"},
    {Category::BYTECODE, R"re((?i)bytecode|sort with non-constant keys)re"},
    {Category::UNSUPPORTED_CALL,
     R"re((?i)marked as skipped|skipfiles|skip function \w+ in file|Tensor\.requires_grad_|copy\.deepcopy|Tensor\.backward|unsupported (?:function|method) call|failed to trace builtin|call_function|call_method|third-party|non-Tensor|\bunsupported\b|not supported)re"},
};

// Registry ids (torch/_dynamo/graph_break_registry.json) for structured messages whose wording
// the specific rules above miss.
const absl::flat_hash_map<std::string, Category::Value>& CategoryByGbId() {
  static const auto* const kById = new absl::flat_hash_map<std::string, Category::Value>{
      {"GB0170", Category::DATA_DEPENDENT_BRANCH},
      {"GB0124", Category::SCALAR_EXTRACTION},
      {"GB0033", Category::SCALAR_EXTRACTION},
      {"GB0037", Category::DYNAMIC_OUTPUT_SHAPE},
      {"GB0007", Category::UNSUPPORTED_CALL},
      {"GB0008", Category::UNSUPPORTED_CALL},
      {"GB0147", Category::UNSUPPORTED_CALL},
      {"GB0156", Category::UNSUPPORTED_CALL},
      {"GB0059", Category::UNSUPPORTED_CALL},
      {"GB0025", Category::USER_REQUESTED},
      {"GB0142", Category::CONTEXT_MANAGER},
      {"GB0066", Category::CONTEXT_MANAGER},
      {"GB0088", Category::EXCEPTION},
      {"GB0119", Category::NN_MODULE},
      {"GB0161", Category::NN_MODULE},
      {"GB0014", Category::NN_MODULE},
      {"GB0003", Category::GENERATOR},
      {"GB0087", Category::FAKE_TENSOR},
      {"GB0219", Category::FAKE_TENSOR},
      {"GB0082", Category::BYTECODE},
      {"GB0207", Category::BYTECODE},
  };
  return *kById;
}

// A `.item()` whose value a Python `if`, `while` or `assert` on the same line decides on: with
// capture_scalar_outputs the value is a symbol known only at run time, and the branch breaks the
// graph in its turn ("Could not guard on data-dependent expression"; checked on torch 2.6, where
// `if y.max().item() > 100:` still made two graphs with it set).
constexpr absl::string_view kScalarBranchRemedy =
    "The value `.item()` reads decides a Python branch on this line, which torch.compile cannot "
    "trace whatever it is set to (with `capture_scalar_outputs = True` the break moves to the "
    "branch). Keep the decision on the device (`torch.where`, or `torch.cond` for two code "
    "paths), or take it outside the compiled code, on the tensor the compiled call returns.";

bool DecidesABranch(absl::string_view statement) {
  for (absl::string_view keyword : {"if ", "elif ", "while ", "assert "}) {
    if (absl::StartsWith(statement, keyword)) return true;
  }
  return false;
}

std::string RemedyFor(Category::Value category) {
  static const auto* const kRemedies = new absl::flat_hash_map<Category::Value, std::string>{
      {Category::DATA_DEPENDENT_BRANCH,
       "Replace the tensor-dependent `if` with `torch.cond` or `torch.where`, or compute the "
       "condition outside the compiled region."},
      {Category::SCALAR_EXTRACTION,
       "Keep `.item()` / `.tolist()` / `float(t)` out of the hot path, or set "
       "`torch._dynamo.config.capture_scalar_outputs = True` (env "
       "`TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1`)."},
      {Category::DYNAMIC_OUTPUT_SHAPE,
       "An op whose output size depends on the data: `nonzero`, one-argument "
       "`torch.where(cond)` (which is `nonzero`), boolean-mask indexing `x[mask]`. Avoid the "
       "data-dependent size (three-argument `torch.where(cond, a, b)`, multiplying by the mask, "
       "a padded fixed size such as a per-expert capacity; for a loss over selected tokens, "
       "`F.cross_entropy(..., ignore_index=-100)` over all of them), or set "
       "`torch._dynamo.config.capture_dynamic_output_shape_ops = True` to keep it in the "
       "graph: its size is then a symbol known only at run time, and a Python `if` on it (`if "
       "idx.numel() == 0:`) breaks the graph in its turn, so drop such checks."},
      {Category::LOGGING,
       "Move print / logging / warnings out of the compiled region, guard them with "
       "`torch.compiler.is_compiling()`, or add the function to "
       "`torch._dynamo.config.reorderable_logging_functions`."},
      {Category::UNSUPPORTED_CALL,
       "Wrap the call as a `torch.library.custom_op`, mark it `torch.compiler.allow_in_graph` "
       "if it is traceable, or move it outside the compiled region."},
      {Category::USER_REQUESTED,
       "An explicit `torch._dynamo.graph_break()`: intentional; remove it if the split is not "
       "needed."},
      {Category::CONTEXT_MANAGER,
       "Move the unsupported context manager outside the compiled region, or use one Dynamo "
       "supports inside it."},
      {Category::EXCEPTION,
       "The traced code raises: fix it (it likely fails eagerly too) or handle the exception "
       "inside the compiled region."},
      {Category::NN_MODULE,
       "Call `super().__init__()` in every module and keep unsupported objects out of module "
       "attributes. An RNN (`nn.LSTM`, `nn.GRU`, `nn.RNN`) is left out on purpose: compile "
       "the code around it."},
      {Category::GENERATOR,
       "Create generators and iterators inside the compiled region, or use plain loops "
       "(comprehensions trace fully on Python 3.12+)."},
      {Category::FAKE_TENSOR,
       "Register a fake (meta) kernel for the custom op with `torch.library.register_fake`, or "
       "report the failure to the backend."},
      {Category::BYTECODE, "Restructure the code around the Python feature Dynamo cannot trace."},
      {Category::RECOMPILE_LIMIT,
       "The frame hit the recompile limit and now runs eagerly: fix the dominant recompile "
       "cause (see the recompile summary); raising `torch._dynamo.config.recompile_limit` is a "
       "last resort."},
      {Category::FRAME_SKIP,
       "The whole frame fell back to eager: fix the graph break inside it (run with "
       "`TORCH_LOGS=graph_breaks` to see it)."},
      {Category::OTHER,
       "Run with `TORCH_LOGS=graph_breaks` to see the full reason and user stack, and check the "
       "graph-break registry for its gb_type."},
  };
  auto it = kRemedies->find(category);
  return it != kRemedies->end() ? it->second : kRemedies->at(Category::OTHER);
}

// Remedies for one well-known call, which say more than its category's.
std::string SpecificRemedy(absl::string_view reason) {
  // A function under torch.compiler.disable: the user asked for the break; name the function.
  // Torch 2.6 says so for a function; for a method (`@torch.compiler.disable` on a submodule's
  // forward) it names the disable wrapper instead: "inline in skipfiles: Metric.forward | _fn
  // …/torch/_dynamo/eval_frame.py".
  static const LazyRE2 kDisabledRe = {
      R"re(torch\._dynamo\.disable\(\) wrapped function <function (\S+)>|inline in skipfiles: (\S+) \| _fn \S*torch/_dynamo/eval_frame\.py)re"};
  // A torch function torch itself keeps out of tracing (`torch._disable_dynamo`, whose wrapper is
  // in torch/_compile.py): torch.manual_seed, for one.
  static const LazyRE2 kTorchDisabledRe = {
      R"re(skip function (\w+) in file \S*torch/_compile\.py)re"};
  // Each regex here is tried only where the text holds a literal its every match holds: a
  // LazyRE2 is compiled when first used, and a small log's analysis is mostly such compiles.
  if (std::string fn; absl::StrContains(reason, "torch/_compile.py") &&
                      RE2::PartialMatch(Piece(reason), *kTorchDisabledRe, &fn)) {
    return absl::StrCat("torch keeps `", fn,
                        "` out of compiled code (`torch._disable_dynamo`): call it outside "
                        "the compiled function",
                        fn == "manual_seed" ? " (seed once, before the call)" : "", ".");
  }
  if (std::string fn, method;
      (absl::StrContains(reason, "torch._dynamo.disable() wrapped function <function ") ||
       absl::StrContains(reason, "torch/_dynamo/eval_frame.py")) &&
      RE2::PartialMatch(Piece(reason), *kDisabledRe, &fn, &method)) {
    return absl::StrCat(
        "`", fn.empty() ? method : fn,
        "` is under `torch.compiler.disable` (or `torch._dynamo.disable`): torch "
        "breaks the graph around each call on purpose and runs it eagerly. Call it outside the "
        "compiled function (or less often, for logging and statistics), or drop the decorator "
        "where the function is traceable (`torch.compiler.allow_in_graph` for one that is "
        "opaque but safe).");
  }
  // A context manager class of the user's (or a library's) whose __enter__ or __exit__ Dynamo
  // could not trace: seen on torch 2.6 with a timer reading `time.perf_counter()`, where the
  // whole frame then ran eagerly, and `torch.profiler.record_function` beside it traced.
  static const LazyRE2 kObjectContextRe = {
      R"re(Unsupported context manager <([\w.]+)\.(\w+) object(?: at 0x[0-9a-fA-F]+)?>'s (__enter__|__exit__))re"};
  if (std::string module, cls, method;
      absl::StrContains(reason, "Unsupported context manager <") &&
      RE2::PartialMatch(Piece(reason), *kObjectContextRe, &module, &cls, &method) &&
      !absl::StartsWith(module, "torch.")) {
    return absl::StrCat(
        "`", cls, "` (a context manager class, from `", module, "`): Dynamo could not trace its `",
        method,
        "` (a clock read, I/O, a lock: what a graph cannot hold), nor break the graph at a "
        "`with` it cannot enter. Enter it around the compiled call instead; to time or label a "
        "region inside it, use `torch.profiler.record_function(name)`, which Dynamo traces.");
  }
  struct Known {
    const char* pattern;
    const char* remedy;
  };
  static constexpr Known kKnown[] = {
      // Checked on torch 2.6: around the compiled call the hooks see every tensor the compiled
      // graph saves, with no break.
      {R"re(saved_tensors_hooks)re",
       "Dynamo cannot enter `torch.autograd.graph.saved_tensors_hooks` inside the compiled "
       "function (activation offloading, compression), so the graph breaks there and what the "
       "`with` holds runs eagerly. Enter the hooks around the compiled call instead "
       "(`with saved_tensors_hooks(pack, unpack): y = compiled(x)`): they then apply to the "
       "tensors the compiled graph saves for backward."},
      // Checked on torch 2.6: a GCN's `torch.sparse.mm(adj, x)` with a COO adjacency broke the
      // graph and its resumed frame failed; the same layer as `index_add_` over an edge list
      // compiled.
      {R"re(does not support sparse Tensors)re",
       "torch.compile does not trace sparse tensors (`torch.sparse_coo_tensor`, `.to_sparse()`, "
       "`torch.sparse.mm`): the code from there runs eagerly. Compile the dense parts around the "
       "sparse op (each `nn.Linear` block on its own), or write the sparse product as message "
       "passing over an edge list (`torch.zeros_like(h).index_add_(0, dst, h[src] * w)`), which "
       "compiles; a small graph can use a dense adjacency."},
      {R"re(Tensor\.backward)re",
       "`loss.backward()` inside the compiled function breaks the graph: compile the model (and "
       "loss) and call `backward()` outside it, or enable compiled autograd "
       "(`torch._dynamo.config.compiled_autograd = True`)."},
      {R"re(sdp_kernel)re",
       "`torch.backends.cuda.sdp_kernel` is a deprecated context manager Dynamo cannot trace: use "
       "`torch.nn.attention.sdpa_kernel(...)`, which it supports, or enter it outside the "
       "compiled region."},
      {R"re(OptimizerVariable\(\w+\) step)re",
       "`opt.step()` inside a compiled function (the pattern of PyTorch's compiled-optimizer "
       "recipe) is not traced where it is called: Dynamo breaks the graph at the call and "
       "compiles the optimizer's own `step` as a frame of its own, where the update is (with a "
       "second, deliberate break in `_use_grad`). Expected where the function only steps the "
       "optimizer; where it also runs the model, the step splits that graph: compile the model "
       "and the step separately."},
      {R"re(Optimizer\.zero_grad)re",
       "`optimizer.zero_grad()` is not traced: call it outside the compiled function (or compile "
       "the optimizer step on its own with `torch.compile(opt.step)`)."},
      // torch 2.6's LoggingLoggerVariable: a logger's methods are not print-like functions, so
      // `reorderable_logging_functions` (the logging category's remedy) never applies to them.
      {R"re(Logger not supported)re",
       "A `logging.Logger` method (`logger.info(...)`, `logger.warning(...)`) breaks the graph "
       "where it is called: guard the call with `if not torch.compiler.is_compiling():`, or set "
       "`torch._dynamo.config.ignore_logger_methods = {logging.Logger.info}` (each method the "
       "code calls), which drops those calls from compiled code: they no longer log there. "
       "`reorderable_logging_functions` does not apply to logger methods."},
      {R"re(skip function getLogger\b)re",
       "`logging.getLogger()` is not traced: make the logger once at module level (`log = "
       "logging.getLogger(__name__)`). Its methods break the graph too, unless the call is "
       "guarded with `if not torch.compiler.is_compiling():` or "
       "`torch._dynamo.config.ignore_logger_methods` lists them (`{logging.Logger.warning}`), "
       "which drops those calls from compiled code."},
      {R"re(unsupported builtin time\.(?:time|perf_counter|monotonic|process_time))re",
       "A clock read (`time.time()`, `time.perf_counter()`) cannot be traced: time the compiled "
       "call from outside it, or profile it with `torch.profiler`, which sees the compiled "
       "kernels."},
      // A size known only at run time (an unbacked `u0`: nonzero, a mask's rows, .item() under
      // capture_scalar_outputs) that a Python `if`, `min()` or `==` needs the value of.
      {R"re(Could not guard on data-dependent expression|GuardOnDataDependentSymNode)re",
       "The code branches on a size or value known only at run time (an unbacked symbol such as "
       "`u0`, from `nonzero`, a boolean mask or `.item()`): here a Python `if` or comparison on "
       "it. Drop the check (ops take empty tensors: a loop over experts need not skip an empty "
       "one), or tell torch what holds with `torch._check(...)` (`torch._check_is_size(n)` for "
       "a size) before the line that needs it."},
      // nn.TransformerEncoderLayer and nn.MultiheadAttention in eval under no_grad take the fused
      // inference kernels: with static shapes torch 2.6 keeps them as one opaque op, with dynamic
      // ones (a second sequence length) tracing them fails.
      {R"re(_transformer_encoder_layer_fwd|_native_multi_head_attention)re",
       "In eval mode under `no_grad`, `nn.TransformerEncoderLayer` (and `nn.MultiheadAttention`) "
       "take PyTorch's fused inference \"fast path\", which torch.compile cannot trace once the "
       "shapes are dynamic (and otherwise runs as one opaque kernel): call "
       "`torch.backends.mha.set_fastpath_enabled(False)` before the compiled call, and Inductor "
       "compiles the layer itself."},
      // Checked on torch 2.6 (CPU) with allow_rnn: a GRU compiled and matched eager; an LSTM's
      // compiled call raised an AssertionError in AOTAutograd's runtime wrapper, and in a
      // training loop its hidden state came back 4-D.
      {R"re((?i)graph breaks on RNN, GRU,? (?:or )?LSTM)re", kRnnRemedy},
      // Torch 2.6's speculation restart with no reason: Dynamo met something unsupported at an
      // instruction that is not a call (reading an `nn.LSTM` attribute, `self.rnn`, is one),
      // compiled the graph up to it, and ran the rest of the frame's bytecode as it is: no
      // resume function, so nothing after it compiles (seen on a word-language-model LSTM).
      {R"re(^\s*'?Unknown fail_and_restart_analysis'?\s*$)re",
       "Dynamo stopped at something it does not support where it could not break at a call, and "
       "torch logs no reason for it (`TORCH_LOGS=\"+dynamo\"` prints it at \"step triggered "
       "compile\"). It compiled the graph up to there (the compile's Dynamo graph ends just "
       "before it) and runs the rest of the frame eagerly, uncompiled: unlike a break at a "
       "call, no resume function compiles what follows (functions it calls still compile as "
       "frames of their own). One cause in torch 2.6 is reading an RNN module "
       "(`out, h = self.rnn(x, h)` with an `nn.LSTM`, `nn.GRU` or `nn.RNN`): "
       "torch.compile leaves RNNs out on purpose, so compile the code before and after the RNN "
       "as functions of their own."},
      {R"re(Variable\(Generator\)|torch\.(?:_C\.)?Generator)re",
       "A `torch.Generator` handed to a random op (`generator=g`) cannot be traced: draw that "
       "random tensor outside the compiled function and pass it in, or use the global RNG "
       "inside it (seeded once, outside, with `torch.manual_seed`), which compiled code "
       "supports."},
      {R"re(^Tensor\.requires_grad_$)re",
       "`requires_grad_()` inside a compiled function is not traced: make the tensor require "
       "grad before the call and pass it in, or keep the code that needs gradients with respect "
       "to it (a gradient penalty's `torch.autograd.grad`) out of the compiled region."},
      {R"re(skip function grad in file \S*torch/autograd/__init__\.py)re",
       "`torch.autograd.grad` is not traced: the graph breaks around it. With `create_graph=True` "
       "(a gradient penalty, as in WGAN-GP) the backward of compiled code cannot itself be "
       "differentiated (AOTAutograd has no double backward, so `loss.backward()` raises): run "
       "the penalty term, its model call and `autograd.grad`, eagerly, and compile the rest of "
       "the step."},
      // torch 2.6 on `random.random()` (fairseq's LayerDrop): "unsupported builtin
      // None.Random.random", the hidden Random instance's method.
      {R"re(unsupported builtin (?:None\.)?Random\.(?:random|uniform|randint|choice))re",
       "Python's `random` module is not traced here: decide outside the compiled function and "
       "pass the decision in (a tensor of which layers to keep), or make it a tensor op as "
       "timm's DropPath does, `keep = (torch.rand(()) >= p).to(x.dtype)` and `x = x + keep * "
       "layer(x)`: the layer always runs, scaled by 0 or 1, and the loop is one graph."},
      // torch 2.6 on `h.register_hook(fn)` for an activation inside the compiled forward.
      {R"re(intermediate hooks requires compiled autograd)re",
       "A hook on an intermediate tensor (`h.register_hook(...)` in the forward) splits the graph "
       "there: torch traces it only under compiled autograd, which torch 2.6 keeps experimental "
       "(turning on `torch._dynamo.config.compiled_autograd` alone makes `backward()` fail). "
       "Change "
       "the gradient outside the compiled code instead: after `backward()` (clip `p.grad`, "
       "`torch.nn.utils.clip_grad_norm_`), or with a hook on a parameter registered once, "
       "outside."},
      {R"re(copy\.deepcopy)re",
       "`copy.deepcopy` of a tensor is not traced: use `t.clone()` (and `.detach()` when no "
       "gradient should flow), or copy outside the compiled region."},
  };
  static const FirstMatch* const kRules = [] {
    std::vector<FirstMatch::Pattern> patterns;
    for (const Known& k : kKnown) patterns.push_back({k.pattern});
    return new FirstMatch(patterns);
  }();
  if (const int first = kRules->First(reason); first >= 0) return kKnown[first].remedy;
  // A method of torch's own that Dynamo does not trace into (its file is on torch's skip list):
  // a custom op is no remedy for torch's code. Seen on torch 2.6 with a whole AMP training step
  // compiled: GradScaler.scale, .unscale_, .step and .update each broke the graph.
  static const LazyRE2 kTorchSkipfilesRe = {
      R"re(inline in skipfiles: ([\w.]+) \| \S+ \S*/torch/(\S+\.py))re"};
  if (std::string fn, file; absl::StrContains(reason, "inline in skipfiles: ") &&
                            RE2::PartialMatch(Piece(reason), *kTorchSkipfilesRe, &fn, &file)) {
    std::string out = absl::StrCat(
        "Dynamo does not trace into torch's `", fn, "` (`torch/", file,
        "`, on its skip list), so the graph breaks around each call: call it outside the compiled "
        "function.");
    if (absl::StartsWith(fn, "GradScaler.")) {
      absl::StrAppend(&out,
                      " For mixed precision, compile the model (its forward and loss) and keep "
                      "the scaler's steps outside, as PyTorch's AMP recipe writes them: "
                      "`scaler.scale(loss).backward()`, `scaler.step(opt)`, `scaler.update()` (a "
                      "bfloat16 autocast needs no scaler at all).");
    }
    return out;
  }
  return "";
}

// Specific wording first, then the registry id, then the generic "unsupported" wording that
// many unrelated messages share (the last rule of kCategoryRules).
Category::Value Categorize(absl::string_view text, absl::string_view gb_id) {
  static const FirstMatch* const kRules = [] {
    std::vector<FirstMatch::Pattern> patterns;
    for (const CategoryRule& rule : kCategoryRules) patterns.push_back({rule.pattern});
    return new FirstMatch(patterns);
  }();
  // "unsupported builtin NAME" (its explanation cites `_warnings.warn` as an example): the name
  // decides, not the example.
  static const LazyRE2 kBuiltinRe = {R"re(unsupported (?:Python )?builtin ([\w.]+))re"};
  std::string builtin;
  if (absl::StrContains(text, "builtin ") &&
      RE2::PartialMatch(Piece(text), *kBuiltinRe, &builtin)) {
    static const LazyRE2 kLoggingRe = {R"re(warn|print|log)re"};
    return RE2::PartialMatch(builtin, *kLoggingRe) ? Category::LOGGING : Category::UNSUPPORTED_CALL;
  }
  const int first = kRules->First(text);
  const int last = kRules->size() - 1;
  if (first >= 0 && first < last) return kCategoryRules[first].category;
  if (auto it = CategoryByGbId().find(gb_id); it != CategoryByGbId().end()) return it->second;
  if (first == last) return kCategoryRules[last].category;
  return Category::OTHER;
}

// The reason's first line without the exception-class and repr() wrapping torch adds around
// legacy reasons ("Unsupported: 'skip function ...'").
std::string CleanReasonLine(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  absl::ConsumePrefix(&line, "torch._dynamo.exc.Unsupported: ");
  absl::ConsumePrefix(&line, "Unsupported: ");
  if (line.size() >= 2 && line.front() == '\'' && line.back() == '\'') {
    line = line.substr(1, line.size() - 2);
  }
  // Torch 2.6 puts its advice before what happened; the remedy gives the advice.
  absl::ConsumePrefix(&line, "Consider annotating your code using torch._check*(). ");
  // Torch's pointer to its docs ("For more information about this error, see: https://...") says
  // nothing about this break; the remedy says what to do.
  if (const size_t more = line.find(" For more information about this error, see:");
      more != absl::string_view::npos)
    line = line.substr(0, more);
  // Torch 2.6's paragraph after "unsupported builtin time.time." is the same for every builtin
  // (custom op or allow_in_graph); the remedy says what fits this one.
  if (const size_t boiler = line.find(" This function is either a Python builtin");
      boiler != absl::string_view::npos)
    line = line.substr(0, boiler);
  // Object addresses ("<function log_stats at 0x7f37…>") change from run to run: a base and a head
  // run would otherwise read as a break fixed and a new one at the same line.
  std::string clean(line);
  // Torch's pointer to the custom-op manual ("unsupported operator: aten.x (see https://... for
  // how to fix)") is the same for every operator; the remedy says what fits this one.
  static const LazyRE2 kHowToFixRe = {R"re( \(see https?://\S+ for how to fix\))re"};
  if (absl::StrContains(clean, " for how to fix)")) RE2::Replace(&clean, *kHowToFixRe, "");
  // A builtin's argument types as torch's classes ("builtin: print [<class
  // 'torch._dynamo.variables.constant.ConstantVariable'>] False"): Dynamo's internals, not the
  // user's; the builtin's name is the reason.
  static const LazyRE2 kBuiltinArgsRe = {R"re(^(builtin: \S+) \[<class .*\] (?:True|False)$)re"};
  if (std::string name;
      absl::StartsWith(clean, "builtin: ") && RE2::FullMatch(clean, *kBuiltinArgsRe, &name))
    clean = std::move(name);
  static const LazyRE2 kAddressRe = {R"re( at 0x[0-9a-fA-F]+)re"};
  if (absl::StrContains(clean, " at 0x")) RE2::GlobalReplace(&clean, *kAddressRe, "");
  return clean;
}

bool IsFrameSkip(absl::string_view text) {
  return absl::StrContains(text, "Graph break: skip: from user code at:") ||
         absl::StrContains(text, "Graph break: torch.compile cannot properly resume") ||
         absl::StrContains(text, "will skip tracing the frame") ||
         absl::StrContains(text, "Skipping the function and falling back to eager") ||
         absl::StartsWith(text, "WON'T CONVERT ");
}

}  // namespace

ParsedGraphBreak ParseGraphBreak(absl::string_view text) {
  static const LazyRE2 kHeaderRe = {
      R"re(Graph break(?: \(user stack suppressed due to duplicate graph break\))? in user code at (.+):(\d+))re"};
  static const LazyRE2 kReasonRe = {R"re((?:Graph Break Reason|Reason): (.*))re"};
  static const LazyRE2 kGbIdRe = {R"re(compile-graph-break-site\S*/gb/(?i:gb)(\d{4}))re"};

  ParsedGraphBreak out;
  out.frame_skipped = IsFrameSkip(text);
  std::string header_file, header_line;      // "Graph break in user code at f:l"
  std::optional<v1::StackFrame> user_frame;  // the last frame of the user traceback
  std::string context;           // explanation and debug context of a structured message
  std::string message;           // the text before torch's own traceback
  bool explicit_reason = false;  // a "Reason:" line, which beats a first-line guess
  bool guessed_reason = false;
  bool in_user_traceback = false;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    const absl::string_view line = absl::StripTrailingAsciiWhitespace(raw);
    const absl::string_view trimmed = absl::StripLeadingAsciiWhitespace(line);
    // Torch's own traceback follows the user's; nothing in it is about the user's code.
    if (absl::StartsWith(trimmed, "Traceback (most recent call last):")) break;
    // The user's source lines are not torch's words; keep them out of the categorisation.
    if (!in_user_traceback) absl::StrAppend(&message, line, "\n");
    std::string reason;
    if (absl::StartsWith(line, "Graph break") &&
        RE2::FullMatch(Piece(line), *kHeaderRe, &header_file, &header_line))
      continue;
    if (!explicit_reason &&
        (absl::StartsWith(line, "Reason: ") || absl::StartsWith(line, "Graph Break Reason: ")) &&
        RE2::FullMatch(Piece(line), *kReasonRe, &reason)) {
      out.reason = CleanReasonLine(reason);
      explicit_reason = true;
      continue;
    }
    if (absl::StartsWith(trimmed, "User code traceback:") ||
        absl::StartsWith(trimmed, "from user code:") ||
        absl::EndsWith(trimmed, "from user code at:") ||
        absl::StartsWith(trimmed, "The graph break occurred in the following user code:")) {
      in_user_traceback = true;
      continue;
    }
    if (in_user_traceback) {
      if (std::optional<v1::StackFrame> frame = ParseTracebackFrame(line)) {
        out.function = frame->name();
        user_frame = std::move(frame);
        continue;
      }
    }
    if (absl::StartsWith(trimmed, "Explanation:") ||
        absl::StartsWith(trimmed, "Developer debug context:")) {
      absl::StrAppend(&context, "\n", trimmed);
      continue;
    }
    // With no "Reason:" line, a bare legacy reason or a structured message's gb_type comes first.
    if (!explicit_reason && !guessed_reason && !in_user_traceback && !trimmed.empty() &&
        !absl::StartsWith(trimmed, "Graph break:") && !absl::StartsWith(trimmed, "Hint:") &&
        !absl::StartsWith(trimmed, "==========") && !IsFrameSkip(trimmed)) {
      out.reason = CleanReasonLine(trimmed);
      guessed_reason = true;
    }
  }
  // The header names the breaking line; the traceback's last frame is the same place when the
  // header is missing (explain(), fullgraph errors).
  if (!header_file.empty()) {
    out.file = header_file;
    if (!absl::SimpleAtoi(header_line, &out.line)) out.line = 0;
  } else if (user_frame) {
    out.file = user_frame->file();
    out.line = user_frame->line();
  }
  std::string gb_digits;
  if (absl::StrContains(text, "compile-graph-break-site") &&
      RE2::PartialMatch(Piece(text), *kGbIdRe, &gb_digits))
    out.gb_id = "GB" + gb_digits;
  if (out.frame_skipped && !explicit_reason && !guessed_reason) {
    // A skipped frame's cause is the exception that ends torch's traceback: Dynamo's own by its
    // message ("torch._dynamo.exc.Unsupported: BEFORE_WITH UserDefinedObjectVariable(suppress)"),
    // another by its type too ("torch._subclasses.fake_tensor.DataDependentOutputException:
    // aten._local_scalar_dense.default", which a "WON'T CONVERT" payload of torch 2.6 ends with).
    static const LazyRE2 kDynamoExcRe = {R"re((?m)^torch\._dynamo\.exc\.\w+: (.+)$)re"};
    static const LazyRE2 kOtherExcRe = {
        R"re((?m)^\s*(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*(?:Error|Exception)): (.+)$)re"};
    re2::StringPiece rest = Piece(text);
    std::string type, last;
    while (RE2::FindAndConsume(&rest, *kDynamoExcRe, &last)) out.reason = CleanReasonLine(last);
    if (out.reason.empty()) {
      rest = Piece(text);
      while (RE2::FindAndConsume(&rest, *kOtherExcRe, &type, &last)) continue;  // to the last
      if (!last.empty()) out.reason = CleanReasonLine(absl::StrCat(type, ": ", last));
    }
    // Where the exception came from in the user's code: the traceback torch adds after it
    // ("Original traceback:", the FX node's source).
    if (out.file.empty()) {
      const size_t original = text.rfind("Original traceback:");
      if (original != absl::string_view::npos) {
        for (absl::string_view line : absl::StrSplit(text.substr(original), '\n')) {
          if (std::optional<v1::StackFrame> frame = ParseTracebackFrame(line)) {
            out.file = frame->file();
            out.line = frame->line();
            out.function = frame->name();
          }
        }
      }
    }
  }
  if (out.reason.empty() && out.frame_skipped) out.reason = "frame skipped";

  out.category = Categorize(out.reason + context, out.gb_id);
  // A reason too terse for the rules may still say what it is further down the message.
  if (out.category == Category::OTHER) out.category = Categorize(message, out.gb_id);
  if (out.category == Category::OTHER && out.frame_skipped) out.category = Category::FRAME_SKIP;
  out.remedy = SpecificRemedy(out.reason);
  out.specific = !out.remedy.empty();
  if (!out.specific) out.remedy = RemedyFor(out.category);
  return out;
}

namespace {

// The remedy of a break inside an installed package (`inside`: its file from the package on, and
// line), filed at the user's line that called into it.
std::string InsideLibraryRemedy(absl::string_view inside, absl::string_view entry,
                                bool in_optimizer, const ParsedGraphBreak& parsed) {
  const std::string where = absl::StrCat(
      "The break is inside `", inside, "`",
      entry.empty() ? "" : absl::StrCat(", reached through ", entry), ", not in your code: ");
  // Libraries whose breaks have one cause whatever the call, by the file the break is in.
  struct ByFile {
    absl::string_view prefix;
    const char* remedy;
  };
  static constexpr ByFile kByFile[] = {
      // Seen on torch 2.6: torch.compile(DDP(model)) breaks in DDP's _pre_forward (its C++
      // logger), and what follows (the wrapped model, when its code is torch's) runs eagerly.
      {"torch/nn/parallel/distributed.py",
       "Dynamo could not trace DistributedDataParallel's own forward, and the code after the "
       "break runs eagerly unless it is a frame Dynamo compiles on its own. Compile the module "
       "DDP wraps instead, `DDP(torch.compile(model))`, which keeps DDP's code out of the "
       "compiled frame."},
      // Seen on torch 2.6: quantize_dynamic's Linear passes its packed weights, a TorchScript
      // object, to quantized::linear_dynamic ("UserDefinedObjectVariable(ScriptObject)"); the
      // PT2E flow compiled with no break in the sandbox.
      {"torch/ao/nn/quantized/",
       "modules quantized by torch.ao's eager-mode flow (`quantize_dynamic`, `convert`) run "
       "packed weights that Dynamo cannot trace, so each one breaks the graph. For "
       "torch.compile, quantize with the PT2E flow (`prepare_pt2e` / `convert_pt2e` with "
       "`X86InductorQuantizer` on CPU) or with torchao (`quantize_(model, "
       "int8_dynamic_activation_int8_weight())`), or compile the float model."},
  };
  for (const ByFile& known : kByFile) {
    if (absl::StartsWith(inside, known.prefix)) return absl::StrCat(where, known.remedy);
  }
  if (absl::StartsWith(inside, "torch/_tensor.py") &&
      absl::StrContains(entry, "`__torch_function__`")) {
    // Seen on torch 2.6: a subclass whose __torch_function__ defers to torch.Tensor's breaks there
    // on every op ("UserDefinedObjectVariable(Tagged)"), and the model compiles no op.
    static const LazyRE2 kClassRe = {R"re(UserDefinedObjectVariable\((\w+)\))re"};
    std::string cls;
    RE2::PartialMatch(Piece(parsed.reason), *kClassRe, &cls);
    const std::string named = cls.empty() ? "the subclass" : absl::StrCat("`", cls, "`");
    return absl::StrCat(
        where,
        "a tensor subclass's `__torch_function__` calls torch.Tensor's, which Dynamo "
        "traces only for the classes listed in `torch._dynamo.config.traceable_tensor_subclasses`: "
        "add ",
        named, " to it (`traceable_tensor_subclasses.add(", cls.empty() ? "MyTensor" : cls,
        ")`), or pass plain tensors into the compiled call (`x.as_subclass(torch.Tensor)`).");
  }
  // A remedy for the very call (the transformer fast path) says more than where it is.
  if (parsed.specific) return absl::StrCat(where, parsed.remedy);
  // A library call Dynamo cannot trace (torch 2.6's clip_grad_norm_, whose foreach grouping
  // returns a dict): a custom op is no remedy for someone else's function.
  if (!entry.empty() &&
      (parsed.category == Category::UNSUPPORTED_CALL || parsed.category == Category::OTHER)) {
    return absl::StrCat(where, "Dynamo cannot trace that call here. Call ", entry,
                        " outside the compiled function (before or after the compiled call), or "
                        "check whether a newer torch traces it.");
  }
  if (parsed.category != Category::USER_REQUESTED)
    return absl::StrCat(where, "change how your code calls it. ", parsed.remedy);
  if (!in_optimizer) {
    return absl::StrCat(where,
                        "the library asks for the break there on purpose (it calls "
                        "`torch._dynamo.graph_break()`, or a function under "
                        "`torch.compiler.disable`), and its code at that line says why.");
  }
  return absl::StrCat(
      where,
      "the optimizer's `_use_grad` breaks the graph around `step()` on purpose, so that the "
      "parameter update compiles as a graph of its own, in place and without grad "
      "(pytorch/pytorch#104053); the update still compiles, after the break. Expected where a "
      "function only steps the optimizer; where the step shares a compiled function with the "
      "forward and backward, it splits that graph there: compile the step on its own "
      "(`torch.compile(opt.step)`).");
}

// The library function the user's code called into on the way to a break inside a library (the
// first frame after the user's innermost one, past decorator wrappers: `clip_grad_norm_` under its
// `_no_grad_wrapper`), in code marks: "`clip_grad_norm_`", or "the `forward` of
// `torch/nn/modules/transformer.py`"; "" when `user`, the stack's innermost user frame, is null or
// no function follows it.
std::string LibraryEntry(const google::protobuf::RepeatedPtrField<v1::StackFrame>& stack,
                         const v1::StackFrame* user) {
  if (user == nullptr) return "";
  static const LazyRE2 kWrapperRe = {
      R"re(^(?:_?\w*wrapper|decorate_context|inner|_fn|wrapped)$)re"};
  bool after_user = false;
  for (const v1::StackFrame& f : stack) {
    if (after_user && !RE2::FullMatch(f.name(), *kWrapperRe)) {
      // A module's `forward` says little alone: the file says which module it is.
      if (f.name() == "forward" || f.name() == "__call__")
        return absl::StrCat("the `", f.name(), "` of `", PackagePath(f.file()), "`");
      return absl::StrCat("`", f.name(), "`");
    }
    after_user = after_user || &f == user;
  }
  return "";
}

std::string SkippedFrameRemedy(const v1::Frame* frame, const v1::Session& session,
                               absl::string_view remedy) {
  std::string where = "this frame";
  if (frame != nullptr && !frame->name().empty()) {
    where = absl::StrCat("`", frame->name(), "`");
    if (!frame->file().empty()) {
      const v1::Location at = MakeLocation(session, frame->file(), frame->line());
      absl::StrAppend(&where, " (", at.file(), ":", at.line(), ")");
    }
  }
  return absl::StrCat(
      "Torch compiled nothing for ", where,
      " and runs it eagerly on every call, all of it, not only past this line: a graph break "
      "inside a for/while loop (or one it cannot resume from) skips the whole frame. Fix this "
      "break, or move it out of the loop. ",
      remedy);
}

}  // namespace

absl::StatusOr<std::vector<v1::GraphBreakSummary>> SummarizeGraphBreaks(const PassInput& in) {
  const v1::SessionCapture& capture = in.head;
  absl::flat_hash_map<uint32_t, const v1::Frame*> frames;
  for (const v1::Frame& frame : capture.frames()) frames.emplace(frame.id(), &frame);

  const GraphBreakRestarts restart_breaks(capture);
  std::vector<v1::GraphBreakSummary> out;
  absl::flat_hash_map<std::tuple<std::string, std::string, uint32_t, bool>, size_t> index;
  for (const v1::Compile& compile : capture.compiles()) {
    if (in.Cancelled()) return absl::CancelledError("recompile pass cancelled");
    const bool compiled_nothing = CompiledNothing(compile);
    // The compile's graph-break records, then its restarts that were graph breaks (no stack).
    std::vector<const v1::GraphBreak*> breaks;
    for (const v1::GraphBreak& gb : compile.graph_breaks()) breaks.push_back(&gb);
    std::vector<v1::GraphBreak> restarts;
    for (absl::string_view reason : restart_breaks.Of(compile))
      restarts.emplace_back().set_reason(std::string(reason));
    for (const v1::GraphBreak& gb : restarts) breaks.push_back(&gb);
    for (const v1::GraphBreak* brk : breaks) {
      const v1::GraphBreak& gb = *brk;
      ParsedGraphBreak parsed = ParseGraphBreak(gb.reason());
      // The captured stack is authoritative; the text is the fallback (the breaking frame is last).
      std::string file = parsed.file, function = parsed.function;
      uint32_t line = parsed.line;
      if (!gb.user_stack().empty()) {
        const v1::StackFrame& top = *gb.user_stack().rbegin();
        file = top.file();
        line = top.line();
        function = top.name();
      }
      // A break inside torch (optimizer.py's `_use_grad` during a compiled AdamW step) is filed
      // at the nearest frame of the user's own code on the stack, and says where in torch it is.
      std::string inside, entry;
      bool in_optimizer = false;
      if (IsLibraryFile(file)) {
        inside = absl::StrCat(PackagePath(file), line > 0 ? absl::StrCat(":", line) : "");
        in_optimizer = absl::EndsWith(file, "/torch/optim/optimizer.py");
        const v1::StackFrame* user = InnermostUserFrame(gb.user_stack());
        entry = LibraryEntry(gb.user_stack(), user);
        // No frame of the user's on the break's stack (a compiled DDP wrapper breaks in DDP's
        // forward): the user's line that called the compiled code.
        if (user == nullptr) user = InnermostUserFrame(compile.stack());
        file = user != nullptr ? user->file() : "";
        line = user != nullptr ? user->line() : 0;
        function = user != nullptr ? user->name() : "";
      }
      if (function.empty()) {
        auto it = frames.find(compile.frame_id());
        if (it != frames.end()) function = it->second->name();
      }
      // A break whose frame torch skipped for it is a summary of its own: the same line's breaks
      // elsewhere left their frames compiled.
      const bool skipped_here = compiled_nothing && !parsed.frame_skipped;
      auto key = std::make_tuple(parsed.reason, file, line, skipped_here);
      auto [it, inserted] = index.try_emplace(key, out.size());
      if (inserted) {
        v1::GraphBreakSummary& summary = out.emplace_back();
        summary.set_reason(parsed.reason);
        summary.set_category(parsed.category);
        summary.set_remedy(parsed.remedy);
        if (!inside.empty())
          summary.set_remedy(InsideLibraryRemedy(inside, entry, in_optimizer, parsed));
        if (skipped_here) {
          auto frame = frames.find(compile.frame_id());
          summary.set_remedy(SkippedFrameRemedy(frame != frames.end() ? frame->second : nullptr,
                                                capture.session(), summary.remedy()));
        }
        summary.set_frame(function);
        if (!file.empty()) {
          *summary.mutable_location() = MakeLocation(capture.session(), file, line);
          summary.set_source_line(SourceLine(capture, file, line));
        }
        if (parsed.category == Category::SCALAR_EXTRACTION && !parsed.specific && inside.empty() &&
            !skipped_here && DecidesABranch(summary.source_line()))
          summary.set_remedy(std::string(kScalarBranchRemedy));
      }
      v1::GraphBreakSummary& summary = out[it->second];
      summary.set_count(summary.count() + 1);
      summary.set_frame_skipped(summary.frame_skipped() || parsed.frame_skipped || skipped_here);
    }
  }
  // Most impactful first: a skipped frame runs wholly eager; then the most frequent.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(!a.frame_skipped(), -static_cast<int64_t>(a.count())) <
           std::make_tuple(!b.frame_skipped(), -static_cast<int64_t>(b.count()));
  });
  return out;
}

}  // namespace cl

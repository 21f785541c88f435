#include "analyzers/failures/failures.h"

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analyzers/common/location.h"
#include "analyzers/common/restarts.h"
#include "analyzers/failures/export_findings.h"
#include "analyzers/recompile/graph_breaks.h"
#include "analyzers/recompile/reason.h"
#include "common/utf8.h"
#include "re2/re2.h"

namespace cl {
namespace {

// A traceback is for reading the failure, not for archiving it: the first lines and the last are
// what matter, and the capture keeps the whole payload for whoever needs more.
constexpr size_t kMaxTracebackBytes = 16 << 10;

// "broken_backend" from "backend='broken_backend' raised: ...".
std::string BackendOf(absl::string_view reason) {
  const size_t at = reason.find("backend='");
  if (at == absl::string_view::npos) return "";
  const size_t start = at + 9;
  const size_t end = reason.find('\'', start);
  if (end == absl::string_view::npos) return "";
  return std::string(reason.substr(start, end - start));
}

// The user line torch blamed for the failure, when compilation_metrics names one.
// The innermost frame of the user's own code in the "from user code:" block torch appends to a
// failure's text (`  File "/m/model.py", line 12, in f`), past frames inside installed packages.
bool UserLineOf(absl::string_view text, std::string* file, uint32_t* line) {
  const size_t block = text.rfind("from user code:");
  if (block == absl::string_view::npos) return false;
  google::protobuf::RepeatedPtrField<v1::StackFrame> frames;
  for (absl::string_view l : absl::StrSplit(text.substr(block), '\n')) {
    if (std::optional<v1::StackFrame> frame = ParseTracebackFrame(l)) *frames.Add() = *frame;
  }
  const v1::StackFrame* user = InnermostUserFrame(frames);
  if (user == nullptr) return false;
  *file = user->file();
  *line = user->line();
  return true;
}

// The line torch blames: its fail_user_frame, unless that is inside an installed package (torch
// traces into its own Python: custom_ops.py's __call__ for a custom op with no fake kernel), where
// the user's innermost line in the failure's text stands instead.
bool BlamedLine(const v1::Compile& compile, absl::string_view traceback, std::string* file,
                uint32_t* line) {
  const auto& fields = compile.metrics().fields();
  auto f = fields.find("fail_user_frame_filename");
  auto l = fields.find("fail_user_frame_lineno");
  if (f == fields.end() || l == fields.end() || !f->second.has_string_value() ||
      !l->second.has_number_value() || l->second.number_value() < 1) {
    return false;
  }
  *file = f->second.string_value();
  *line = static_cast<uint32_t>(l->second.number_value());
  if (IsLibraryFile(*file) && !UserLineOf(compile.fail_reason(), file, line))
    UserLineOf(traceback, file, line);
  return !file->empty();
}

// The text between the first `open` and the `close` after it; "" when either is missing.
std::string Between(absl::string_view text, absl::string_view open, absl::string_view close) {
  const size_t start = text.find(open);
  if (start == absl::string_view::npos) return "";
  const size_t end = text.find(close, start + open.size());
  if (end == absl::string_view::npos) return "";
  return std::string(text.substr(start + open.size(), end - start - open.size()));
}

// The compiler's first error in a CppCompileError's output ("no matching function for call to
// ‘map<accum_t>(…’" from "/tmp/…/cxyz.cpp:709:36: error: no matching function …"), clipped; "" when
// the output names none.
std::string FirstCompilerError(absl::string_view reason) {
  constexpr absl::string_view kError = "error: ";
  const size_t output = reason.find("Output:");
  if (output == absl::string_view::npos) return "";
  for (absl::string_view line : absl::StrSplit(reason.substr(output), '\n')) {
    const size_t error = line.find(kError);
    if (error == absl::string_view::npos) continue;
    return ClipUtf8(absl::StripAsciiWhitespace(line.substr(error + kError.size())), 120);
  }
  return "";
}

// What a ConstraintViolationError says of a size the user marked dynamic: the source
// ("L['x'].size()[0]") and, when the code pinned it, the constant.
struct ViolatedSize {
  std::string source;
  std::string constant;
  std::string dim_name;  // torch.export's `Dim("seq")`; empty for mark_dynamic
};

std::optional<ViolatedSize> ViolatedSizeOf(absl::string_view reason) {
  static const LazyRE2 kSourceRe = {R"re((L\[[^\]]+\](?:\.\w+|\[[^\]]+\])*?\.size\(\)\[\d+\]))re"};
  static const LazyRE2 kConstantRe = {
      R"re((?:inferred to be a constant|specialized it to be a constant) \((-?\d+)\))re"};
  ViolatedSize out;
  if (!RE2::PartialMatch(re2::StringPiece(reason.data(), reason.size()), *kSourceRe, &out.source))
    return std::nullopt;
  RE2::PartialMatch(re2::StringPiece(reason.data(), reason.size()), *kConstantRe, &out.constant);
  // torch.export names the Dim: "Not all values of seq = L['ids'].size()[1] in the specified
  // range are valid".
  static const LazyRE2 kDimRe = {R"re(Not all values of (\w+) = L\[)re"};
  RE2::PartialMatch(re2::StringPiece(reason.data(), reason.size()), *kDimRe, &out.dim_name);
  return out;
}

// "`x` dim 0" for "L['x'].size()[0]", named as a recompile's guard names it.
std::string SizeWords(absl::string_view source) {
  const GuardFailure size = ClassifyGuardCheck(source);
  return absl::StrCat("`", size.variable, "` dim ", size.dim);
}

// A size marked dynamic (`mark_dynamic`) that the code needs to be one value or to relate to
// another fails the compile instead of specialising; `pinned_at` is the user's line that pinned
// it ("" when the capture does not say).
std::string ConstraintRemedy(absl::string_view reason, absl::string_view pinned_at) {
  const std::optional<ViolatedSize> size = ViolatedSizeOf(reason);
  const std::string what = size ? SizeWords(size->source) : "A size";
  if (size && !size->dim_name.empty()) {
    // torch.export: the size was declared dynamic in `dynamic_shapes`.
    return absl::StrCat(
        what, " was declared dynamic (`Dim(\"", size->dim_name,
        "\")` in `dynamic_shapes`), but the code ",
        size->constant.empty() ? "constrains it (the reason says how)"
                               : absl::StrCat("needs it to be exactly ", size->constant),
        pinned_at.empty() ? "" : absl::StrCat(" at ", pinned_at),
        ", so export refused it. Make that code size-generic, or declare the dim as the code "
        "has it: `Dim.AUTO` lets export specialise it or keep it dynamic as the code allows, "
        "`Dim.STATIC` (or leaving it out of `dynamic_shapes`) keeps it fixed.");
  }
  if (size && !size->constant.empty()) {
    return absl::StrCat(
        what,
        " was marked dynamic (`torch._dynamo.mark_dynamic`), but the code needs it to be "
        "exactly ",
        size->constant, pinned_at.empty() ? "" : absl::StrCat(" at ", pinned_at),
        ", so torch refused to compile rather than specialise it. Make that code size-generic "
        "(`-1` or `x.shape[0]` where the number is written), or mark the size with "
        "`torch._dynamo.maybe_mark_dynamic`, which lets torch specialise it instead of failing.");
  }
  return absl::StrCat(
      what,
      " was marked dynamic (`torch._dynamo.mark_dynamic`), but the code constrains it (the "
      "reason says how), so torch refused to compile rather than add the constraint. Relax that "
      "code, or mark the size with `torch._dynamo.maybe_mark_dynamic`, which lets torch add it "
      "instead of failing.");
}

// The user's line that pinned the size a ConstraintViolationError names: the compile's
// symbolic_shape_specialization of that source.
const v1::StackFrame* PinnedAt(const v1::Compile& compile) {
  const std::optional<ViolatedSize> size = ViolatedSizeOf(compile.fail_reason());
  if (!size) return nullptr;
  return SpecializedAt(compile, [&](absl::string_view source) { return source == size->source; });
}

// An extra's record text: the importer keeps the record's JSON metadata line, then its payload
// (capture/torch_trace/trace_parser.cc, KeepExtra); empty for a record that had none.
absl::string_view ExtraBody(const v1::Extra& extra) {
  const absl::string_view text = extra.payload();
  const size_t nl = text.find('\n');
  return nl == absl::string_view::npos ? absl::string_view() : text.substr(nl + 1);
}

}  // namespace

std::string FailureRemedy(absl::string_view fail_type, absl::string_view reason, bool exported) {
  if (fail_type == "BackendCompilerFailed") {
    // Causes in the machine, not in the model: no minifier finds them.
    if (absl::StrContains(reason, "InvalidCxxCompiler") ||
        absl::StrContains(reason, "No working C++ compiler")) {
      return "Inductor found no working C++ compiler, which it needs for every CPU graph (and "
             "its CPU-side wrappers): install one in the image (g++ or clang++), or point "
             "`torch._inductor.config.cpp.cxx` (or `CXX`) at the one there is.";
    }
    if (absl::StrContains(reason, "Python.h")) {
      return "Inductor's generated C++ could not include `Python.h`: install the Python "
             "development headers of this interpreter in the image (`python3-dev`).";
    }
    if (absl::StrContains(reason, "omp.h")) {
      return "Inductor's generated C++ uses OpenMP, and the compiler found no `omp.h`: install "
             "OpenMP for that compiler (`libomp-dev` for clang on Debian, `brew install libomp` on "
             "macOS), or point `torch._inductor.config.cpp.cxx` at a compiler that has it.";
    }
    if (absl::StrContains(reason, "CppCompileError")) {
      // Anything else the compiler refused: the generated code itself, or headers and a compiler
      // it was not written for (seen: torch 2.6's CPU flex_attention template under GCC 14).
      const std::string error = FirstCompilerError(reason);
      return absl::StrCat(
          "Inductor's generated C++ did not compile",
          error.empty() ? "" : absl::StrCat(" (the compiler's first error: ", error, ")"),
          ". Generated code that does not compile is a bug in Inductor, or a compiler or torch "
          "headers it does not expect: report it to PyTorch with the compiler's version and "
          "the generated file the command names. Meanwhile `torch._inductor.config.cpp.cxx` can "
          "name another compiler, or `torch.compiler.disable` on the function keeps it eager.");
    }
    if (absl::StrContains(reason, "Cannot find a working triton installation")) {
      return "Inductor needs Triton for GPU graphs and found none that works: install the "
             "`triton` build that matches this torch (`pytorch-triton` for nightlies).";
    }
    const std::string backend = BackendOf(reason);
    return absl::StrCat(
        "The backend", backend.empty() ? "" : absl::StrCat(" (", backend, ")"),
        " raised while compiling the graph Dynamo captured, so this frame did not run compiled. "
        "Reproduce it as a minified script with TORCHDYNAMO_REPRO_AFTER=\"dynamo\" "
        "(torch._dynamo.config.repro_after; \"aot\" minifies after AOTAutograd, for Inductor "
        "failures); a backend of your own can be run on the graph outside torch.compile.");
  }
  if (absl::StrContains(reason, "SpeculationLog diverged")) {
    // Dynamo's second trace of the frame (after a restart) took another path than its first.
    // Seen on torch 2.6 with a float argument made a graph input (specialize_float off) feeding
    // F.interpolate's scale_factor; specialize_float = True compiled it.
    return "A bug in Dynamo: after restarting its analysis of the frame, the second trace took "
           "another path than the first. Report it to PyTorch (with TORCH_LOGS=\"+dynamo\"). "
           "Where a float argument had just become a graph input (`specialize_float` is off by "
           "default in torch 2.6) and feeds an op such as `F.interpolate(scale_factor=...)`, "
           "`torch._dynamo.config.specialize_float = True` avoids it (each value then compiles "
           "its own graph); else `torch.compiler.disable` on the function keeps it eager.";
  }
  if (fail_type == "InternalTorchDynamoError") {
    return "A bug in Dynamo, not in this code: report it to PyTorch with the traceback (a script "
           "minified with TORCHDYNAMO_REPRO_AFTER=\"dynamo\" helps). Until it is fixed, "
           "torch._dynamo.disable on the function keeps it eager.";
  }
  if (fail_type == "Unsupported" &&
      absl::StrContains(reason, "Backend compiler failed with a fake tensor exception")) {
    // Seen on torch 2.6: `torch.split(e, lengths.tolist())` traced `.item()` calls whose values
    // became sizes; AOTAutograd's fake tensors raised DataDependentOutputException, the retry with
    // a graph break there raised again, and the frame was skipped ("WON'T CONVERT").
    return "The backend raised on fake tensors while compiling the captured graph, most often "
           "at an op whose result depends on tensor data (`.item()` or `.tolist()` values used "
           "as sizes, `nonzero`); Dynamo retried with a graph break there, failed the same way, "
           "and ran the frame eagerly. The graph-break section names the exception and the line "
           "it came from, with its remedy.";
  }
  if (fail_type == "Unsupported") {
    // What the reason names is what a graph break would have named: its remedy applies.
    const ParsedGraphBreak named = ParseGraphBreak(reason);
    // A remedy for the very call (an nn.LSTM) says all there is to do.
    if (named.specific) {
      return absl::StrCat(
          "Dynamo cannot trace what the reason names, and could not graph-break "
          "around it, so the frame ran eagerly: ",
          named.remedy);
    }
    const bool known = named.category != v1::GraphBreakCategory::OTHER &&
                       named.category != v1::GraphBreakCategory::UNSPECIFIED;
    // Not only fullgraph=True: a frame's input Dynamo cannot wrap (a strided NestedTensor) or a
    // construct that cannot break leaves no place to break either.
    return absl::StrCat(
        "Dynamo cannot trace what the reason names, and could not graph-break around it "
        "(under fullgraph=True, inside a construct that cannot break, or at an input of the frame "
        "it cannot wrap), so the frame ran eagerly: ",
        known ? named.remedy
              : "rewrite that code, or pass that input in a form torch.compile supports.",
        " Under fullgraph=True, compiling without it lets the frame break there instead.");
  }
  if (fail_type == "TorchRuntimeError" && absl::StrContains(reason, "no fake impl registered")) {
    // torch.library.custom_op without register_fake: eagerly the op runs; tracing needs to know
    // what it returns without running it.
    const std::string op = Between(reason, "<CustomOpDef(", ")>");
    const std::string hint = Between(reason, "Please use `", "`");  // "scaled_clip.register_fake"
    return absl::StrCat(
        "The custom op", op.empty() ? "" : absl::StrCat(" `", op, "`"),
        " has no fake kernel, which torch.compile needs to trace it (eagerly it runs fine): "
        "register one with `@",
        absl::EndsWith(hint, ".register_fake") ? hint : "my_op.register_fake",
        "`, a function of the same arguments that returns empty tensors of the outputs' shapes "
        "and dtypes (`torch.empty_like(x)` for an elementwise op).");
  }
  if (fail_type == "TorchRuntimeError") {
    return "An operation failed while Dynamo traced it with fake tensors (a shape or dtype "
           "mismatch, an op with no fake kernel). The same call usually fails eagerly too: run "
           "the function without torch.compile to see it.";
  }
  if (fail_type == "ConstraintViolationError") return ConstraintRemedy(reason, "");
  if (fail_type == "UserError" &&
      absl::StrContains(reason, "Dynamic control flow is not supported")) {
    // fullgraph=True (or export) on a Python `if` over a tensor's value; torch's text still names
    // functorch.experimental.control_flow.cond, which torch.cond replaced.
    if (exported) {
      return "torch.export needs the whole forward as one graph, and a Python `if` on a tensor's "
             "value cannot be one: write it as `torch.cond(pred, true_fn, false_fn, (x,))`, or "
             "as `torch.where(pred, a, b)` where both branches are cheap.";
    }
    return "A Python `if` on a tensor's value cannot be one graph (fullgraph=True): write it as "
           "`torch.cond(pred, true_fn, false_fn, (x,))`, or as `torch.where(pred, a, b)` where "
           "both branches are cheap, or compile without fullgraph=True to let it break there.";
  }
  if (fail_type == "UserError") {
    return "torch refused the code as written; the reason says what to change.";
  }
  if (absl::StrContains(fail_type, "LimitExceeded")) {
    return "The frame hit Dynamo's recompile limit (torch._dynamo.config.cache_size_limit): see "
           "the Recompile section for why it kept recompiling.";
  }
  return "";
}

absl::Status FailuresPass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  const v1::SessionCapture& capture = in.head;
  v1::FailuresSection* section = out->mutable_failures();
  // Kept as extras: the tracebacks of failed compiles, and the program an export made (later
  // torch logs it).
  absl::flat_hash_map<std::string, const v1::Extra*> tracebacks;
  const v1::Extra* program = nullptr;
  for (const v1::Extra& extra : capture.extras()) {
    if (extra.kind() == "artifact:dynamo_error" && !extra.compile_id().empty())
      tracebacks.emplace(extra.compile_id(), &extra);
    if (extra.kind() == "exported_program" && extra.compile_id().empty()) program = &extra;
  }
  if (capture.compiles().empty() && capture.export_issues().empty() && program == nullptr) {
    section->set_status(v1::SKIPPED);
    section->set_reason("the capture holds no compile");
    return absl::OkStatus();
  }
  AddExportFindings(capture, section);
  if (program != nullptr) {
    section->set_exported_program(std::string(ExtraBody(*program)));
    section->set_exported_program_clipped(program->truncated());
  }
  absl::flat_hash_map<uint32_t, const v1::Frame*> frames;
  for (const v1::Frame& frame : capture.frames()) frames.emplace(frame.id(), &frame);

  for (const v1::Compile& compile : capture.compiles()) {
    if (in.Cancelled()) return absl::CancelledError("failures pass cancelled");
    auto frame_it = frames.find(compile.frame_id());
    const v1::Frame* frame = frame_it == frames.end() ? nullptr : frame_it->second;
    std::string name = frame != nullptr ? frame->name() : "";
    v1::Location frame_location =
        frame != nullptr ? MakeLocation(capture.session(), frame->file(), frame->line())
                         : v1::Location();
    if (const v1::StackFrame* user =
            frame != nullptr ? NameTorchWrapper(compile, frame->file(), &name) : nullptr)
      frame_location = MakeLocation(capture.session(), user->file(), user->line());

    if (compile.status() == v1::Compile::FAILED || !compile.fail_type().empty()) {
      v1::FailedCompile* failed = section->add_failed();
      failed->set_compile_id(compile.id());
      failed->set_frame(name);
      absl::string_view traceback;
      if (auto tb = tracebacks.find(compile.id()); tb != tracebacks.end()) {
        traceback = ExtraBody(*tb->second);
        failed->set_traceback(ClipUtf8(traceback, kMaxTracebackBytes));
      }
      std::string file;
      uint32_t line = 0;
      *failed->mutable_location() = BlamedLine(compile, traceback, &file, &line)
                                        ? MakeLocation(capture.session(), file, line)
                                        : frame_location;
      failed->set_fail_type(compile.fail_type());
      failed->set_reason(compile.fail_reason());
      failed->set_exported(IsExportCompile(compile));
      failed->set_remedy(
          FailureRemedy(compile.fail_type(), compile.fail_reason(), failed->exported()));
      if (compile.fail_type() == "ConstraintViolationError") {
        // The line that pinned the size is where to look, not the frame's first line.
        if (const v1::StackFrame* pinned = PinnedAt(compile)) {
          *failed->mutable_location() =
              MakeLocation(capture.session(), pinned->file(), pinned->line());
          failed->set_remedy(ConstraintRemedy(
              compile.fail_reason(),
              absl::StrCat(failed->location().file(), ":", failed->location().line())));
        }
      }
    }
    if (!compile.restart_reasons().empty()) {
      v1::RestartedCompile* restart = section->add_restarts();
      restart->set_compile_id(compile.id());
      restart->set_frame(name);
      *restart->mutable_location() = frame_location;
      bool graph_break = false;
      for (const std::string& reason : compile.restart_reasons()) {
        // A break's reason as the graph-break table words it (no docs link torch appends).
        const bool is_break = IsGraphBreakRestart(reason);
        const std::string words = is_break ? ParseGraphBreak(reason).reason : "";
        restart->add_reasons(words.empty() ? reason : words);
        graph_break = graph_break || is_break;
      }
      restart->set_graph_break(graph_break);
    }
  }
  section->set_compiles(static_cast<uint32_t>(capture.compiles_size()));
  section->set_status(v1::OK);
  return absl::OkStatus();
}

}  // namespace cl

#include "analyzers/common/location.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "common/utf8.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

std::string RelativeToProjectRoot(absl::string_view project_root, absl::string_view file) {
  // A root of "/" or "" would make every absolute path "relative" to it; neither names a project.
  absl::string_view root = project_root;
  while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
  if (root.empty() || root == "/") return std::string(file);

  absl::string_view rest = file;
  if (!absl::ConsumePrefix(&rest, root)) return std::string(file);
  // The root must end at a component boundary, and the remainder must name something.
  if (!absl::ConsumePrefix(&rest, "/")) return std::string(file);
  while (absl::ConsumePrefix(&rest, "/")) {
  }
  if (rest.empty()) return std::string(file);
  return std::string(rest);
}

compile_lens::v1::Location MakeLocation(absl::string_view project_root, absl::string_view file,
                                        uint32_t line) {
  compile_lens::v1::Location location;
  location.set_file(RelativeToProjectRoot(project_root, file));
  location.set_line(line);
  return location;
}

compile_lens::v1::Location MakeLocation(const compile_lens::v1::Session& session,
                                        absl::string_view file, uint32_t line) {
  return MakeLocation(session.project_root(), file, line);
}

const v1::StackFrame* InnermostUserFrame(
    const google::protobuf::RepeatedPtrField<v1::StackFrame>& stack) {
  for (auto frame = stack.rbegin(); frame != stack.rend(); ++frame) {
    if (!IsLibraryFile(frame->file())) return &*frame;
  }
  return nullptr;
}

const v1::StackFrame* TorchWrapperCallSite(const v1::Compile& compile,
                                           absl::string_view frame_file) {
  if (!absl::StrContains(frame_file, "/torch/_dynamo/")) return nullptr;
  return InnermostUserFrame(compile.stack());
}

const v1::StackFrame* NameTorchWrapper(const v1::Compile& compile, absl::string_view frame_file,
                                       std::string* name) {
  const v1::StackFrame* user = TorchWrapperCallSite(compile, frame_file);
  if (user != nullptr) name->append(" (torch's wrapper of a compiled module)");
  return user;
}

const v1::StackFrame* SpecializedAt(const v1::Compile& compile,
                                    absl::FunctionRef<bool(absl::string_view source)> matches) {
  for (const v1::Specialization& s : compile.specializations()) {
    for (const std::string& source : s.sources()) {
      if (!matches(source)) continue;
      if (const v1::StackFrame* user = InnermostUserFrame(s.user_stack())) return user;
    }
  }
  return nullptr;
}

std::optional<v1::StackFrame> ParseTracebackFrame(absl::string_view line) {
  line = absl::StripLeadingAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&line, "File \"")) return std::nullopt;
  // The path may hold `", line ` itself: the last one ends it.
  const size_t quote = line.rfind("\", line ");
  if (quote == absl::string_view::npos || quote == 0) return std::nullopt;
  absl::string_view rest = line.substr(quote + 8);
  const size_t in = rest.find(", in ");
  uint32_t number = 0;
  if (in == absl::string_view::npos || in + 5 >= rest.size() ||
      !absl::SimpleAtoi(rest.substr(0, in), &number))
    return std::nullopt;
  v1::StackFrame frame;
  frame.set_file(std::string(line.substr(0, quote)));
  frame.set_line(number);
  frame.set_name(std::string(rest.substr(in + 5)));
  return frame;
}

namespace {

// torch's public top-level modules and packages; every private one starts with "_".
// clang-format off
constexpr absl::string_view kTorchMembers[] = {
    "accelerator", "amp", "ao", "autograd", "backends", "compiler", "cpu", "cuda", "distributed",
    "distributions", "export", "fft", "func", "functional", "futures", "fx", "hub", "jit",
    "library", "linalg", "masked", "monitor", "mps", "mtia", "multiprocessing", "nested", "nn",
    "onnx", "optim", "overrides", "package", "profiler", "quantization", "random", "return_types",
    "serialization", "signal", "sparse", "special", "storage", "testing", "types", "utils", "xpu"};
// clang-format on

// A file of a torch source tree that is not installed as a package (a checkout installed with
// `pip install -e`, a fbcode xar): `.../torch/<member>...` where the member is one of torch's
// own, not a user's folder that happens to be called torch.
bool IsTorchSourceFile(absl::string_view file) {
  constexpr absl::string_view kTorch = "/torch/";
  for (size_t at = file.find(kTorch); at != absl::string_view::npos;
       at = file.find(kTorch, at + 1)) {
    if (IsTorchPackagePath(file.substr(at + kTorch.size()))) return true;
  }
  return false;
}

}  // namespace

bool IsTorchPackagePath(absl::string_view relative) {
  const absl::string_view member = relative.substr(0, relative.find_first_of("/.:"));
  if (member.empty()) return false;
  return member.front() == '_' || std::find(std::begin(kTorchMembers), std::end(kTorchMembers),
                                            member) != std::end(kTorchMembers);
}

bool IsLibraryFile(absl::string_view file) {
  return absl::StrContains(file, "/site-packages/") || absl::StrContains(file, "/dist-packages/") ||
         absl::StrContains(file, "/lib/python3") || absl::StartsWith(file, "<") ||
         IsTorchSourceFile(file);
}

bool IsExportCompile(const compile_lens::v1::Compile& compile) {
  return std::any_of(compile.stack().begin(), compile.stack().end(),
                     [](const compile_lens::v1::StackFrame& f) {
                       return absl::StrContains(f.file(), "/torch/export/") ||
                              absl::StrContains(f.file(), "/torch/_export/");
                     });
}

absl::string_view PackagePath(absl::string_view file) {
  for (absl::string_view packages : {"/site-packages/", "/dist-packages/"}) {
    if (const size_t at = file.rfind(packages); at != absl::string_view::npos)
      return file.substr(at + packages.size());
  }
  return file;
}

std::string SourceLine(const compile_lens::v1::SessionCapture& capture, absl::string_view file,
                       uint32_t line) {
  if (line == 0) return "";
  for (const compile_lens::v1::SourceFile& source : capture.sources()) {
    if (source.path() != file) continue;
    absl::string_view text = source.text();
    for (uint32_t n = 1; n < line; ++n) {
      const size_t eol = text.find('\n');
      if (eol == absl::string_view::npos) return "";
      text.remove_prefix(eol + 1);
    }
    text = text.substr(0, text.find('\n'));
    text = absl::StripAsciiWhitespace(text);
    return ClipUtf8(text, 200);
  }
  return "";
}

}  // namespace cl

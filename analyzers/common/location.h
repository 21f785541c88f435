// Report locations for user source positions.
//
// The JSON report contract (docs/design.md §6) gives every location's `file` relative to the
// project root the capture names, so that reports from different machines (and the HTML's
// `{repo}/...` links) agree. Every pass that reports a place in user code builds it here.
#ifndef ANALYZERS_COMMON_LOCATION_H_
#define ANALYZERS_COMMON_LOCATION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

// `file` relative to `project_root` when it lies under it ("/mnt/project/examples/a.py" under
// "/mnt/project" → "examples/a.py"); otherwise, or when the root is empty, `file` unchanged.
// The comparison is on path components: "/mnt/projectX/a.py" is not under "/mnt/project".
std::string RelativeToProjectRoot(absl::string_view project_root, absl::string_view file);

// A report Location for `file`:`line` (line 0: unknown, left unset).
compile_lens::v1::Location MakeLocation(absl::string_view project_root, absl::string_view file,
                                        uint32_t line);

// The same, with the project root of `session`.
compile_lens::v1::Location MakeLocation(const compile_lens::v1::Session& session,
                                        absl::string_view file, uint32_t line);

// The innermost frame of `stack` (outermost first, as torch logs stacks) in the user's own code,
// not in an installed package (IsLibraryFile); null when every frame is a package's.
const compile_lens::v1::StackFrame* InnermostUserFrame(
    const google::protobuf::RepeatedPtrField<compile_lens::v1::StackFrame>& stack);

// Whether torch.export traced `compile` rather than torch.compile: its stack (where Dynamo was
// entered) runs through torch/export (`torch.export.export` calls Dynamo from torch/export/
// _trace.py in torch 2.6). A failed one raised to the caller; nothing was to run compiled.
bool IsExportCompile(const compile_lens::v1::Compile& compile);

// A frame whose code is torch's own wrapper (torch/_dynamo/external_utils.py's `inner`: all torch
// compiles for a compiled module whose forward is torch's too, an nn.Sequential) says nothing to
// the user; the user's line that called the compiled module does. That line, the innermost frame
// of `compile`'s stack outside installed packages, when `frame_file` is such a wrapper; else null.
const compile_lens::v1::StackFrame* TorchWrapperCallSite(const compile_lens::v1::Compile& compile,
                                                         absl::string_view frame_file);

// The same for a frame the report names and places: when `frame_file` is torch's wrapper, says so
// after `*name` ("inner (torch's wrapper of a compiled module)") and returns the user's call site
// to place the frame at; else null, `*name` unchanged.
const compile_lens::v1::StackFrame* NameTorchWrapper(const compile_lens::v1::Compile& compile,
                                                     absl::string_view frame_file,
                                                     std::string* name);

// The user's line where `compile` made a symbol a constant: the innermost user frame of the first
// of torch's symbolic_shape_specialization records with a source (`L['x'].size()[1]`) that
// `matches`; null when none names a user line.
const compile_lens::v1::StackFrame* SpecializedAt(
    const compile_lens::v1::Compile& compile,
    absl::FunctionRef<bool(absl::string_view source)> matches);

// One frame line of a Python traceback as torch prints it, `  File "/m/model.py", line 12, in f`;
// nullopt for any other line.
std::optional<compile_lens::v1::StackFrame> ParseTracebackFrame(absl::string_view line);

// A file of torch's or another installed package's (site-packages, dist-packages, the standard
// library, "<frozen ...>"), or of a torch source tree run uninstalled (".../pytorch/torch/_dynamo/
// ...", torch's own modules under a torch/ folder): not the user's to edit.
bool IsLibraryFile(absl::string_view file);

// A path inside torch's package, relative to it ("nn/modules/conv.py", "_ops.py", "random.py:12"):
// its first component is one of torch's modules, private ("_dynamo") or public ("nn").
bool IsTorchPackagePath(absl::string_view relative);

// An installed package's file from its package on ("/usr/lib/python3/dist-packages/torch/optim/
// optimizer.py" → "torch/optim/optimizer.py": the part that is the same on every machine, and
// short enough for a sentence); any other file unchanged.
absl::string_view PackagePath(absl::string_view file);

// The text of line `line` (1-based) of `file` as the capture holds it (sources[], under the path
// the log named), without its indentation and cut to 200 bytes; empty when the capture has no
// such source or line.
std::string SourceLine(const compile_lens::v1::SessionCapture& capture, absl::string_view file,
                       uint32_t line);

}  // namespace cl

#endif  // ANALYZERS_COMMON_LOCATION_H_

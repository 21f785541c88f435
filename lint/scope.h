// The compiled region: which functions of the captured files run under Dynamo
// (docs/torch-semantics.md §5.1).
//
// Roots are functions decorated with @torch.compile / @torch._dynamo.optimize(...) /
// @torch.compiler.nested_compile_region, the target of `torch.compile(f)` and of
// `torch._dynamo.optimize(...)(f)`, the class's forward for `torch.compile(model)` and
// `model.compile()` (model resolved through `model = ClassName(...)`), and every frame the capture
// says Dynamo compiled. The region is their transitive closure over calls resolvable in the
// captured files (plain calls, nested functions, self.method(), self.submodule(...) and
// `for m in self.layers: m(...)` through the submodule's class, super().method(), obj.method() for
// an instance of a known class, imported functions). The closure stops at @torch.compiler.disable,
// @torch._dynamo.disable and @...assume_constant_result.
//
// A file with no root, no compile call and no function reached from another file's root is
// scanned in "assume compiled" mode: all its functions count, and findings there are marked so
// (their severity is lowered one step when rated).
#ifndef LINT_SCOPE_H_
#define LINT_SCOPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lint/module_index.h"

namespace cl::lint {

// A code object the capture says Dynamo compiled (SessionCapture.frames).
struct CompiledFrame {
  std::string file;  // as the capture names it (the same spelling as the source's path)
  std::string name;
  uint32_t line = 0;  // co_firstlineno
};

struct RegionRoot {
  int file = -1;
  int function = -1;
  std::string why;  // "torch.compile(model) at line 118", "@torch.compile", "compiled frame"
};

// Canonical names of the calls and decorators that make roots or stop the closure.
bool IsCompileCallee(absl::string_view callee);  // torch.compile
bool IsCompileDecorator(
    absl::string_view callee);  // torch.compile, optimize, nested_compile_region
bool IsExcludingDecorator(absl::string_view callee);  // disable, assume_constant_result

class CompiledRegion {
 public:
  static CompiledRegion Compute(const std::vector<const ModuleIndex*>& files,
                                const std::vector<CompiledFrame>& frames);

  // Whether function `function` of file `file` runs compiled (assumed files: every function not
  // excluded).
  bool InRegion(int file, int function) const;
  bool Excluded(int file, int function) const;
  // The file is scanned as if compiled (no root reaches it).
  bool Assumed(int file) const { return assumed_[file]; }
  const std::vector<RegionRoot>& roots() const { return roots_; }

 private:
  enum class State : uint8_t { kOutside, kCompiled, kExcluded };
  std::vector<std::vector<State>> state_;
  std::vector<bool> assumed_;
  std::vector<RegionRoot> roots_;

  friend class RegionBuilder;
};

}  // namespace cl::lint

#endif  // LINT_SCOPE_H_

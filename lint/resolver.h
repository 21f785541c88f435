// Name resolution across the captured files: classes, functions and methods by canonical name,
// the class an instance was made from, the classes a `self.X` attribute holds, the functions a
// call reaches. By name only (no types): what the compiled region and a few detectors need.
#ifndef LINT_RESOLVER_H_
#define LINT_RESOLVER_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "lint/module_index.h"

namespace cl::lint {

struct FunctionRef {
  int file = -1;
  int function = -1;
  bool ok() const { return file >= 0 && function >= 0; }
  bool operator==(const FunctionRef& o) const { return file == o.file && function == o.function; }
};

struct ClassRef {
  int file = -1;
  int cls = -1;
  bool ok() const { return file >= 0 && cls >= 0; }
  bool operator==(const ClassRef& o) const { return file == o.file && cls == o.cls; }
};

class Resolver {
 public:
  explicit Resolver(const std::vector<const ModuleIndex*>& files) : files_(files) {}

  const ModuleIndex& file(int i) const { return *files_[i]; }
  int file_count() const { return static_cast<int>(files_.size()); }

  // "Block" (in `file`), "models.Block" or ".models.Block" (an imported one).
  ClassRef ResolveClass(int file, absl::string_view canonical) const;
  FunctionRef ResolveFunction(int file, absl::string_view canonical) const;
  // `name` on class `c` or, failing that, on its bases (by name, a few levels up).
  FunctionRef FindMethod(ClassRef c, absl::string_view name) const;
  // The class a function is (or is nested in) a method of.
  ClassRef EnclosingClass(int file, int function) const;
  // The class of the instance `name` holds at `pos`: its binding in `view` (or the module's
  // top-level one) is `ClassName(...)` for a class in the files.
  ClassRef InstanceClass(int file, const FunctionView& view, absl::string_view name,
                         uint32_t pos) const;
  // The classes constructed into `self.attr` in class `c` (and its bases).
  std::vector<ClassRef> AttributeClasses(ClassRef c, absl::string_view attr) const;
  // The functions a call in `view` (of function `function`, -1 at module level) may run.
  void CallTargets(int file, int function, const FunctionView& view, const CallSite& call,
                   std::vector<FunctionRef>* out) const;

 private:
  // Files whose module path ends with `module` ("pkg.models", ".models").
  bool ModuleMatches(int file, absl::string_view module) const;
  ClassRef ClassByLastName(int file, absl::string_view canonical) const;

  const std::vector<const ModuleIndex*>& files_;
};

}  // namespace cl::lint

#endif  // LINT_RESOLVER_H_

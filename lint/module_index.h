// One captured Python file, indexed: its imports, functions, classes, module-level bindings, and a
// FunctionView per function (plus one for the module's top-level code).
//
// Names are canonicalized through the file's imports ("F.relu" → "torch.nn.functional.relu",
// "np.random.rand" → "numpy.random.rand"); a handful of stateful objects are canonicalized through
// the call that made them (`rng = random.Random(0)`; `rng.shuffle` → "random.Random().shuffle"),
// so that detectors match one spelling.
#ifndef LINT_MODULE_INDEX_H_
#define LINT_MODULE_INDEX_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "lint/function_view.h"
#include "lint/syntax_tree.h"

namespace cl::lint {

struct Param {
  absl::string_view name;
  NodeId node = kNoNode;
  NodeId annotation = kNoNode;
  NodeId default_value = kNoNode;
  bool splat = false;  // *args, **kwargs
};

struct FunctionInfo {
  NodeId node = kNoNode;    // the function_definition
  uint32_t first_line = 0;  // its first decorator's line, or the def's (Python's co_firstlineno)
  absl::string_view name;
  std::string qualname;                      // "Scene.forward", "outer.<locals>.inner"
  int cls = -1;                              // the class it is a method of, or -1
  int parent = -1;                           // the function it is nested in, or -1
  int view = -1;                             // index into ModuleIndex::views
  std::vector<NodeId> decorators;            // decorator expressions
  std::vector<std::string> decorator_names;  // canonical; a call decorator by its callee
  std::vector<Param> params;
};

struct ClassInfo {
  NodeId node = kNoNode;
  absl::string_view name;
  std::string qualname;
  std::vector<std::string> bases;  // canonical
  absl::flat_hash_map<absl::string_view, int> methods;
  // `self.X = ...` anywhere in the class: the callables constructed on the right-hand side
  // (canonical), so that `self.X(...)` and `for m in self.X: m(...)` resolve to their forward.
  absl::flat_hash_map<absl::string_view, std::vector<std::string>> attr_types;
  absl::flat_hash_map<absl::string_view, NodeId> class_attrs;  // assigned in the class body
};

class ModuleIndex {
 public:
  // Indexes `tree` (which must outlive the index).
  ModuleIndex(std::string path, const SyntaxTree& tree);

  const std::string& path() const { return path_; }
  const SyntaxTree& tree() const { return tree_; }
  // Whether the file imports torch (or functorch): where unannotated parameters and self.sub(...)
  // calls are taken for tensors.
  bool uses_torch() const { return uses_torch_; }

  const std::vector<FunctionInfo>& functions() const { return functions_; }
  const std::vector<ClassInfo>& classes() const { return classes_; }
  const std::vector<FunctionView>& views() const { return views_; }
  const FunctionView& module_view() const { return views_[0]; }
  const FunctionView& view_of(int function) const { return views_[functions_[function].view]; }

  // Top-level definitions by name (-1: none).
  int TopFunction(absl::string_view name) const;
  int TopClass(absl::string_view name) const;
  // A class defined anywhere in the file by name (-1: none).
  int AnyClass(absl::string_view name) const;
  // A plain function (not a method) named `name` defined directly in function `parent` (-1: none).
  int NestedFunction(int parent, absl::string_view name) const;
  // Module-level assignments to `name` (top-level statements, inside top-level if/for/with/try).
  const std::vector<NodeId>& ModuleAssignments(absl::string_view name) const;
  const absl::flat_hash_map<absl::string_view, std::vector<NodeId>>& module_assignments() const {
    return module_assignments_;
  }

  // The canonical dotted name of an identifier/attribute chain at `pos` in `view` ("" when `expr`
  // is not a name). The first component goes through the imports, or through the constructor
  // call of a known stateful object.
  std::string Canonical(NodeId expr, const FunctionView* view, uint32_t pos) const;
  // The canonical callee of a call node ("" when the callee is not a name).
  std::string Callee(NodeId call, const FunctionView* view) const;
  // Whether `name` is imported (a module or an imported object).
  bool IsImported(absl::string_view name) const { return imports_.contains(name); }
  const std::string* ImportOf(absl::string_view name) const;

  // Tensor-ness of an expression at `pos` in `view` (docs/torch-semantics.md §5.3): a tensor-like
  // name, a torch.* call, a tensor method or attribute, arithmetic or comparison with one of those.
  bool IsTensor(NodeId expr, const FunctionView& view, uint32_t pos) const;

  // The view base of `expr`: for `b.view(-1).t()`, `b[0]`, `b.T`, `torch.transpose(b, 0, 1)`,
  // the identifier node of `b` and the op that matters most (an overlap producer if any link is
  // one, else the innermost); kNoNode when `expr` is not a chain of view ops on a name.
  NodeId ViewBase(NodeId expr, std::string* op, const FunctionView* view) const;

 private:
  friend class IndexBuilder;

  std::string path_;
  const SyntaxTree& tree_;
  bool uses_torch_ = false;
  absl::flat_hash_map<std::string, std::string> imports_;  // local name → dotted origin
  // Top-level `name = Ctor(...)` with a stateful constructor: name → "random.Random".
  absl::flat_hash_map<absl::string_view, std::string> instances_;
  std::vector<FunctionInfo> functions_;
  std::vector<ClassInfo> classes_;
  std::vector<FunctionView> views_;
  absl::flat_hash_map<absl::string_view, int> top_functions_;
  absl::flat_hash_map<absl::string_view, int> top_classes_;
  absl::flat_hash_map<std::pair<int, absl::string_view>, int> nested_functions_;
  absl::flat_hash_map<absl::string_view, std::vector<NodeId>> module_assignments_;
};

}  // namespace cl::lint

#endif  // LINT_MODULE_INDEX_H_

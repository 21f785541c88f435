// The builder of a ModuleIndex (module_index.h), private to lint/: ModuleIndex's constructor runs
// it, and nothing else does. Its members are defined along the seams the index has:
// module_index.cc reads the imports and walks the statements and expressions,
// module_index_definitions.cc makes the functions and classes the walk meets, and
// module_index_bindings.cc records the bindings it finds (which name holds what, from which
// position; an alias or a view shares the storage of the binding it was made from).
//
// Builds a ModuleIndex in three walks: every import (a scan of the node array), the top-level
// stateful objects, then one recursive walk that makes the functions, classes and views.
#ifndef LINT_MODULE_INDEX_BUILDER_H_
#define LINT_MODULE_INDEX_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lint/function_view.h"
#include "lint/module_index.h"
#include "lint/syntax_tree.h"

namespace cl::lint {

class IndexBuilder {
 public:
  explicit IndexBuilder(ModuleIndex& m) : m_(m), t_(m.tree_) {}

  void Build();

 private:
  struct Ctx {
    int view = 0;
    int function = -1;
    int cls = -1;
    bool class_body = false;
    int loop_depth = 0;
  };

  FunctionView& View(const Ctx& c) { return m_.views_[c.view]; }
  uint32_t Start(NodeId n) const { return t_[n].start; }
  uint32_t End(NodeId n) const { return t_[n].end; }
  absl::string_view Text(NodeId n) const { return t_.Text(n); }

  // Before the walk: the imports and the module's stateful objects (module_index.cc).
  void CollectImports();
  void CollectInstances();
  void Finish(FunctionView& v);

  // The bindings (module_index_bindings.cc).
  int AddBinding(FunctionView& v, Binding b);
  int BindValue(FunctionView& v, absl::string_view name, uint32_t pos, NodeId site, NodeId value);
  void BindElement(FunctionView& v, absl::string_view name, uint32_t pos, NodeId site,
                   NodeId iterable, bool loop_var);
  void BindTarget(NodeId target, NodeId value, uint32_t pos, NodeId site, const Ctx& c);
  void BindUnpacked(NodeId target, NodeId value, uint32_t pos, NodeId site, const Ctx& c);
  void BindLoopTarget(NodeId target, NodeId iterable, uint32_t pos, NodeId site, const Ctx& c);
  void BindImports(NodeId n, const Ctx& c);

  // The walk (module_index.cc).
  void WalkChildren(NodeId n, const Ctx& c);
  void Walk(NodeId n, const Ctx& c);
  void Conditional(NodeId n, NodeId cond, const Ctx& c);
  void Assignment(NodeId n, const Ctx& c);
  void RecordModuleTargets(NodeId target, NodeId site);
  void RecordAttributeTypes(NodeId left, NodeId value, const Ctx& c);
  void CollectCallees(NodeId n, const FunctionView& v, std::vector<std::string>& out);
  void AugmentedAssignment(NodeId n, const Ctx& c);
  void For(NodeId n, const Ctx& c);
  void Comprehension(NodeId n, const Ctx& c);
  void Call(NodeId n, const Ctx& c);

  // The functions and classes (module_index_definitions.cc).
  void Decorators(NodeId decorated, const Ctx& c, std::vector<NodeId>& exprs,
                  std::vector<std::string>* names);
  void Function(NodeId def, NodeId decorated, const Ctx& c);
  bool ParamIsTensor(const Param& p) const;
  void Class(NodeId def, NodeId decorated, const Ctx& c);

  ModuleIndex& m_;
  const SyntaxTree& t_;
  uint32_t next_storage_ = 1;
};

}  // namespace cl::lint

#endif  // LINT_MODULE_INDEX_BUILDER_H_

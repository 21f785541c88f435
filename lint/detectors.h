// The built-in matchers. Each detector kind is one function over the indexed files that appends
// raw findings for one pattern; the linter (linter.cc) turns them into rated, suppressible
// findings.
//
// To add a detector kind: add it to DetectorKind (pattern.h) and its name table (pattern.cc),
// implement it in one of the detectors_*.cc files, list it in DetectorFor (detectors.cc), and give
// the patterns that use it a catalogue entry (catalogue.cc) and a correctness.toml entry.
#ifndef LINT_DETECTORS_H_
#define LINT_DETECTORS_H_

#include <string>
#include <vector>

#include "lint/module_index.h"
#include "lint/pattern.h"
#include "lint/resolver.h"
#include "lint/scope.h"

namespace cl::lint {

// What a detector reports: where, and what the message and severity rules need.
struct RawFinding {
  int file = -1;
  int function = -1;      // -1: module level
  NodeId node = kNoNode;  // the line and the snippet
  std::string form;       // the detector's sub-form ("view_alias", "assign", "global_container")
  std::string producer;   // the view op or callee that matched
  std::string name;       // {name}
  std::string base;       // {base}
  std::string op;         // {op}
  std::string detail;     // said after the message ("read again at line 97")
  bool in_loop = false;
  bool assumed = false;  // in a file scanned as if compiled
};

struct DetectInput {
  const std::vector<const ModuleIndex*>& files;
  const CompiledRegion& region;
  const Resolver& resolver;
};

using DetectorFn = void (*)(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
DetectorFn DetectorFor(DetectorKind kind);

// Calls `fn(file, function, view, assumed)` for each function view the scope covers (the
// module's top-level code counts as outside the compiled region).
template <typename Fn>
void ForEachScopedView(const DetectInput& in, Scope scope, Fn fn) {
  for (int f = 0; f < static_cast<int>(in.files.size()); ++f) {
    const ModuleIndex& m = *in.files[f];
    for (const FunctionView& view : m.views()) {
      const bool compiled = in.region.InRegion(f, view.function);
      if (scope == Scope::kCompiledRegion && !compiled) continue;
      if (scope == Scope::kOutsideCompiledRegion && compiled) continue;
      fn(f, view.function, view, compiled && in.region.Assumed(f));
    }
  }
}

// Per-kind entry points (detectors_*.cc).
void DetectInplaceOnAlias(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectSubscriptAssignOverlap(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectDataAttr(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectStorageChangeOnView(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectCustomOpMutation(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectDataDependentControl(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectSideEffect(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectCallInRegion(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectDecoratedInRegion(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectGradMode(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectModuleAttr(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectGlobalRebind(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectScalarArgs(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);
void DetectHookAfterCompile(const DetectInput&, const PatternSpec&, std::vector<RawFinding>*);

// Shared helpers.
// A finding at `node` with the fields every detector sets; the caller fills in the rest.
RawFinding MakeFinding(int file, int function, NodeId node, absl::string_view form, bool in_loop,
                       bool assumed);
// The same, naming `name` and the op (which is also the producer) that matched.
RawFinding MakeOpFinding(int file, int function, NodeId node, absl::string_view form,
                         absl::string_view name, absl::string_view op, bool in_loop, bool assumed);
// Whether the subtree at `n` has a node for which `pred(node)` holds (lambdas' bodies included).
template <typename Pred>
bool SubtreeHas(const SyntaxTree& t, NodeId n, Pred pred) {
  if (n == kNoNode) return false;
  if (pred(n)) return true;
  for (NodeId c = t.first_child(n); c != kNoNode; c = t.next_sibling(c)) {
    if (SubtreeHas(t, c, pred)) return true;
  }
  return false;
}
// Index of the first read at or after `pos` (reads are sorted by position).
size_t FirstReadFrom(const FunctionView& view, uint32_t pos);
// Whether `name` is a module-level name of `m` (assigned at top level, or a top-level def/class).
bool IsModuleName(const ModuleIndex& m, absl::string_view name);
// Whether the expression is a Python literal (number, string, bool, None).
bool IsLiteralValue(const SyntaxTree& t, NodeId n);
// Whether `node` runs in a loop of its function: a for/while statement or a comprehension
// around it, below the nearest function (or lambda, class, module).
bool InLoop(const SyntaxTree& t, NodeId node);

}  // namespace cl::lint

#endif  // LINT_DETECTORS_H_

// The view of one function that the detectors read: what each name is bound to, where it is read,
// the calls, the mutations, the conditions. Built in one walk of the body (module_index.cc).
//
// Flow-insensitive on purpose (docs/torch-semantics.md §5.3): bindings are ordered by
// source position, and a read sees the last binding before it. Every binding carries a storage
// id: `y = x` and `z = y.view(-1)` share x's storage, so "a view of a tensor that is read again"
// is a question about storage ids. Lambdas and comprehensions belong to the enclosing function's
// view; nested functions and classes have views of their own.
#ifndef LINT_FUNCTION_VIEW_H_
#define LINT_FUNCTION_VIEW_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "lint/syntax_tree.h"

namespace cl::lint {

struct Binding {
  absl::string_view name;
  uint32_t pos = 0;        // in effect from this byte offset on
  NodeId site = kNoNode;   // the assignment, loop, parameter, ... that binds it
  NodeId value = kNoNode;  // the bound expression when there is one (a loop variable: the iterable)
  uint32_t storage = 0;    // bindings with one storage id alias the same tensor
  int base = -1;           // the binding this one aliases or views, or -1
  std::string view_op;     // non-empty: a view of `base` made by this op ("view", "expand", "[]")
  bool param = false;
  bool tensor = false;  // tensor-like (docs/torch-semantics.md §5.3 "Tensor-ness")
  bool loop_var = false;
};

struct Read {
  absl::string_view name;
  uint32_t pos = 0;
  NodeId node = kNoNode;
};

struct CallSite {
  NodeId node = kNoNode;
  std::string callee;        // canonical dotted name ("torch.nn.functional.relu"), or empty
  absl::string_view method;  // an attribute call's attribute ("mul_"), or empty
  NodeId object = kNoNode;   // an attribute call's object
  bool in_loop = false;
};

// A write into a tensor named by an identifier.
struct Mutation {
  enum class Form : uint8_t { kMethod, kAugAssign, kInplaceKeyword, kOutKeyword, kSetItem };
  absl::string_view name;
  uint32_t pos = 0;
  NodeId node = kNoNode;  // the call, augmented assignment or assignment
  absl::string_view op;   // "mul_", "+=", "relu", "out=", "[]="
  Form form = Form::kMethod;
  bool in_loop = false;
};

// A test whose truth decides control flow: if/elif/while/assert tests, `a if c else b`, the
// subject of `match`.
struct Condition {
  NodeId node = kNoNode;
  bool in_loop = false;
};

class FunctionView {
 public:
  int function = -1;  // index into ModuleIndex::functions; -1 for the module's top-level code

  std::vector<Binding> bindings;
  absl::flat_hash_map<absl::string_view, std::vector<int>>
      by_name;              // indices into bindings, by pos
  std::vector<Read> reads;  // by pos
  std::vector<CallSite> calls;
  std::vector<Mutation> mutations;
  std::vector<Condition> conditions;
  std::vector<NodeId> assignments;  // assignments and augmented assignments, every target kind
  std::vector<NodeId> with_items;   // the context-manager expressions
  absl::flat_hash_set<absl::string_view> global_names;    // `global g`
  absl::flat_hash_set<absl::string_view> nonlocal_names;  // `nonlocal g`

  // The binding of `name` in effect at `pos`, or null (not bound here before `pos`).
  const Binding* At(absl::string_view name, uint32_t pos) const {
    const int i = IndexAt(name, pos);
    return i < 0 ? nullptr : &bindings[i];
  }
  int IndexAt(absl::string_view name, uint32_t pos) const {
    auto it = by_name.find(name);
    if (it == by_name.end()) return -1;
    const std::vector<int>& list = it->second;
    auto after = std::upper_bound(list.begin(), list.end(), pos,
                                  [this](uint32_t p, int i) { return p < bindings[i].pos; });
    return after == list.begin() ? -1 : *(after - 1);
  }
  // Whether `name` is bound anywhere in this function (a local, not a global).
  bool Binds(absl::string_view name) const { return by_name.contains(name); }
};

}  // namespace cl::lint

#endif  // LINT_FUNCTION_VIEW_H_

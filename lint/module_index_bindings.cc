// ModuleIndex's bindings, as IndexBuilder's walk (module_index.cc) records them: every name a
// function view binds, where, to what, and which storage it shares with the binding it aliases or
// views.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "lint/module_index_builder.h"
#include "lint/torch_names.h"

namespace cl::lint {
namespace {

// `name`, bound from byte `pos` on by `site` (an assignment, a loop, an import) to `value`.
Binding NewBinding(absl::string_view name, uint32_t pos, NodeId site, NodeId value) {
  Binding b;
  b.name = name;
  b.pos = pos;
  b.site = site;
  b.value = value;
  return b;
}

}  // namespace

int IndexBuilder::AddBinding(FunctionView& v, Binding b) {
  if (b.storage == 0) b.storage = next_storage_++;
  const int index = static_cast<int>(v.bindings.size());
  const uint32_t pos = b.pos;
  v.bindings.push_back(std::move(b));
  std::vector<int>& list = v.by_name[v.bindings.back().name];
  auto at = list.end();
  while (at != list.begin() && v.bindings[*(at - 1)].pos > pos) --at;
  list.insert(at, index);
  return index;
}

// Binds `name` to `value` (an assignment's right-hand side): an alias or view of an existing
// binding shares its storage.
int IndexBuilder::BindValue(FunctionView& v, absl::string_view name, uint32_t pos, NodeId site,
                            NodeId value) {
  Binding b = NewBinding(name, pos, site, value);
  const NodeId e = t_.Unparen(value);
  if (e != kNoNode) {
    if (t_.kind(e) == Kind::kIdentifier) {
      if (const int i = v.IndexAt(Text(e), Start(e)); i >= 0) {
        b.base = i;
        b.storage = v.bindings[i].storage;
        b.tensor = v.bindings[i].tensor;
      }
    } else {
      std::string op;
      const NodeId base = m_.ViewBase(e, &op, &v);
      const int i = base == kNoNode ? -1 : v.IndexAt(Text(base), Start(base));
      // `s[0]`, `line.split(",")`: strings and lists have them too; a view only of a tensor.
      if (i >= 0 && (v.bindings[i].tensor || !IsAmbiguousViewOp(op))) {
        b.base = i;
        b.storage = v.bindings[i].storage;
        b.view_op = op;
        b.tensor = true;
      } else {
        b.tensor = m_.IsTensor(e, v, Start(e));
      }
    }
  }
  return AddBinding(v, std::move(b));
}

// Binds `name` as an element of `iterable` (a loop variable, or one target of an unpacking).
void IndexBuilder::BindElement(FunctionView& v, absl::string_view name, uint32_t pos, NodeId site,
                               NodeId iterable, bool loop_var) {
  Binding b = NewBinding(name, pos, site, iterable);
  b.loop_var = loop_var;
  const NodeId e = t_.Unparen(iterable);
  if (e != kNoNode) {
    std::string op;
    NodeId base = kNoNode;
    if (t_.kind(e) == Kind::kCall) {
      const NodeId fn = t_.Child(e, Field::kFunction);
      if (fn != kNoNode && t_.kind(fn) == Kind::kAttribute &&
          IsSplitOp(Text(t_.Child(fn, Field::kAttribute)))) {
        base = m_.ViewBase(e, &op, &v);
      } else if (const std::string callee = m_.Callee(e, &v);
                 absl::StartsWith(callee, "torch.") && IsSplitOp(callee.substr(6))) {
        base = m_.ViewBase(e, &op, &v);
      }
    } else if (t_.kind(e) == Kind::kIdentifier) {
      // Iterating a tensor yields views of its rows.
      if (const Binding* it = v.At(Text(e), Start(e)); it != nullptr && it->tensor) {
        base = e;
        op = "iter";
      }
    }
    if (base != kNoNode) {
      if (const int i = v.IndexAt(Text(base), Start(base));
          i >= 0 && (v.bindings[i].tensor || !IsAmbiguousViewOp(op))) {
        b.base = i;
        b.storage = v.bindings[i].storage;
        b.view_op = op;
        b.tensor = true;
      }
    }
  }
  AddBinding(v, std::move(b));
}

// Binds every name in an assignment target.
void IndexBuilder::BindTarget(NodeId target, NodeId value, uint32_t pos, NodeId site,
                              const Ctx& c) {
  target = t_.Unparen(target);
  if (target == kNoNode) return;
  FunctionView& v = View(c);
  switch (t_.kind(target)) {
    case Kind::kIdentifier:
      BindValue(v, Text(target), pos, site, value);
      return;
    case Kind::kPatternList:
    case Kind::kTuplePattern:
    case Kind::kListPattern:
    case Kind::kTuple:
    case Kind::kList:
    case Kind::kExpressionList: {
      std::vector<NodeId> targets = NamedChildren(t_, target).ToVector();
      const NodeId e = t_.Unparen(value);
      if (e != kNoNode &&
          (t_.kind(e) == Kind::kTuple || t_.kind(e) == Kind::kList ||
           t_.kind(e) == Kind::kExpressionList || t_.kind(e) == Kind::kPatternList)) {
        std::vector<NodeId> values = NamedChildren(t_, e).ToVector();
        if (values.size() == targets.size()) {
          for (size_t i = 0; i < targets.size(); ++i)
            BindTarget(targets[i], values[i], pos, site, c);
          return;
        }
      }
      for (NodeId t : targets) BindUnpacked(t, value, pos, site, c);
      return;
    }
    case Kind::kListSplatPattern:
    case Kind::kListSplat:
    case Kind::kAsPatternTarget:
      BindTarget(t_.NamedChild(target), kNoNode, pos, site, c);
      return;
    case Kind::kSubscript: {
      const NodeId base = t_.Unparen(t_.Child(target, Field::kValue));
      if (base != kNoNode && t_.kind(base) == Kind::kIdentifier) {
        v.mutations.push_back(
            {Text(base), Start(site), site, "[]=", Mutation::Form::kSetItem, c.loop_depth > 0});
      }
      WalkChildren(target, c);
      return;
    }
    case Kind::kAttribute:
      Walk(t_.Child(target, Field::kObject), c);
      return;
    default:
      Walk(target, c);
  }
}

// A target that receives one element of `value` (`a, b = x.chunk(2)`).
void IndexBuilder::BindUnpacked(NodeId target, NodeId value, uint32_t pos, NodeId site,
                                const Ctx& c) {
  target = t_.Unparen(target);
  if (target == kNoNode) return;
  if (t_.kind(target) == Kind::kIdentifier) {
    BindElement(View(c), Text(target), pos, site, value, /*loop_var=*/false);
  } else if (t_.kind(target) == Kind::kListSplatPattern || t_.kind(target) == Kind::kListSplat) {
    BindUnpacked(t_.NamedChild(target), value, pos, site, c);
  } else {
    BindTarget(target, kNoNode, pos, site, c);
  }
}

// A loop target: `for p in x.chunk(2)`, `for i, p in enumerate(x.unbind())`.
void IndexBuilder::BindLoopTarget(NodeId target, NodeId iterable, uint32_t pos, NodeId site,
                                  const Ctx& c) {
  target = t_.Unparen(target);
  if (target == kNoNode) return;
  FunctionView& v = View(c);
  if (t_.kind(target) == Kind::kIdentifier) {
    BindElement(v, Text(target), pos, site, iterable, /*loop_var=*/true);
    return;
  }
  const NodeId it = t_.Unparen(iterable);
  std::vector<NodeId> targets = NamedChildren(t_, target).ToVector();
  if (it != kNoNode && t_.kind(it) == Kind::kCall && targets.size() == 2 &&
      m_.Callee(it, &v) == "enumerate") {
    const NodeId args = t_.Child(it, Field::kArguments);
    BindLoopTarget(targets[0], kNoNode, pos, site, c);
    BindLoopTarget(targets[1], args == kNoNode ? kNoNode : t_.NamedChild(args), pos, site, c);
    return;
  }
  for (NodeId t : targets) BindLoopTarget(t, kNoNode, pos, site, c);
}

void IndexBuilder::BindImports(NodeId n, const Ctx& c) {
  if (c.view == 0 && !c.class_body) return;  // module imports are in imports_
  for (NodeId ch = t_.first_child(n); ch != kNoNode; ch = t_.next_sibling(ch)) {
    if (t_[ch].field == Field::kModuleName) continue;
    NodeId name = kNoNode;
    if (t_.kind(ch) == Kind::kAliasedImport) {
      name = t_.Child(ch, Field::kAlias);
    } else if (t_.kind(ch) == Kind::kDottedName) {
      name = t_.NamedChild(ch);
    }
    if (name == kNoNode) continue;
    AddBinding(View(c), NewBinding(Text(name), End(n), n, kNoNode));
  }
}

}  // namespace cl::lint

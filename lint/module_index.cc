#include "lint/module_index.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lint/torch_names.h"

namespace cl::lint {

// Builds a ModuleIndex in three walks: every import (a scan of the node array), the top-level
// stateful objects, then one recursive walk that makes the functions, classes and views.
class IndexBuilder {
 public:
  explicit IndexBuilder(ModuleIndex& m) : m_(m), t_(m.tree_) {}

  void Build() {
    m_.views_.emplace_back();  // the module's top-level code
    if (t_.root() == kNoNode) return;
    CollectImports();
    for (const auto& [local, origin] : m_.imports_) {
      m_.uses_torch_ = m_.uses_torch_ || absl::StartsWith(origin, "torch") || absl::StartsWith(origin, "functorch");
    }
    CollectInstances();
    Walk(t_.root(), Ctx{});
    Finish(m_.views_[0]);
  }

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

  void CollectImports() {
    for (NodeId n = 1; n <= t_.size(); ++n) {
      const Kind k = t_.kind(n);
      if (k == Kind::kImportStatement) {
        for (NodeId c : NamedChildren(t_, n)) {
          if (t_.kind(c) == Kind::kDottedName) {
            // `import torch.nn` binds `torch`.
            const absl::string_view full = Text(c);
            const absl::string_view head = full.substr(0, full.find('.'));
            m_.imports_.emplace(std::string(head), std::string(head));
          } else if (t_.kind(c) == Kind::kAliasedImport) {
            const NodeId name = t_.Child(c, Field::kName);
            const NodeId alias = t_.Child(c, Field::kAlias);
            if (name != kNoNode && alias != kNoNode) {
              m_.imports_[std::string(Text(alias))] = std::string(Text(name));
            }
          }
        }
      } else if (k == Kind::kImportFromStatement) {
        const NodeId module = t_.Child(n, Field::kModuleName);
        if (module == kNoNode) continue;
        const std::string from(Text(module));
        for (NodeId c = t_.first_child(n); c != kNoNode; c = t_.next_sibling(c)) {
          if (t_[c].field != Field::kName) continue;
          if (t_.kind(c) == Kind::kDottedName) {
            m_.imports_[std::string(Text(c))] = absl::StrCat(from, ".", Text(c));
          } else if (t_.kind(c) == Kind::kAliasedImport) {
            const NodeId name = t_.Child(c, Field::kName);
            const NodeId alias = t_.Child(c, Field::kAlias);
            if (name != kNoNode && alias != kNoNode) {
              m_.imports_[std::string(Text(alias))] = absl::StrCat(from, ".", Text(name));
            }
          }
        }
      }
    }
  }

  // Top-level `name = random.Random(...)` and the like, before any function body is read.
  void CollectInstances() {
    for (NodeId s : NamedChildren(t_, t_.root())) {
      if (t_.kind(s) != Kind::kExpressionStatement) continue;
      const NodeId a = t_.NamedChild(s);
      if (a == kNoNode || t_.kind(a) != Kind::kAssignment) continue;
      const NodeId left = t_.Child(a, Field::kLeft);
      const NodeId right = t_.Unparen(t_.Child(a, Field::kRight));
      if (left == kNoNode || right == kNoNode || t_.kind(left) != Kind::kIdentifier ||
          t_.kind(right) != Kind::kCall) {
        continue;
      }
      std::string callee = m_.Callee(right, nullptr);
      if (IsStatefulConstructor(callee)) m_.instances_[Text(left)] = std::move(callee);
    }
  }

  void Finish(FunctionView& v) {
    std::sort(v.reads.begin(), v.reads.end(), [](const Read& a, const Read& b) { return a.pos < b.pos; });
  }

  // --- bindings -------------------------------------------------------------------------------

  int AddBinding(FunctionView& v, Binding b) {
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
  int BindValue(FunctionView& v, absl::string_view name, uint32_t pos, NodeId site, NodeId value) {
    Binding b;
    b.name = name;
    b.pos = pos;
    b.site = site;
    b.value = value;
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
  void BindElement(FunctionView& v, absl::string_view name, uint32_t pos, NodeId site,
                   NodeId iterable, bool loop_var) {
    Binding b;
    b.name = name;
    b.pos = pos;
    b.site = site;
    b.value = iterable;
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
  void BindTarget(NodeId target, NodeId value, uint32_t pos, NodeId site, const Ctx& c) {
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
        if (e != kNoNode && (t_.kind(e) == Kind::kTuple || t_.kind(e) == Kind::kList ||
                             t_.kind(e) == Kind::kExpressionList || t_.kind(e) == Kind::kPatternList)) {
          std::vector<NodeId> values = NamedChildren(t_, e).ToVector();
          if (values.size() == targets.size()) {
            for (size_t i = 0; i < targets.size(); ++i) BindTarget(targets[i], values[i], pos, site, c);
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
          v.mutations.push_back({Text(base), Start(site), site, "[]=", Mutation::Form::kSetItem, c.loop_depth > 0});
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
  void BindUnpacked(NodeId target, NodeId value, uint32_t pos, NodeId site, const Ctx& c) {
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
  void BindLoopTarget(NodeId target, NodeId iterable, uint32_t pos, NodeId site, const Ctx& c) {
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

  // --- the walk -------------------------------------------------------------------------------

  void WalkChildren(NodeId n, const Ctx& c) {
    for (NodeId ch = t_.first_child(n); ch != kNoNode; ch = t_.next_sibling(ch)) Walk(ch, c);
  }

  void Walk(NodeId n, const Ctx& c) {
    if (n == kNoNode) return;
    FunctionView& v = View(c);
    switch (t_.kind(n)) {
      case Kind::kNone:
      case Kind::kToken:
      case Kind::kComment:
      case Kind::kTruncated:
        return;
      case Kind::kIdentifier:
        v.reads.push_back({Text(n), Start(n), n});
        return;
      case Kind::kAttribute:
        Walk(t_.Child(n, Field::kObject), c);
        return;
      case Kind::kKeywordArgument:
        Walk(t_.Child(n, Field::kValue), c);
        return;
      case Kind::kFunctionDefinition:
        Function(n, kNoNode, c);
        return;
      case Kind::kClassDefinition:
        Class(n, kNoNode, c);
        return;
      case Kind::kDecoratedDefinition: {
        const NodeId def = t_.Child(n, Field::kDefinition);
        if (def != kNoNode && t_.kind(def) == Kind::kFunctionDefinition) {
          Function(def, n, c);
        } else if (def != kNoNode && t_.kind(def) == Kind::kClassDefinition) {
          Class(def, n, c);
        } else {
          WalkChildren(n, c);
        }
        return;
      }
      case Kind::kAssignment:
        Assignment(n, c);
        return;
      case Kind::kAugmentedAssignment:
        AugmentedAssignment(n, c);
        return;
      case Kind::kNamedExpression: {
        const NodeId value = t_.Child(n, Field::kValue);
        Walk(value, c);
        if (const NodeId name = t_.Child(n, Field::kName); name != kNoNode) {
          BindValue(v, Text(name), End(n), n, value);
        }
        return;
      }
      case Kind::kForStatement:
        For(n, c);
        return;
      case Kind::kWhileStatement: {
        const NodeId cond = t_.Child(n, Field::kCondition);
        if (cond != kNoNode) v.conditions.push_back({cond, true});
        Walk(cond, c);
        Ctx inner = c;
        ++inner.loop_depth;
        Walk(t_.Child(n, Field::kBody), inner);
        Walk(t_.Child(n, Field::kAlternative), c);
        return;
      }
      case Kind::kIfStatement:
      case Kind::kElifClause:
        if (const NodeId cond = t_.Child(n, Field::kCondition); cond != kNoNode) {
          v.conditions.push_back({cond, c.loop_depth > 0});
        }
        WalkChildren(n, c);
        return;
      case Kind::kConditionalExpression:
        if (const NodeId cond = t_.NamedChild(n, 1); cond != kNoNode) {
          v.conditions.push_back({cond, c.loop_depth > 0});
        }
        WalkChildren(n, c);
        return;
      case Kind::kAssertStatement:
        if (const NodeId cond = t_.NamedChild(n, 0); cond != kNoNode) {
          v.conditions.push_back({cond, c.loop_depth > 0});
        }
        WalkChildren(n, c);
        return;
      case Kind::kMatchStatement:
        if (const NodeId subject = t_.Child(n, Field::kSubject); subject != kNoNode) {
          v.conditions.push_back({subject, c.loop_depth > 0});
        }
        WalkChildren(n, c);
        return;
      case Kind::kListComprehension:
      case Kind::kSetComprehension:
      case Kind::kDictionaryComprehension:
      case Kind::kGeneratorExpression:
        Comprehension(n, c);
        return;
      case Kind::kLambda: {
        if (const NodeId params = t_.Child(n, Field::kParameters); params != kNoNode) {
          for (NodeId p : NamedChildren(t_, params)) {
            NodeId name = p;
            if (t_.kind(p) != Kind::kIdentifier) {
              name = t_.Child(p, Field::kName);
              if (name == kNoNode) name = t_.NamedChild(p);
              Walk(t_.Child(p, Field::kValue), c);
            }
            if (name == kNoNode || t_.kind(name) != Kind::kIdentifier) continue;
            Binding b;
            b.name = Text(name);
            b.pos = Start(n);
            b.site = n;
            b.param = true;
            AddBinding(v, std::move(b));
          }
        }
        Walk(t_.Child(n, Field::kBody), c);
        return;
      }
      case Kind::kWithItem: {
        const NodeId value = t_.Child(n, Field::kValue);
        if (value != kNoNode && t_.kind(value) == Kind::kAsPattern) {
          const NodeId expr = t_.NamedChild(value);
          v.with_items.push_back(expr);
          Walk(expr, c);
          if (const NodeId alias = t_.Child(value, Field::kAlias); alias != kNoNode) {
            BindTarget(alias, kNoNode, End(n), n, c);
          }
        } else if (value != kNoNode) {
          v.with_items.push_back(value);
          Walk(value, c);
        }
        return;
      }
      case Kind::kGlobalStatement:
        for (NodeId name : NamedChildren(t_, n)) v.global_names.insert(Text(name));
        return;
      case Kind::kNonlocalStatement:
        for (NodeId name : NamedChildren(t_, n)) v.nonlocal_names.insert(Text(name));
        return;
      case Kind::kImportStatement:
      case Kind::kImportFromStatement:
        BindImports(n, c);
        return;
      case Kind::kCall:
        Call(n, c);
        return;
      default:
        WalkChildren(n, c);
    }
  }

  void BindImports(NodeId n, const Ctx& c) {
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
      Binding b;
      b.name = Text(name);
      b.pos = End(n);
      b.site = n;
      AddBinding(View(c), std::move(b));
    }
  }

  void Assignment(NodeId n, const Ctx& c) {
    FunctionView& v = View(c);
    const NodeId left = t_.Child(n, Field::kLeft);
    const NodeId right = t_.Child(n, Field::kRight);
    Walk(right, c);
    NodeId value = right;
    while (value != kNoNode && t_.kind(value) == Kind::kAssignment) value = t_.Child(value, Field::kRight);
    v.assignments.push_back(n);
    if (left == kNoNode) return;
    const bool module_level = c.view == 0 && c.function < 0 && !c.class_body;
    if (c.class_body) {
      if (t_.kind(left) == Kind::kIdentifier) m_.classes_[c.cls].class_attrs.emplace(Text(left), n);
      if (t_.kind(left) != Kind::kIdentifier) BindTarget(left, kNoNode, End(n), n, c);
      return;
    }
    if (module_level) RecordModuleTargets(left, n);
    if (right == kNoNode) return;  // `x: int` declares, binds nothing
    RecordAttributeTypes(left, value, c);
    BindTarget(left, value, End(n), n, c);
  }

  void RecordModuleTargets(NodeId target, NodeId site) {
    target = t_.Unparen(target);
    if (target == kNoNode) return;
    if (t_.kind(target) == Kind::kIdentifier) {
      m_.module_assignments_[Text(target)].push_back(site);
      return;
    }
    if (t_.kind(target) == Kind::kPatternList || t_.kind(target) == Kind::kTuplePattern ||
        t_.kind(target) == Kind::kListPattern || t_.kind(target) == Kind::kTuple ||
        t_.kind(target) == Kind::kList || t_.kind(target) == Kind::kExpressionList) {
      for (NodeId t : NamedChildren(t_, target)) RecordModuleTargets(t, site);
    }
  }

  // `self.X = Block(...)` / `self.blocks = nn.ModuleList([Block(...) for ...])` in a method.
  void RecordAttributeTypes(NodeId left, NodeId value, const Ctx& c) {
    if (t_.kind(left) != Kind::kAttribute || c.function < 0) return;
    const NodeId object = t_.Child(left, Field::kObject);
    const NodeId attr = t_.Child(left, Field::kAttribute);
    if (object == kNoNode || attr == kNoNode || Text(object) != "self") return;
    int cls = -1;
    for (int f = c.function; f >= 0 && cls < 0; f = m_.functions_[f].parent) cls = m_.functions_[f].cls;
    if (cls < 0) return;
    std::vector<std::string>& types = m_.classes_[cls].attr_types[Text(attr)];
    CollectCallees(value, View(c), types);
  }

  void CollectCallees(NodeId n, const FunctionView& v, std::vector<std::string>& out) {
    if (n == kNoNode || out.size() >= 16) return;
    if (t_.kind(n) == Kind::kCall) {
      std::string callee = m_.Callee(n, &v);
      if (!callee.empty() && std::find(out.begin(), out.end(), callee) == out.end()) {
        out.push_back(std::move(callee));
      }
    }
    if (t_.kind(n) == Kind::kLambda) return;
    for (NodeId ch : NamedChildren(t_, n)) CollectCallees(ch, v, out);
  }

  void AugmentedAssignment(NodeId n, const Ctx& c) {
    FunctionView& v = View(c);
    const NodeId left = t_.Unparen(t_.Child(n, Field::kLeft));
    const NodeId op = t_.Child(n, Field::kOperator);
    Walk(t_.Child(n, Field::kRight), c);
    v.assignments.push_back(n);
    if (left == kNoNode) return;
    const absl::string_view op_text = op == kNoNode ? "+=" : Text(op);
    if (t_.kind(left) == Kind::kIdentifier) {
      const absl::string_view name = Text(left);
      v.reads.push_back({name, Start(left), left});
      const Binding* b = v.At(name, Start(n));
      if (b != nullptr && b->tensor) {
        v.mutations.push_back({name, Start(n), n, op_text, Mutation::Form::kAugAssign, c.loop_depth > 0});
      } else if (!c.class_body) {
        Binding rebound;
        rebound.name = name;
        rebound.pos = End(n);
        rebound.site = n;
        rebound.value = n;
        AddBinding(v, std::move(rebound));
      }
      if (c.view == 0 && c.function < 0 && !c.class_body) m_.module_assignments_[name].push_back(n);
      return;
    }
    if (t_.kind(left) == Kind::kSubscript) {
      const NodeId base = t_.Unparen(t_.Child(left, Field::kValue));
      if (base != kNoNode && t_.kind(base) == Kind::kIdentifier) {
        v.mutations.push_back({Text(base), Start(n), n, op_text, Mutation::Form::kSetItem, c.loop_depth > 0});
      }
    }
    Walk(left, c);
  }

  void For(NodeId n, const Ctx& c) {
    const NodeId left = t_.Child(n, Field::kLeft);
    const NodeId right = t_.Child(n, Field::kRight);
    Walk(right, c);
    const NodeId body = t_.Child(n, Field::kBody);
    BindLoopTarget(left, right, right == kNoNode ? Start(n) : End(right), n, c);
    Ctx inner = c;
    ++inner.loop_depth;
    Walk(body, inner);
    Walk(t_.Child(n, Field::kAlternative), c);
  }

  void Comprehension(NodeId n, const Ctx& c) {
    Ctx inner = c;
    ++inner.loop_depth;
    bool first = true;
    for (NodeId ch : NamedChildren(t_, n)) {
      if (t_.kind(ch) != Kind::kForInClause) continue;
      const NodeId right = t_.Child(ch, Field::kRight);
      Walk(right, first ? c : inner);
      BindLoopTarget(t_.Child(ch, Field::kLeft), right, Start(n), ch, inner);
      first = false;
    }
    for (NodeId ch : NamedChildren(t_, n)) {
      if (t_.kind(ch) == Kind::kForInClause) continue;
      Walk(ch, inner);
    }
  }

  void Call(NodeId n, const Ctx& c) {
    FunctionView& v = View(c);
    const NodeId fn = t_.Child(n, Field::kFunction);
    const NodeId args = t_.Child(n, Field::kArguments);
    CallSite site;
    site.node = n;
    site.callee = m_.Canonical(fn, &v, Start(n));
    site.in_loop = c.loop_depth > 0;
    if (fn != kNoNode && t_.kind(fn) == Kind::kAttribute) {
      if (const NodeId attr = t_.Child(fn, Field::kAttribute); attr != kNoNode) site.method = Text(attr);
      site.object = t_.Unparen(t_.Child(fn, Field::kObject));
    }
    // Writes: `v.op_()`, `f(v, inplace=True)`, `f(..., out=v)`.
    if (site.object != kNoNode && t_.kind(site.object) == Kind::kIdentifier && site.method.size() > 1 &&
        site.method.back() == '_' && !absl::StartsWith(site.method, "__")) {
      v.mutations.push_back({Text(site.object), Start(n), n, site.method, Mutation::Form::kMethod, site.in_loop});
    }
    if (args != kNoNode && t_.kind(args) == Kind::kArgumentList) {
      NodeId first_positional = kNoNode;
      for (NodeId a : NamedChildren(t_, args)) {
        if (t_.kind(a) != Kind::kKeywordArgument) {
          if (first_positional == kNoNode) first_positional = t_.Unparen(a);
          continue;
        }
        const NodeId name = t_.Child(a, Field::kName);
        const NodeId value = t_.Unparen(t_.Child(a, Field::kValue));
        if (name == kNoNode || value == kNoNode) continue;
        if (Text(name) == "inplace" && t_.kind(value) == Kind::kTrue && first_positional != kNoNode &&
            t_.kind(first_positional) == Kind::kIdentifier) {
          const absl::string_view callee = site.callee;
          const absl::string_view op = site.method.empty() ? callee.substr(callee.rfind('.') + 1) : site.method;
          v.mutations.push_back(
              {Text(first_positional), Start(n), n, op, Mutation::Form::kInplaceKeyword, site.in_loop});
        } else if (Text(name) == "out" && t_.kind(value) == Kind::kIdentifier) {
          v.mutations.push_back({Text(value), Start(n), n, "out=", Mutation::Form::kOutKeyword, site.in_loop});
        }
      }
    }
    v.calls.push_back(std::move(site));
    Walk(fn, c);
    Walk(args, c);
  }

  // --- definitions ----------------------------------------------------------------------------

  void Decorators(NodeId decorated, const Ctx& c, std::vector<NodeId>& exprs, std::vector<std::string>* names) {
    if (decorated == kNoNode) return;
    for (NodeId d : NamedChildren(t_, decorated)) {
      if (t_.kind(d) != Kind::kDecorator) continue;
      const NodeId expr = t_.NamedChild(d);
      if (expr == kNoNode) continue;
      exprs.push_back(expr);
      if (names != nullptr) {
        names->push_back(t_.kind(expr) == Kind::kCall ? m_.Callee(expr, &View(c))
                                                     : m_.Canonical(expr, &View(c), Start(expr)));
      }
      Walk(expr, c);
    }
  }

  void Function(NodeId def, NodeId decorated, const Ctx& c) {
    const int index = static_cast<int>(m_.functions_.size());
    {
      FunctionInfo f;
      f.node = def;
      f.first_line = t_.line(decorated != kNoNode ? decorated : def);
      const NodeId name = t_.Child(def, Field::kName);
      f.name = name == kNoNode ? absl::string_view("<anonymous>") : Text(name);
      if (c.class_body) {
        f.cls = c.cls;
        f.parent = c.function;
        f.qualname = absl::StrCat(m_.classes_[c.cls].qualname, ".", f.name);
        m_.classes_[c.cls].methods.emplace(f.name, index);
      } else if (c.function >= 0) {
        f.parent = c.function;
        f.qualname = absl::StrCat(m_.functions_[c.function].qualname, ".<locals>.", f.name);
        m_.nested_functions_.emplace(std::make_pair(c.function, f.name), index);
      } else {
        f.qualname = std::string(f.name);
        m_.top_functions_.emplace(f.name, index);
      }
      m_.functions_.push_back(std::move(f));
    }
    std::vector<NodeId> decorators;
    std::vector<std::string> decorator_names;
    Decorators(decorated, c, decorators, &decorator_names);
    std::vector<Param> params;
    if (const NodeId list = t_.Child(def, Field::kParameters); list != kNoNode) {
      for (NodeId p : NamedChildren(t_, list)) {
        Param param;
        param.node = p;
        NodeId name = kNoNode;
        switch (t_.kind(p)) {
          case Kind::kIdentifier:
            name = p;
            break;
          case Kind::kTypedParameter:
            name = t_.NamedChild(p);
            param.annotation = t_.Child(p, Field::kType);
            break;
          case Kind::kDefaultParameter:
          case Kind::kTypedDefaultParameter:
            name = t_.Child(p, Field::kName);
            param.annotation = t_.Child(p, Field::kType);
            param.default_value = t_.Child(p, Field::kValue);
            Walk(param.default_value, c);
            break;
          default:
            break;
        }
        if (name != kNoNode && (t_.kind(name) == Kind::kListSplatPattern ||
                                t_.kind(name) == Kind::kDictionarySplatPattern)) {
          param.splat = true;
          name = t_.NamedChild(name);
        }
        if (t_.kind(p) == Kind::kListSplatPattern || t_.kind(p) == Kind::kDictionarySplatPattern) {
          param.splat = true;
          name = t_.NamedChild(p);
        }
        if (name == kNoNode || t_.kind(name) != Kind::kIdentifier) continue;
        param.name = Text(name);
        params.push_back(param);
      }
    }
    const int view = static_cast<int>(m_.views_.size());
    m_.views_.emplace_back();
    m_.views_[view].function = index;
    FunctionInfo& f = m_.functions_[index];
    f.view = view;
    f.decorators = std::move(decorators);
    f.decorator_names = std::move(decorator_names);
    f.params = std::move(params);
    for (const Param& p : m_.functions_[index].params) {
      Binding b;
      b.name = p.name;
      b.pos = Start(def);
      b.site = p.node;
      b.param = true;
      b.tensor = ParamIsTensor(p);
      AddBinding(m_.views_[view], std::move(b));
    }
    Ctx inner;
    inner.view = view;
    inner.function = index;
    Walk(t_.Child(def, Field::kBody), inner);
    Finish(m_.views_[view]);
  }

  // Reference §5.3: a parameter counts as a tensor unless its annotation or default says
  // otherwise — in files that import torch. In a file that never does (a plain Python library
  // scanned as if compiled) an unannotated parameter is not assumed to be one.
  bool ParamIsTensor(const Param& p) const {
    if (p.splat || p.name == "self" || p.name == "cls") return false;
    if (!m_.uses_torch_ && (p.annotation == kNoNode || !absl::StrContains(Text(p.annotation), "Tensor"))) return false;
    if (p.annotation != kNoNode) return absl::StrContains(Text(p.annotation), "Tensor");
    if (p.default_value != kNoNode) return t_.kind(t_.Unparen(p.default_value)) == Kind::kNoneLiteral;
    return true;
  }

  void Class(NodeId def, NodeId decorated, const Ctx& c) {
    const int index = static_cast<int>(m_.classes_.size());
    {
      ClassInfo k;
      k.node = def;
      const NodeId name = t_.Child(def, Field::kName);
      k.name = name == kNoNode ? absl::string_view("<anonymous>") : Text(name);
      if (c.class_body) {
        k.qualname = absl::StrCat(m_.classes_[c.cls].qualname, ".", k.name);
      } else if (c.function >= 0) {
        k.qualname = absl::StrCat(m_.functions_[c.function].qualname, ".<locals>.", k.name);
      } else {
        k.qualname = std::string(k.name);
        m_.top_classes_.emplace(k.name, index);
      }
      m_.classes_.push_back(std::move(k));
    }
    std::vector<NodeId> decorators;
    Decorators(decorated, c, decorators, nullptr);
    if (const NodeId bases = t_.Child(def, Field::kSuperclasses); bases != kNoNode) {
      for (NodeId b : NamedChildren(t_, bases)) {
        if (t_.kind(b) == Kind::kKeywordArgument) continue;
        std::string base = m_.Canonical(b, &View(c), Start(b));
        if (!base.empty()) m_.classes_[index].bases.push_back(std::move(base));
      }
      Walk(bases, c);
    }
    Ctx body = c;
    body.cls = index;
    body.class_body = true;
    Walk(t_.Child(def, Field::kBody), body);
  }

  ModuleIndex& m_;
  const SyntaxTree& t_;
  uint32_t next_storage_ = 1;
};

ModuleIndex::ModuleIndex(std::string path, const SyntaxTree& tree) : path_(std::move(path)), tree_(tree) {
  IndexBuilder(*this).Build();
}

}  // namespace cl::lint

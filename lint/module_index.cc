#include "lint/module_index.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lint/module_index_builder.h"
#include "lint/torch_names.h"

namespace cl::lint {

void IndexBuilder::Build() {
  m_.views_.emplace_back();  // the module's top-level code
  if (t_.root() == kNoNode) return;
  CollectImports();
  for (const auto& [local, origin] : m_.imports_) {
    m_.uses_torch_ = m_.uses_torch_ || absl::StartsWith(origin, "torch") ||
                     absl::StartsWith(origin, "functorch");
  }
  CollectInstances();
  Walk(t_.root(), Ctx{});
  Finish(m_.views_[0]);
}

void IndexBuilder::CollectImports() {
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
void IndexBuilder::CollectInstances() {
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

void IndexBuilder::Finish(FunctionView& v) {
  std::sort(v.reads.begin(), v.reads.end(),
            [](const Read& a, const Read& b) { return a.pos < b.pos; });
}

void IndexBuilder::WalkChildren(NodeId n, const Ctx& c) {
  for (NodeId ch = t_.first_child(n); ch != kNoNode; ch = t_.next_sibling(ch)) Walk(ch, c);
}

void IndexBuilder::Walk(NodeId n, const Ctx& c) {
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
      Conditional(n, t_.Child(n, Field::kCondition), c);
      return;
    case Kind::kConditionalExpression:
      Conditional(n, t_.NamedChild(n, 1), c);
      return;
    case Kind::kAssertStatement:
      Conditional(n, t_.NamedChild(n, 0), c);
      return;
    case Kind::kMatchStatement:
      Conditional(n, t_.Child(n, Field::kSubject), c);
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

// An if/elif, a conditional expression, an assert or a match, whose `cond` (the condition, or the
// match's subject) the view records (in a loop if the statement is in one), and then walks.
void IndexBuilder::Conditional(NodeId n, NodeId cond, const Ctx& c) {
  if (cond != kNoNode) View(c).conditions.push_back({cond, c.loop_depth > 0});
  WalkChildren(n, c);
}

void IndexBuilder::Assignment(NodeId n, const Ctx& c) {
  FunctionView& v = View(c);
  const NodeId left = t_.Child(n, Field::kLeft);
  const NodeId right = t_.Child(n, Field::kRight);
  Walk(right, c);
  NodeId value = right;
  while (value != kNoNode && t_.kind(value) == Kind::kAssignment)
    value = t_.Child(value, Field::kRight);
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

void IndexBuilder::RecordModuleTargets(NodeId target, NodeId site) {
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
void IndexBuilder::RecordAttributeTypes(NodeId left, NodeId value, const Ctx& c) {
  if (t_.kind(left) != Kind::kAttribute || c.function < 0) return;
  const NodeId object = t_.Child(left, Field::kObject);
  const NodeId attr = t_.Child(left, Field::kAttribute);
  if (object == kNoNode || attr == kNoNode || Text(object) != "self") return;
  int cls = -1;
  for (int f = c.function; f >= 0 && cls < 0; f = m_.functions_[f].parent)
    cls = m_.functions_[f].cls;
  if (cls < 0) return;
  std::vector<std::string>& types = m_.classes_[cls].attr_types[Text(attr)];
  CollectCallees(value, View(c), types);
}

void IndexBuilder::CollectCallees(NodeId n, const FunctionView& v, std::vector<std::string>& out) {
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

void IndexBuilder::AugmentedAssignment(NodeId n, const Ctx& c) {
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
      v.mutations.push_back(
          {name, Start(n), n, op_text, Mutation::Form::kAugAssign, c.loop_depth > 0});
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
      v.mutations.push_back(
          {Text(base), Start(n), n, op_text, Mutation::Form::kSetItem, c.loop_depth > 0});
    }
  }
  Walk(left, c);
}

void IndexBuilder::For(NodeId n, const Ctx& c) {
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

void IndexBuilder::Comprehension(NodeId n, const Ctx& c) {
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

void IndexBuilder::Call(NodeId n, const Ctx& c) {
  FunctionView& v = View(c);
  const NodeId fn = t_.Child(n, Field::kFunction);
  const NodeId args = t_.Child(n, Field::kArguments);
  CallSite site;
  site.node = n;
  site.callee = m_.Canonical(fn, &v, Start(n));
  site.in_loop = c.loop_depth > 0;
  if (fn != kNoNode && t_.kind(fn) == Kind::kAttribute) {
    if (const NodeId attr = t_.Child(fn, Field::kAttribute); attr != kNoNode)
      site.method = Text(attr);
    site.object = t_.Unparen(t_.Child(fn, Field::kObject));
  }
  // Writes: `v.op_()`, `f(v, inplace=True)`, `f(..., out=v)`.
  if (site.object != kNoNode && t_.kind(site.object) == Kind::kIdentifier &&
      site.method.size() > 1 && site.method.back() == '_' && !absl::StartsWith(site.method, "__")) {
    v.mutations.push_back(
        {Text(site.object), Start(n), n, site.method, Mutation::Form::kMethod, site.in_loop});
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
        const absl::string_view op =
            site.method.empty() ? callee.substr(callee.rfind('.') + 1) : site.method;
        v.mutations.push_back({Text(first_positional), Start(n), n, op,
                               Mutation::Form::kInplaceKeyword, site.in_loop});
      } else if (Text(name) == "out" && t_.kind(value) == Kind::kIdentifier) {
        v.mutations.push_back(
            {Text(value), Start(n), n, "out=", Mutation::Form::kOutKeyword, site.in_loop});
      }
    }
  }
  v.calls.push_back(std::move(site));
  Walk(fn, c);
  Walk(args, c);
}

ModuleIndex::ModuleIndex(std::string path, const SyntaxTree& tree)
    : path_(std::move(path)), tree_(tree) {
  IndexBuilder(*this).Build();
}

}  // namespace cl::lint

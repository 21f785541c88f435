// The functions and classes of a ModuleIndex, as IndexBuilder's walk (module_index.cc) meets their
// definitions: qualnames, decorators, parameters (and which are taken for tensors), a FunctionView
// for each function's body, and a class's bases.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lint/module_index_builder.h"

namespace cl::lint {

void IndexBuilder::Decorators(NodeId decorated, const Ctx& c, std::vector<NodeId>& exprs,
                              std::vector<std::string>* names) {
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

void IndexBuilder::Function(NodeId def, NodeId decorated, const Ctx& c) {
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
bool IndexBuilder::ParamIsTensor(const Param& p) const {
  if (p.splat || p.name == "self" || p.name == "cls") return false;
  if (!m_.uses_torch_ &&
      (p.annotation == kNoNode || !absl::StrContains(Text(p.annotation), "Tensor")))
    return false;
  if (p.annotation != kNoNode) return absl::StrContains(Text(p.annotation), "Tensor");
  if (p.default_value != kNoNode) return t_.kind(t_.Unparen(p.default_value)) == Kind::kNoneLiteral;
  return true;
}

void IndexBuilder::Class(NodeId def, NodeId decorated, const Ctx& c) {
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

}  // namespace cl::lint

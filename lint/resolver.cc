#include "lint/resolver.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace cl::lint {
namespace {

constexpr int kMaxBaseDepth = 8;

absl::string_view LastComponent(absl::string_view dotted) {
  const size_t dot = dotted.rfind('.');
  return dot == absl::string_view::npos ? dotted : dotted.substr(dot + 1);
}

bool IsSelfReturningMethod(absl::string_view m) {
  return m == "to" || m == "cuda" || m == "cpu" || m == "eval" || m == "train" || m == "half" ||
         m == "float" || m == "double" || m == "bfloat16" || m == "requires_grad_" || m == "type" ||
         m == "to_empty" || m == "share_memory";
}

absl::string_view ModulePart(absl::string_view dotted) {
  const size_t dot = dotted.rfind('.');
  return dot == absl::string_view::npos ? absl::string_view() : dotted.substr(0, dot);
}

}  // namespace

bool Resolver::ModuleMatches(int file, absl::string_view module) const {
  while (absl::ConsumePrefix(&module, ".")) {
  }
  if (module.empty()) return false;
  absl::string_view path = files_[file]->path();
  if (!absl::ConsumeSuffix(&path, ".py")) return false;
  absl::ConsumeSuffix(&path, "/__init__");
  const std::string want = absl::StrReplaceAll(module, {{".", "/"}});
  if (!absl::EndsWith(path, want)) return false;
  return path.size() == want.size() || path[path.size() - want.size() - 1] == '/';
}

ClassRef Resolver::ClassByLastName(int file, absl::string_view canonical) const {
  const absl::string_view name = LastComponent(canonical);
  const absl::string_view module = ModulePart(canonical);
  if (module.empty()) {
    const int c = files_[file]->AnyClass(name);
    return c >= 0 ? ClassRef{file, c} : ClassRef{};
  }
  for (int f = 0; f < file_count(); ++f) {
    if (!ModuleMatches(f, module)) continue;
    if (const int c = files_[f]->TopClass(name); c >= 0) return {f, c};
  }
  return {};
}

ClassRef Resolver::ResolveClass(int file, absl::string_view canonical) const {
  if (canonical.empty() || absl::StartsWith(canonical, "torch.")) return {};
  return ClassByLastName(file, canonical);
}

FunctionRef Resolver::ResolveFunction(int file, absl::string_view canonical) const {
  if (canonical.empty() || absl::StartsWith(canonical, "torch.")) return {};
  const absl::string_view name = LastComponent(canonical);
  const absl::string_view module = ModulePart(canonical);
  if (module.empty()) {
    const int f = files_[file]->TopFunction(name);
    return f >= 0 ? FunctionRef{file, f} : FunctionRef{};
  }
  for (int f = 0; f < file_count(); ++f) {
    if (!ModuleMatches(f, module)) continue;
    if (const int fn = files_[f]->TopFunction(name); fn >= 0) return {f, fn};
  }
  return {};
}

FunctionRef Resolver::FindMethod(ClassRef c, absl::string_view name) const {
  for (int depth = 0; c.ok() && depth < kMaxBaseDepth; ++depth) {
    const ClassInfo& info = files_[c.file]->classes()[c.cls];
    if (auto it = info.methods.find(name); it != info.methods.end()) return {c.file, it->second};
    ClassRef next;
    for (const std::string& base : info.bases) {
      next = ResolveClass(c.file, base);
      if (next.ok()) break;
    }
    c = next;
  }
  return {};
}

ClassRef Resolver::EnclosingClass(int file, int function) const {
  const auto& fns = files_[file]->functions();
  for (int f = function; f >= 0; f = fns[f].parent) {
    if (fns[f].cls >= 0) return {file, fns[f].cls};
  }
  return {};
}

ClassRef Resolver::InstanceClass(int file, const FunctionView& view, absl::string_view name,
                                 uint32_t pos) const {
  const ModuleIndex& m = *files_[file];
  const SyntaxTree& t = m.tree();
  NodeId value = kNoNode;
  const FunctionView* where = &view;
  if (const Binding* b = view.At(name, pos); b != nullptr) {
    value = b->value;
  } else if (!view.Binds(name)) {
    const std::vector<NodeId>& sites = m.ModuleAssignments(name);
    if (!sites.empty() && t.kind(sites.back()) == Kind::kAssignment)
      value = t.Child(sites.back(), Field::kRight);
    where = &m.module_view();
  }
  value = t.Unparen(value);
  // `Model(cfg).to(device)`, `.cuda()`, `.eval()`: methods that return the module itself.
  for (int hops = 0; value != kNoNode && t.kind(value) == Kind::kCall && hops < 8; ++hops) {
    const NodeId fn = t.Child(value, Field::kFunction);
    if (fn == kNoNode || t.kind(fn) != Kind::kAttribute) break;
    const NodeId object = t.Unparen(t.Child(fn, Field::kObject));
    const absl::string_view method = t.Text(t.Child(fn, Field::kAttribute));
    if (object == kNoNode || t.kind(object) != Kind::kCall || !IsSelfReturningMethod(method)) break;
    value = object;
  }
  if (value == kNoNode || t.kind(value) != Kind::kCall) return {};
  return ResolveClass(file, m.Callee(value, where));
}

std::vector<ClassRef> Resolver::AttributeClasses(ClassRef c, absl::string_view attr) const {
  std::vector<ClassRef> out;
  for (int depth = 0; c.ok() && depth < kMaxBaseDepth; ++depth) {
    const ClassInfo& info = files_[c.file]->classes()[c.cls];
    if (auto it = info.attr_types.find(attr); it != info.attr_types.end()) {
      for (const std::string& callee : it->second) {
        if (const ClassRef k = ResolveClass(c.file, callee); k.ok()) out.push_back(k);
      }
      return out;
    }
    ClassRef next;
    for (const std::string& base : info.bases) {
      next = ResolveClass(c.file, base);
      if (next.ok()) break;
    }
    c = next;
  }
  return out;
}

void Resolver::CallTargets(int file, int function, const FunctionView& view, const CallSite& call,
                           std::vector<FunctionRef>* out) const {
  const ModuleIndex& m = *files_[file];
  const SyntaxTree& t = m.tree();
  const absl::string_view callee = call.callee;
  if (callee.empty() || absl::StartsWith(callee, "torch.")) return;
  const uint32_t pos = t[call.node].start;
  const size_t dot = callee.find('.');
  const ClassRef own = function >= 0 ? EnclosingClass(file, function) : ClassRef{};

  auto add_forward = [&](ClassRef k) {
    if (const FunctionRef f = FindMethod(k, "forward"); f.ok()) out->push_back(f);
  };

  if (dot == absl::string_view::npos) {
    // A nested function of this one or of an enclosing one, then a top-level function.
    const auto& fns = m.functions();
    for (int scope = function; scope >= 0; scope = fns[scope].parent) {
      if (const int nested = m.NestedFunction(scope, callee); nested >= 0) {
        out->push_back({file, nested});
        return;
      }
    }
    if (const Binding* b = view.At(callee, pos); b != nullptr) {
      // `for layer in self.layers: layer(x)`: the loop runs the classes in self.layers.
      const NodeId it = t.Unparen(b->value);
      if (b->loop_var && it != kNoNode && t.kind(it) == Kind::kAttribute && own.ok()) {
        const NodeId object = t.Child(it, Field::kObject);
        if (object != kNoNode && t.Text(object) == "self") {
          for (ClassRef k : AttributeClasses(own, t.Text(t.Child(it, Field::kAttribute))))
            add_forward(k);
          return;
        }
      }
      if (const ClassRef k = InstanceClass(file, view, callee, pos); k.ok()) add_forward(k);
      return;
    }
    if (const FunctionRef f = ResolveFunction(file, callee); f.ok()) {
      out->push_back(f);
      return;
    }
    if (const ClassRef k = InstanceClass(file, view, callee, pos); k.ok()) add_forward(k);
    return;
  }

  const absl::string_view head = callee.substr(0, dot);
  const absl::string_view rest = callee.substr(dot + 1);
  const size_t dot2 = rest.find('.');
  if (head == "self" && own.ok()) {
    if (dot2 == absl::string_view::npos) {
      if (const FunctionRef f = FindMethod(own, rest); f.ok()) {
        out->push_back(f);
        return;
      }
      for (ClassRef k : AttributeClasses(own, rest)) add_forward(k);
      return;
    }
    const absl::string_view attr = rest.substr(0, dot2);
    const absl::string_view method = rest.substr(dot2 + 1);
    if (method.find('.') != absl::string_view::npos) return;
    for (ClassRef k : AttributeClasses(own, attr)) {
      if (const FunctionRef f = FindMethod(k, method); f.ok()) out->push_back(f);
    }
    return;
  }
  if (head == "super()" && own.ok() && dot2 == absl::string_view::npos) {
    for (const std::string& base : m.classes()[own.cls].bases) {
      if (const FunctionRef f = FindMethod(ResolveClass(file, base), rest); f.ok()) {
        out->push_back(f);
        return;
      }
    }
    return;
  }
  if (dot2 == absl::string_view::npos) {
    // obj.method() on an instance of a known class, or Class.method().
    if (const ClassRef k = InstanceClass(file, view, head, pos); k.ok()) {
      if (const FunctionRef f = FindMethod(k, rest); f.ok()) out->push_back(f);
      return;
    }
    if (const ClassRef k = ResolveClass(file, head); k.ok() && !m.IsImported(head)) {
      if (const FunctionRef f = FindMethod(k, rest); f.ok()) out->push_back(f);
      return;
    }
  }
  // An imported function: "models.helper", "pkg.models.helper".
  if (const FunctionRef f = ResolveFunction(file, callee); f.ok()) out->push_back(f);
}

}  // namespace cl::lint

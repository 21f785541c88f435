// Detectors of what a compiled region calls or does: named calls (RNG, NumPy, streams),
// data-dependent control flow, Python side effects, grad-mode changes, decorated callees.
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lint/detectors.h"

namespace cl::lint {
namespace {

// A builtin called by its bare name: not imported, not bound in the function or the module.
bool IsBuiltinCall(const ModuleIndex& m, const FunctionView& v, const CallSite& c,
                   absl::string_view name) {
  if (c.callee != name) return false;
  return !m.IsImported(name) && !v.Binds(name) && !IsModuleName(m, name);
}

NodeId FirstArgument(const SyntaxTree& t, NodeId call) {
  const NodeId args = t.Child(call, Field::kArguments);
  if (args == kNoNode) return kNoNode;
  for (NodeId a : NamedChildren(t, args)) {
    if (t.kind(a) != Kind::kKeywordArgument) return a;
  }
  return kNoNode;
}

}  // namespace

// Calls by canonical name (function_names) or by method (method_names) inside the region.
void DetectCallInRegion(const DetectInput& in, const PatternSpec& spec,
                        std::vector<RawFinding>* out) {
  const DetectorParams& p = spec.params;
  ForEachScopedView(
      in, spec.scope, [&](int file, int function, const FunctionView& v, bool assumed) {
        const ModuleIndex& m = *in.files[file];
        const SyntaxTree& t = m.tree();
        for (const CallSite& c : v.calls) {
          if (!c.callee.empty() && !p.function_names.empty() &&
              p.function_names.Matches(c.callee) && !p.exclude_functions.Matches(c.callee)) {
            // A bare builtin name (id, hash, open) must really be the builtin.
            if (c.callee.find('.') == std::string::npos && !IsBuiltinCall(m, v, c, c.callee) &&
                !m.IsImported(c.callee)) {
              continue;
            }
            if (p.require_tensor) {
              const NodeId arg = FirstArgument(t, c.node);
              if (arg == kNoNode || !m.IsTensor(arg, v, t[arg].start)) continue;
            }
            RawFinding f = MakeFinding(file, function, c.node, "call", c.in_loop, assumed);
            f.producer = c.callee;
            f.op = c.callee;
            f.name = c.callee;
            out->push_back(std::move(f));
            continue;
          }
          if (c.method.empty() || p.method_names.empty() || !p.method_names.Matches(c.method) ||
              p.exclude_methods.Matches(c.method)) {
            continue;
          }
          // A method of an imported module (np.random.normal) is a function, not a tensor method.
          if (!c.callee.empty() && m.IsImported(c.callee.substr(0, c.callee.find('.')))) continue;
          if (p.require_tensor && !m.IsTensor(c.object, v, t[c.node].start)) continue;
          RawFinding f = MakeFinding(file, function, c.node, "method", c.in_loop, assumed);
          f.producer = absl::StrCat(".", c.method);
          f.op = std::string(c.method);
          f.name = c.object == kNoNode ? "" : t.Snippet(c.object, 40);
          out->push_back(std::move(f));
        }
      });
}

// Region functions with a decorator named in function_names (functools.lru_cache, ...).
void DetectDecoratedInRegion(const DetectInput& in, const PatternSpec& spec,
                             std::vector<RawFinding>* out) {
  ForEachScopedView(in, spec.scope, [&](int file, int function, const FunctionView&, bool assumed) {
    if (function < 0) return;
    const FunctionInfo& fn = in.files[file]->functions()[function];
    for (size_t i = 0; i < fn.decorator_names.size(); ++i) {
      if (!spec.params.function_names.Matches(fn.decorator_names[i])) continue;
      RawFinding f = MakeFinding(file, function, fn.decorators[i], "decorator", false, assumed);
      f.producer = fn.decorator_names[i];
      f.op = fn.decorator_names[i];
      f.name = fn.qualname;
      out->push_back(std::move(f));
    }
  });
}

// .item() / .tolist(), int/float/bool(tensor), branches on tensors, data-dependent shapes.
void DetectDataDependentControl(const DetectInput& in, const PatternSpec& spec,
                                std::vector<RawFinding>* out) {
  const DetectorParams& p = spec.params;
  ForEachScopedView(
      in, spec.scope, [&](int file, int function, const FunctionView& v, bool assumed) {
        const ModuleIndex& m = *in.files[file];
        const SyntaxTree& t = m.tree();
        for (const CallSite& c : v.calls) {
          RawFinding f;
          if (!c.method.empty() && p.method_names.Matches(c.method) &&
              (c.callee.empty() || !m.IsImported(c.callee.substr(0, c.callee.find('.'))))) {
            const bool shape = c.method == "nonzero";
            if (shape && !m.IsTensor(c.object, v, t[c.node].start)) continue;
            f = MakeFinding(file, function, c.node, shape ? "dynamic_shape" : std::string(c.method),
                            c.in_loop, assumed);
            f.op = absl::StrCat(".", c.method, "()");
          } else if (!c.callee.empty() && p.function_names.Matches(c.callee)) {
            f = MakeFinding(file, function, c.node, "dynamic_shape", c.in_loop, assumed);
            f.op = c.callee;
          } else if (c.callee == "int" || c.callee == "float" || c.callee == "bool") {
            if (!IsBuiltinCall(m, v, c, c.callee)) continue;
            const NodeId arg = FirstArgument(t, c.node);
            if (arg == kNoNode || !m.IsTensor(arg, v, t[arg].start)) continue;
            f = MakeFinding(file, function, c.node, "scalar_cast", c.in_loop, assumed);
            f.op = absl::StrCat(c.callee, "(tensor)");
          } else {
            continue;
          }
          f.producer = f.op;
          f.name = c.object == kNoNode ? "" : t.Snippet(c.object, 40);
          out->push_back(std::move(f));
        }
        for (const Condition& cond : v.conditions) {
          if (!m.IsTensor(cond.node, v, t[cond.node].start)) continue;
          RawFinding f = MakeFinding(file, function, cond.node, "branch", cond.in_loop, assumed);
          f.op = "branch on a tensor";
          f.producer = "branch";
          f.name = t.Snippet(cond.node, 60);
          out->push_back(std::move(f));
        }
      });
}

// Whether `self.<attr>` is a tensor of class `cls`: a registered buffer
// (`self.register_buffer("k_cache", ...)` in any of its methods) or an attribute made by a torch
// call (`torch.zeros(...)`, `nn.Parameter(...)`). A write into it (`self.k_cache[:, pos] = k`, a KV
// cache) is a tensor mutation that torch.compile traces, not a Python container's side effect.
bool IsSelfTensor(const ModuleIndex& m, int cls, absl::string_view attr) {
  if (cls < 0) return false;
  const SyntaxTree& t = m.tree();
  if (auto it = m.classes()[cls].attr_types.find(attr); it != m.classes()[cls].attr_types.end()) {
    for (const std::string& callee : it->second) {
      if (absl::StartsWith(callee, "torch.")) return true;
    }
  }
  for (int f = 0; f < static_cast<int>(m.functions().size()); ++f) {
    if (m.functions()[f].cls != cls) continue;
    for (const CallSite& c : m.view_of(f).calls) {
      if (c.method != "register_buffer" || c.object == kNoNode || t.Text(c.object) != "self")
        continue;
      const NodeId name = FirstArgument(t, c.node);
      if (name == kNoNode || t.kind(name) != Kind::kString) continue;
      const absl::string_view quoted = t.Text(name);
      if (quoted.size() >= 2 && quoted.substr(1, quoted.size() - 2) == attr) return true;
    }
  }
  return false;
}

// Side effects Dynamo must replay: container mutation of globals, class attributes, closures and
// self attributes, global/nonlocal rebinding, mutate-while-iterating, I/O, print and logging.
void DetectSideEffect(const DetectInput& in, const PatternSpec& spec,
                      std::vector<RawFinding>* out) {
  const DetectorParams& p = spec.params;
  ForEachScopedView(
      in, spec.scope, [&](int file, int function, const FunctionView& v, bool assumed) {
        if (function < 0) return;
        const ModuleIndex& m = *in.files[file];
        const SyntaxTree& t = m.tree();
        // Names bound in an enclosing function: closure variables.
        auto closure = [&](absl::string_view name) {
          for (int f = m.functions()[function].parent; f >= 0; f = m.functions()[f].parent) {
            if (m.view_of(f).Binds(name)) return true;
          }
          return false;
        };
        // What kind of container `object` is, or "" for a local one.
        auto owner = [&](NodeId object) -> std::string {
          object = t.Unparen(object);
          if (object == kNoNode) return "";
          if (t.kind(object) == Kind::kIdentifier) {
            const absl::string_view name = t.Text(object);
            if (v.global_names.contains(name)) return "global_container";
            if (v.nonlocal_names.contains(name)) return "closure_container";
            if (v.Binds(name) || m.IsImported(name)) return "";
            if (!m.ModuleAssignments(name).empty()) return "global_container";
            if (closure(name)) return "closure_container";
            return "";
          }
          if (t.kind(object) == Kind::kAttribute) {
            const NodeId head = t.Unparen(t.Child(object, Field::kObject));
            if (head == kNoNode) return "";
            const absl::string_view text = t.Text(head);
            if (text == "self.__class__" || text == "type(self)" || text == "cls")
              return "class_container";
            if (t.kind(head) == Kind::kIdentifier) {
              if (text == "self") return "self_container";
              if (!v.Binds(text) && m.AnyClass(text) >= 0) return "class_container";
              if (!v.Binds(text) && !m.IsImported(text) && !m.ModuleAssignments(text).empty()) {
                return "global_container";
              }
            }
          }
          return "";
        };
        auto emit = [&](NodeId node, absl::string_view form, absl::string_view name,
                        absl::string_view op, bool in_loop) {
          out->push_back(MakeOpFinding(file, function, node, form, name, op, in_loop, assumed));
        };

        // `for x in items: items.append(...)`: a for statement around the call iterates its object.
        auto mutates_iterated = [&](const CallSite& c) {
          if (c.object == kNoNode) return false;
          for (NodeId p = t.parent(c.node); p != kNoNode; p = t.parent(p)) {
            const Kind k = t.kind(p);
            if (k == Kind::kFunctionDefinition || k == Kind::kLambda || k == Kind::kClassDefinition)
              return false;
            if (k != Kind::kForStatement) continue;
            const NodeId it = t.Unparen(t.Child(p, Field::kRight));
            const NodeId body = t.Child(p, Field::kBody);
            if (it == kNoNode || body == kNoNode || t[c.node].start < t[body].start) continue;
            if ((t.kind(it) == Kind::kIdentifier || t.kind(it) == Kind::kAttribute) &&
                t.Text(it) == t.Text(c.object)) {
              return true;
            }
          }
          return false;
        };
        for (const CallSite& c : v.calls) {
          if (!c.method.empty() && p.method_names.Matches(c.method) && mutates_iterated(c)) {
            emit(c.node, "mutate_while_iterating", t.Text(c.object), c.method, true);
            continue;
          }
          if (!c.method.empty() && p.method_names.Matches(c.method)) {
            const std::string kind = owner(c.object);
            if (!kind.empty()) emit(c.node, kind, t.Snippet(c.object, 40), c.method, c.in_loop);
            continue;
          }
          if (IsBuiltinCall(m, v, c, "print")) {
            emit(c.node, "print", "print", "print", c.in_loop);
          } else if (IsBuiltinCall(m, v, c, "open") || IsBuiltinCall(m, v, c, "input") ||
                     absl::StartsWith(c.callee, "socket.") || c.callee == "os.write" ||
                     c.callee == "os.system" || absl::StartsWith(c.callee, "subprocess.")) {
            emit(c.node, "io", c.callee, c.callee, c.in_loop);
          } else if ((absl::StartsWith(c.callee, "logging.") && c.callee != "logging.getLogger") ||
                     c.callee == "warnings.warn") {
            emit(c.node, "logging", c.callee, c.callee, c.in_loop);
          }
        }
        for (const Mutation& mu : v.mutations) {
          if (mu.form != Mutation::Form::kSetItem) continue;
          const NodeId left = t.Unparen(t.Child(mu.node, Field::kLeft));
          if (left == kNoNode || t.kind(left) != Kind::kSubscript) continue;
          const NodeId object = t.Child(left, Field::kValue);
          const std::string kind = owner(object);
          if (!kind.empty()) emit(mu.node, kind, t.Text(object), "[]=", mu.in_loop);
        }
        // `self.cache[k] = v`, `Class.registry[k] = v`: subscript writes through an attribute.
        for (NodeId a : v.assignments) {
          const NodeId left = t.Unparen(t.Child(a, Field::kLeft));
          if (left == kNoNode || t.kind(left) != Kind::kSubscript) continue;
          const NodeId object = t.Unparen(t.Child(left, Field::kValue));
          if (object == kNoNode || t.kind(object) != Kind::kAttribute) continue;
          const std::string kind = owner(object);
          if (kind == "self_container" && IsSelfTensor(m, m.functions()[function].cls,
                                                       t.Text(t.Child(object, Field::kAttribute))))
            continue;
          if (!kind.empty()) emit(a, kind, t.Text(object), "[]=", false);
        }
        // `global g` / `nonlocal g` followed by an assignment to g.
        for (const auto* names : {&v.global_names, &v.nonlocal_names}) {
          for (absl::string_view name : *names) {
            auto it = v.by_name.find(name);
            if (it == v.by_name.end() || it->second.empty()) continue;
            const Binding& b = v.bindings[it->second.front()];
            emit(b.site, names == &v.global_names ? "global_assign" : "nonlocal_assign", name, "=",
                 false);
          }
        }
      });
}

// Grad-mode changes inside the region: with no_grad()/enable_grad()/..., grad-mode decorators on
// region functions, torch.autograd.grad / torch.func transforms, requires_grad=True tensors.
void DetectGradMode(const DetectInput& in, const PatternSpec& spec, std::vector<RawFinding>* out) {
  const DetectorParams& p = spec.params;
  ForEachScopedView(
      in, spec.scope, [&](int file, int function, const FunctionView& v, bool assumed) {
        const ModuleIndex& m = *in.files[file];
        const SyntaxTree& t = m.tree();
        auto emit = [&](NodeId node, absl::string_view form, absl::string_view callee,
                        bool in_loop) {
          RawFinding f = MakeFinding(file, function, node, form, in_loop, assumed);
          f.name = std::string(callee);
          f.op = std::string(callee);
          f.producer = std::string(callee);
          out->push_back(std::move(f));
        };
        std::vector<NodeId> with_calls;
        for (NodeId item : v.with_items) {
          const NodeId e = t.Unparen(item);
          const std::string callee =
              t.kind(e) == Kind::kCall ? m.Callee(e, &v) : m.Canonical(e, &v, t[e].start);
          if (p.function_names.Matches(callee)) {
            emit(e, "with", callee, false);
            with_calls.push_back(e);
          }
        }
        if (function >= 0) {
          const FunctionInfo& fn = m.functions()[function];
          for (size_t i = 0; i < fn.decorator_names.size(); ++i) {
            if (p.function_names.Matches(fn.decorator_names[i])) {
              emit(fn.decorators[i], "decorator", fn.decorator_names[i], false);
            }
          }
        }
        for (const CallSite& c : v.calls) {
          if (std::find(with_calls.begin(), with_calls.end(), c.node) != with_calls.end()) continue;
          if (!c.callee.empty() && p.function_names.Matches(c.callee)) {
            const bool functional = absl::StartsWith(c.callee, "torch.autograd.") ||
                                    absl::StartsWith(c.callee, "torch.func.") ||
                                    absl::StartsWith(c.callee, "functorch.");
            emit(c.node, functional ? "functional_grad" : "call", c.callee, c.in_loop);
            continue;
          }
          if (c.method == "requires_grad_") {
            const NodeId arg = FirstArgument(t, c.node);
            if (arg == kNoNode || t.kind(t.Unparen(arg)) == Kind::kTrue) {
              emit(c.node, "requires_grad_tensor", "requires_grad_", c.in_loop);
            }
            continue;
          }
          const NodeId args = t.Child(c.node, Field::kArguments);
          if (args == kNoNode || t.kind(args) != Kind::kArgumentList) continue;
          for (NodeId a : NamedChildren(t, args)) {
            if (t.kind(a) != Kind::kKeywordArgument) continue;
            const NodeId name = t.Child(a, Field::kName);
            const NodeId value = t.Unparen(t.Child(a, Field::kValue));
            if (name != kNoNode && t.Text(name) == "requires_grad" && value != kNoNode &&
                t.kind(value) == Kind::kTrue) {
              emit(c.node, "requires_grad_tensor", c.callee, c.in_loop);
            }
          }
        }
      });
}

}  // namespace cl::lint

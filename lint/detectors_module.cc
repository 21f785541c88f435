// Detectors that look across a file: module attributes a compiled forward depends on, globals
// rebound after the first call, and varying Python scalars passed to compiled callables.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lint/detectors.h"

namespace cl::lint {
namespace {

bool ContainsCompileCall(const ModuleIndex& m, const FunctionView& v, NodeId value) {
  const SyntaxTree& t = m.tree();
  return SubtreeHas(t, value, [&](NodeId n) {
    if (t.kind(n) != Kind::kCall) return false;
    if (IsCompileCallee(m.Callee(n, &v))) return true;
    const NodeId fn = t.Child(n, Field::kFunction);
    return fn != kNoNode && t.kind(fn) == Kind::kCall &&
           m.Callee(fn, &v) == "torch._dynamo.optimize";
  });
}

// Which names hold a compiled callable: bound to a torch.compile(...) result, a function decorated
// with @torch.compile, or an object whose `.compile()` was called. Answers are cached: the scan
// asks for every call of a file.
class CompiledNames {
 public:
  explicit CompiledNames(const ModuleIndex& m) : m_(m), t_(m.tree()) {}

  bool Is(const FunctionView& v, absl::string_view name, uint32_t pos) {
    if (const int bi = v.IndexAt(name, pos); bi >= 0) {
      const Binding& b = v.bindings[bi];
      auto [it, fresh] = bindings_.try_emplace(&b, false);
      if (fresh) it->second = b.value != kNoNode && ContainsCompileCall(m_, v, b.value);
      if (it->second) return true;
    } else if (!v.Binds(name)) {
      auto [it, fresh] = module_.try_emplace(name, false);
      if (fresh) it->second = ModuleNameIsCompiled(name);
      if (it->second) return true;
    }
    // `name.compile()` earlier in this function.
    auto [calls, fresh] = compile_calls_.try_emplace(&v);
    if (fresh) {
      for (const CallSite& c : v.calls) {
        if (c.method == "compile" && c.object != kNoNode &&
            t_.kind(c.object) == Kind::kIdentifier) {
          calls->second.try_emplace(t_.Text(c.object), t_[c.node].start);
        }
      }
    }
    auto it = calls->second.find(name);
    return it != calls->second.end() && it->second < pos;
  }

 private:
  bool ModuleNameIsCompiled(absl::string_view name) const {
    for (NodeId s : m_.ModuleAssignments(name)) {
      if (t_.kind(s) == Kind::kAssignment &&
          ContainsCompileCall(m_, m_.module_view(), t_.Child(s, Field::kRight))) {
        return true;
      }
    }
    if (const int f = m_.TopFunction(name); f >= 0) {
      for (const std::string& d : m_.functions()[f].decorator_names) {
        if (IsCompileDecorator(d)) return true;
      }
    }
    return false;
  }

  const ModuleIndex& m_;
  const SyntaxTree& t_;
  absl::flat_hash_map<const Binding*, bool> bindings_;
  absl::flat_hash_map<absl::string_view, bool> module_;
  absl::flat_hash_map<const FunctionView*, absl::flat_hash_map<absl::string_view, uint32_t>>
      compile_calls_;
};

// A value that is not a tensor: literals, flags, callables, modules (params count as unknown,
// which for an attribute write is the flag case: `def enable(self, on): self.on = on`).
bool NonTensorValue(const ModuleIndex& m, const FunctionView& v, NodeId value) {
  const SyntaxTree& t = m.tree();
  const NodeId e = t.Unparen(value);
  if (e == kNoNode) return false;
  if (t.kind(e) == Kind::kIdentifier) {
    const Binding* b = v.At(t.Text(e), t[e].start);
    return b == nullptr || b->param || !b->tensor;
  }
  if (t.kind(e) == Kind::kCall) {
    const std::string callee = m.Callee(e, &v);
    if (absl::EndsWith(callee, ".Parameter") || absl::EndsWith(callee, ".Buffer")) return false;
  }
  return !m.IsTensor(e, v, t[e].start);
}

constexpr absl::string_view kInitMethods[] = {"__init__",      "__new__",          "__setstate__",
                                              "__post_init__", "reset_parameters", "_init_weights",
                                              "__repr__",      "extra_repr"};

}  // namespace

// Non-tensor attribute writes a compiled forward reads without a guard.
void DetectModuleAttr(const DetectInput& in, const PatternSpec& spec,
                      std::vector<RawFinding>* out) {
  for (int f = 0; f < static_cast<int>(in.files.size()); ++f) {
    const ModuleIndex& m = *in.files[f];
    const SyntaxTree& t = m.tree();
    absl::flat_hash_set<int> compiled_classes;
    for (int k = 0; k < static_cast<int>(m.classes().size()); ++k) {
      const FunctionRef forward = in.resolver.FindMethod({f, k}, "forward");
      if (!forward.ok() || !in.region.InRegion(forward.file, forward.function)) continue;
      compiled_classes.insert(k);
      const bool assumed = in.region.Assumed(forward.file);
      const ClassInfo& cls = m.classes()[k];
      // Methods __init__ calls build the module; writes there are construction, not mutation.
      absl::flat_hash_set<absl::string_view> construction(std::begin(kInitMethods),
                                                          std::end(kInitMethods));
      if (auto init = cls.methods.find("__init__"); init != cls.methods.end()) {
        for (const CallSite& c : m.view_of(init->second).calls) {
          if (absl::StartsWith(c.callee, "self.") && c.callee.find('.', 5) == std::string::npos) {
            construction.insert(absl::string_view(c.callee).substr(5));
          }
        }
      }
      for (const auto& [name, method] : cls.methods) {
        if (construction.contains(name)) continue;
        const FunctionView& v = m.view_of(method);
        for (NodeId a : v.assignments) {
          const NodeId left = t.Unparen(t.Child(a, Field::kLeft));
          if (left == kNoNode || t.kind(left) != Kind::kAttribute) continue;
          const NodeId object = t.Child(left, Field::kObject);
          if (object == kNoNode || t.Text(object) != "self") continue;
          if (t.kind(a) == Kind::kAssignment && !NonTensorValue(m, v, t.Child(a, Field::kRight)))
            continue;
          RawFinding r = MakeFinding(f, method, a, "self_assign", /*in_loop=*/false, assumed);
          r.name = absl::StrCat("self.", t.Text(t.Child(left, Field::kAttribute)));
          r.base = cls.qualname;
          r.op = absl::StrCat(cls.qualname, ".", name);
          r.detail = absl::StrCat("`", cls.qualname, ".forward` runs compiled");
          out->push_back(std::move(r));
        }
      }
    }
    if (spec.scope == Scope::kCompiledRegion) continue;
    // From outside: `model.flag = …` after compiling, `setattr(model, …)`, `Class.attr = …`.
    CompiledNames compiled(m);
    for (const FunctionView& v : m.views()) {
      if (in.region.InRegion(f, v.function)) continue;
      if (v.assignments.empty() && v.calls.empty()) continue;
      // Where this function (or module code) first compiles something.
      uint32_t first_compile = UINT32_MAX;
      for (const CallSite& c : v.calls) {
        if (IsCompileCallee(c.callee) || c.method == "compile")
          first_compile = std::min(first_compile, t[c.node].start);
      }
      auto compiled_instance = [&](absl::string_view name, uint32_t pos) {
        if (name == "self") return false;
        if (compiled.Is(v, name, pos)) return true;
        if (first_compile >= pos) return false;  // only after the compile
        const ClassRef k = in.resolver.InstanceClass(f, v, name, pos);
        if (!k.ok()) return false;
        const FunctionRef forward = in.resolver.FindMethod(k, "forward");
        return forward.ok() && in.region.InRegion(forward.file, forward.function);
      };
      for (NodeId a : v.assignments) {
        const NodeId left = t.Unparen(t.Child(a, Field::kLeft));
        if (left == kNoNode || t.kind(left) != Kind::kAttribute) continue;
        NodeId head = left;
        while (head != kNoNode && t.kind(head) == Kind::kAttribute)
          head = t.Unparen(t.Child(head, Field::kObject));
        if (head == kNoNode || t.kind(head) != Kind::kIdentifier) continue;
        const absl::string_view name = t.Text(head);
        std::string form;
        if (const int k = m.AnyClass(name);
            k >= 0 && !v.Binds(name) && compiled_classes.contains(k)) {
          form = "class_attr";
        } else if (compiled_instance(name, t[a].start)) {
          form = "external_assign";
        } else {
          continue;
        }
        RawFinding r = MakeFinding(f, v.function, a, form, /*in_loop=*/false, /*assumed=*/false);
        r.name = std::string(t.Text(left));
        r.base = std::string(name);
        r.op = std::string("=");
        out->push_back(std::move(r));
      }
      for (const CallSite& c : v.calls) {
        if (c.callee != "setattr" || v.Binds("setattr")) continue;
        const NodeId args = t.Child(c.node, Field::kArguments);
        const NodeId target = args == kNoNode ? kNoNode : t.Unparen(t.NamedChild(args));
        if (target == kNoNode || t.kind(target) != Kind::kIdentifier) continue;
        if (!compiled_instance(t.Text(target), t[c.node].start)) continue;
        RawFinding r =
            MakeFinding(f, v.function, c.node, "setattr", /*in_loop=*/false, /*assumed=*/false);
        r.name = std::string(t.Text(target));
        r.base = r.name;
        r.op = "setattr";
        out->push_back(std::move(r));
      }
    }
  }
}

// A module-level name read in the region and rebound by `global g; g = …` or at top level after
// the first compile or compiled call.
void DetectGlobalRebind(const DetectInput& in, const PatternSpec& spec,
                        std::vector<RawFinding>* out) {
  for (int f = 0; f < static_cast<int>(in.files.size()); ++f) {
    const ModuleIndex& m = *in.files[f];
    const SyntaxTree& t = m.tree();
    const FunctionView& mv = m.module_view();
    // Where module code first compiles or calls into the region.
    uint32_t first_call = UINT32_MAX;
    std::vector<FunctionRef> targets;
    for (const CallSite& c : mv.calls) {
      bool compiled = IsCompileCallee(c.callee) || c.method == "compile";
      if (!compiled) {
        targets.clear();
        in.resolver.CallTargets(f, -1, mv, c, &targets);
        for (FunctionRef r : targets) compiled = compiled || in.region.InRegion(r.file, r.function);
      }
      if (compiled) first_call = std::min(first_call, t[c.node].start);
    }
    absl::flat_hash_map<absl::string_view, uint32_t> rebound;  // name → line of the rebinding
    for (const auto& [name, sites] : m.module_assignments()) {
      // A top-level def or class is the first binding; an assignment after the first call rebinds.
      const size_t first = m.TopFunction(name) >= 0 || m.TopClass(name) >= 0 ? 0 : 1;
      for (size_t i = first; i < sites.size(); ++i) {
        if (t[sites[i]].start > first_call) {
          rebound.emplace(name, t.line(sites[i]));
          break;
        }
      }
    }
    for (const FunctionView& v : m.views()) {
      for (absl::string_view name : v.global_names) {
        auto it = v.by_name.find(name);
        if (it != v.by_name.end() && !it->second.empty()) {
          rebound.emplace(name, t.line(v.bindings[it->second.front()].site));
        }
      }
    }
    if (rebound.empty()) continue;
    for (const FunctionView& v : m.views()) {
      if (v.function < 0 || !in.region.InRegion(f, v.function)) continue;
      if (spec.scope == Scope::kOutsideCompiledRegion) continue;
      absl::flat_hash_set<absl::string_view> seen;
      for (const Read& r : v.reads) {
        auto it = rebound.find(r.name);
        if (it == rebound.end() || seen.contains(r.name)) continue;
        if (v.Binds(r.name) && !v.global_names.contains(r.name)) continue;
        if (m.IsImported(r.name)) continue;
        seen.insert(r.name);
        const int fn = m.TopFunction(r.name);
        bool callable = fn >= 0;
        for (NodeId s : m.ModuleAssignments(r.name)) {
          const NodeId rhs = t.Unparen(t.Child(s, Field::kRight));
          if (rhs != kNoNode && (t.kind(rhs) == Kind::kLambda || m.TopFunction(t.Text(rhs)) >= 0))
            callable = true;
        }
        RawFinding x = MakeFinding(f, v.function, r.node, callable ? "function_global" : "global",
                                   /*in_loop=*/false, in.region.Assumed(f));
        x.name = std::string(r.name);
        x.op = "read";
        x.detail = absl::StrCat("`", r.name, "` is rebound at line ", it->second);
        out->push_back(std::move(x));
      }
    }
  }
}

// Varying Python scalars passed to compiled callables; float op parameters inside the region;
// optimizer param_groups scalars written while opt.step is compiled.
void DetectScalarArgs(const DetectInput& in, const PatternSpec& spec,
                      std::vector<RawFinding>* out) {
  static constexpr absl::string_view kOpParams[] = {"eps", "scale", "scale_factor", "delta",
                                                    "label_smoothing"};
  const DetectorParams& p = spec.params;
  for (int f = 0; f < static_cast<int>(in.files.size()); ++f) {
    const ModuleIndex& m = *in.files[f];
    const SyntaxTree& t = m.tree();
    auto scheduler = [&](NodeId n) {
      return SubtreeHas(t, n, [&](NodeId x) {
        if (t.kind(x) != Kind::kCall) return false;
        const NodeId fn = t.Child(x, Field::kFunction);
        if (fn == kNoNode || t.kind(fn) != Kind::kAttribute) return false;
        const absl::string_view method = t.Text(t.Child(fn, Field::kAttribute));
        return method == "get_last_lr" || method == "get_lr";
      });
    };
    absl::flat_hash_set<absl::string_view> compiled_steps;  // `opt` in torch.compile(opt.step)
    for (const FunctionView& v : m.views()) {
      for (const CallSite& c : v.calls) {
        if (!IsCompileCallee(c.callee)) continue;
        const NodeId args = t.Child(c.node, Field::kArguments);
        const NodeId target = args == kNoNode ? kNoNode : t.Unparen(t.NamedChild(args));
        if (target != kNoNode && t.kind(target) == Kind::kAttribute &&
            t.Text(t.Child(target, Field::kAttribute)) == "step") {
          compiled_steps.insert(t.Text(t.Child(target, Field::kObject)));
        }
      }
    }
    CompiledNames compiled(m);
    for (const FunctionView& v : m.views()) {
      const bool region = in.region.InRegion(f, v.function);
      const bool assumed = region && in.region.Assumed(f);
      for (const CallSite& c : v.calls) {
        const NodeId args = t.Child(c.node, Field::kArguments);
        if (args == kNoNode || t.kind(args) != Kind::kArgumentList) continue;
        if (region && v.function >= 0) {
          // `F.layer_norm(x, eps=eps)` where eps is a float parameter of the compiled function.
          for (NodeId a : NamedChildren(t, args)) {
            if (t.kind(a) != Kind::kKeywordArgument) continue;
            const absl::string_view key = t.Text(t.Child(a, Field::kName));
            const NodeId value = t.Unparen(t.Child(a, Field::kValue));
            if (std::find(std::begin(kOpParams), std::end(kOpParams), key) == std::end(kOpParams))
              continue;
            if (value == kNoNode || t.kind(value) != Kind::kIdentifier) continue;
            for (const Param& param : m.functions()[v.function].params) {
              if (param.name != t.Text(value)) continue;
              const bool float_param =
                  (param.annotation != kNoNode && t.Text(param.annotation) == "float") ||
                  (param.default_value != kNoNode &&
                   t.kind(t.Unparen(param.default_value)) == Kind::kFloat);
              if (!float_param) continue;
              RawFinding r =
                  MakeFinding(f, v.function, c.node, "op_param", /*in_loop=*/false, assumed);
              r.name = std::string(param.name);
              r.op = absl::StrCat(key, "=");
              r.producer = std::string(key);
              r.detail = absl::StrCat("the float `", param.name, "` feeds `", key, "=`");
              r.in_loop = c.in_loop;
              out->push_back(std::move(r));
            }
          }
        }
        if (c.callee.empty() || c.callee.find('.') != std::string::npos) continue;
        if (!compiled.Is(v, c.callee, t[c.node].start)) continue;
        for (NodeId a : NamedChildren(t, args)) {
          absl::string_view key;
          NodeId value = a;
          if (t.kind(a) == Kind::kKeywordArgument) {
            key = t.Text(t.Child(a, Field::kName));
            value = t.Child(a, Field::kValue);
          }
          value = t.Unparen(value);
          if (value == kNoNode || IsLiteralValue(t, value)) continue;
          std::string form;
          std::string name(t.Snippet(value, 40));
          if (!key.empty() && p.attr_names.Matches(key)) {
            form = "scalar_name";
            name = std::string(key);
          } else if (t.kind(value) == Kind::kIdentifier) {
            const Binding* b = v.At(t.Text(value), t[value].start);
            if (b != nullptr && b->loop_var && !b->tensor) {
              form = "loop_var";
            } else if (p.attr_names.Matches(t.Text(value))) {
              form = "scalar_name";
            } else if (b != nullptr && b->value != kNoNode && scheduler(b->value)) {
              form = "scheduler";
            }
          } else if (scheduler(value)) {
            form = "scheduler";
          }
          if (form.empty()) continue;
          RawFinding r = MakeFinding(f, v.function, c.node, form, /*in_loop=*/false, assumed);
          r.name = name;
          r.op = c.callee;
          r.producer = c.callee;
          r.in_loop = c.in_loop;
          r.detail = absl::StrCat(
              "`", name, "` is a Python number that changes between calls of the compiled `",
              c.callee, "`");
          out->push_back(std::move(r));
          break;
        }
      }
      if (compiled_steps.empty()) continue;
      // `for g in opt.param_groups: g["lr"] = …` / `opt.param_groups[0]["lr"] = …`.
      for (NodeId a : v.assignments) {
        const NodeId left = t.Unparen(t.Child(a, Field::kLeft));
        if (left == kNoNode || t.kind(left) != Kind::kSubscript) continue;
        const NodeId base = t.Unparen(t.Child(left, Field::kValue));
        if (base == kNoNode) continue;
        absl::string_view opt;
        if (t.kind(base) == Kind::kIdentifier) {
          const Binding* b = v.At(t.Text(base), t[a].start);
          const NodeId it = b == nullptr ? kNoNode : t.Unparen(b->value);
          if (b != nullptr && b->loop_var && it != kNoNode && t.kind(it) == Kind::kAttribute &&
              t.Text(t.Child(it, Field::kAttribute)) == "param_groups") {
            opt = t.Text(t.Child(it, Field::kObject));
          }
        } else if (t.kind(base) == Kind::kSubscript) {
          const NodeId groups = t.Unparen(t.Child(base, Field::kValue));
          if (groups != kNoNode && t.kind(groups) == Kind::kAttribute &&
              t.Text(t.Child(groups, Field::kAttribute)) == "param_groups") {
            opt = t.Text(t.Child(groups, Field::kObject));
          }
        }
        if (opt.empty() || !compiled_steps.contains(opt)) continue;
        RawFinding r =
            MakeFinding(f, v.function, a, "param_groups", /*in_loop=*/false, /*assumed=*/false);
        r.name = std::string(t.Text(left));
        r.op = absl::StrCat(opt, ".step");
        r.detail = absl::StrCat("`", opt, ".step` is compiled; the scalar is guarded by value");
        out->push_back(std::move(r));
      }
    }
  }
}

namespace {

// A module reference a hook can be registered on: a name, or attributes and subscripts of one
// (`model`, `self.model`, `model.layers[0].attn`); empty for anything else.
absl::string_view ModuleRef(const SyntaxTree& t, NodeId n) {
  n = t.Unparen(n);
  for (NodeId x = n; x != kNoNode; x = t.Unparen(t.Child(x, Field::kObject))) {
    if (t.kind(x) == Kind::kSubscript) x = t.Unparen(t.Child(x, Field::kValue));
    if (x == kNoNode) return "";
    if (t.kind(x) == Kind::kIdentifier) return t.Text(n);
    if (t.kind(x) != Kind::kAttribute) return "";
  }
  return "";
}

// Whether `ref` is `module` or one of its submodules (`module.x`, `module[0]`, `module.layers()`).
bool IsWithin(absl::string_view ref, absl::string_view module) {
  return absl::StartsWith(ref, module) &&
         (ref.size() == module.size() || ref[module.size()] == '.' || ref[module.size()] == '[');
}

struct CompileSite {
  absl::string_view module;  // what was compiled
  absl::string_view result;  // the name the compiled module is bound to ("" if none)
  bool in_place = false;     // `module.compile()`
  uint32_t pos = 0;
  uint32_t line = 0;
};

// Whether the compiled code misses a hook change on `ref` after `site`: a hook on the wrapper
// `torch.compile` returned runs eagerly around it, whereas the compiled code traced the module's
// own hooks (and its submodules') and does not guard on them.
bool MissedHook(const CompileSite& site, absl::string_view ref) {
  const bool rebound = !site.in_place && site.result == site.module;
  if (IsWithin(ref, site.module) && !(rebound && ref == site.module)) return true;
  return !site.result.empty() && site.result != site.module && IsWithin(ref, site.result) &&
         ref != site.result;
}

}  // namespace

// Hooks registered, or removed, on a module after it was compiled: torch does not guard on
// nn.Module hooks (`skip_nnmodule_hook_guards`, on by default), so the compiled code keeps running
// the hooks it traced. Within one function (or the module's top-level code), by source order.
void DetectHookAfterCompile(const DetectInput& in, const PatternSpec& spec,
                            std::vector<RawFinding>* out) {
  const NameMatcher& hook_methods = spec.params.method_names;
  ForEachScopedView(in, spec.scope, [&](int f, int, const FunctionView& v, bool) {
    const ModuleIndex& m = *in.files[f];
    const SyntaxTree& t = m.tree();
    std::vector<CompileSite> sites;
    for (const CallSite& c : v.calls) {
      CompileSite site{.pos = t[c.node].start, .line = t.line(c.node)};
      if (IsCompileCallee(c.callee)) {
        const NodeId args = t.Child(c.node, Field::kArguments);
        site.module = args == kNoNode ? "" : ModuleRef(t, t.NamedChild(args));
        for (NodeId a : v.assignments) {
          if (t.Unparen(t.Child(a, Field::kRight)) == c.node)
            site.result = ModuleRef(t, t.Child(a, Field::kLeft));
        }
      } else if (c.method == "compile" && c.object != kNoNode) {
        site.module = ModuleRef(t, c.object);
        site.result = site.module;
        site.in_place = true;
      }
      if (!site.module.empty()) sites.push_back(site);
    }
    if (sites.empty()) return;
    // The module a hook goes on: `ref`, or the modules a loop over `model.modules()` visits.
    auto hooked = [&](NodeId object, uint32_t pos) -> absl::string_view {
      absl::string_view ref = ModuleRef(t, object);
      if (t.kind(t.Unparen(object)) == Kind::kIdentifier) {
        if (const Binding* b = v.At(ref, pos); b != nullptr && b->loop_var && b->value != kNoNode)
          ref = t.Text(t.Unparen(b->value));
      }
      return ref;
    };
    auto report = [&](const CallSite& c, absl::string_view form, absl::string_view ref,
                      absl::string_view method, const CompileSite& site) {
      RawFinding r = MakeFinding(f, v.function, c.node, form, c.in_loop, /*assumed=*/false);
      r.name = std::string(ref);
      r.base = std::string(site.module);
      r.op = std::string(method);
      r.producer = r.op;
      r.detail = absl::StrCat("`", site.module, "` was compiled at line ", site.line);
      out->push_back(std::move(r));
    };
    for (const CallSite& c : v.calls) {
      const uint32_t pos = t[c.node].start;
      if (c.object == kNoNode) continue;
      if (hook_methods.Matches(c.method)) {
        const absl::string_view ref = hooked(c.object, pos);
        for (const CompileSite& site : sites) {
          if (site.pos < pos && MissedHook(site, ref)) {
            report(c, "registered", ref, c.method, site);
            break;
          }
        }
        continue;
      }
      // `handle.remove()` after the compile, for a hook registered before it.
      if (c.method != "remove" || t.kind(t.Unparen(c.object)) != Kind::kIdentifier) continue;
      const Binding* b = v.At(t.Text(t.Unparen(c.object)), pos);
      const NodeId call = b == nullptr ? kNoNode : t.Unparen(b->value);
      if (call == kNoNode || t.kind(call) != Kind::kCall) continue;
      const NodeId fn = t.Child(call, Field::kFunction);
      if (fn == kNoNode || t.kind(fn) != Kind::kAttribute) continue;
      const absl::string_view method = t.Text(t.Child(fn, Field::kAttribute));
      if (!hook_methods.Matches(method)) continue;
      const absl::string_view ref = hooked(t.Child(fn, Field::kObject), t[call].start);
      for (const CompileSite& site : sites) {
        if (t[call].start < site.pos && site.pos < pos && MissedHook(site, ref)) {
          report(c, "removed", ref, absl::StrCat(method, "(...).remove"), site);
          break;
        }
      }
    }
  });
}

}  // namespace cl::lint

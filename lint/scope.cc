#include "lint/scope.h"

#include <deque>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lint/resolver.h"

namespace cl::lint {

bool IsCompileCallee(absl::string_view callee) { return callee == "torch.compile"; }

bool IsCompileDecorator(absl::string_view callee) {
  return callee == "torch.compile" || callee == "torch._dynamo.optimize" ||
         callee == "torch._dynamo.optimize_assert" ||
         callee == "torch.compiler.nested_compile_region";
}

bool IsExcludingDecorator(absl::string_view callee) {
  return callee == "torch.compiler.disable" || callee == "torch._dynamo.disable" ||
         callee == "torch.compiler.assume_constant_result" ||
         callee == "torch._dynamo.assume_constant_result" ||
         callee == "torch._dynamo.disallow_in_graph";
}

class RegionBuilder {
 public:
  RegionBuilder(const std::vector<const ModuleIndex*>& files, CompiledRegion& r)
      : files_(files), resolver_(files), r_(r) {}

  void Build(const std::vector<CompiledFrame>& frames) {
    r_.state_.resize(files_.size());
    r_.assumed_.assign(files_.size(), false);
    compile_sites_.assign(files_.size(), false);
    for (size_t f = 0; f < files_.size(); ++f) {
      r_.state_[f].assign(files_[f]->functions().size(), CompiledRegion::State::kOutside);
      const auto& fns = files_[f]->functions();
      for (size_t i = 0; i < fns.size(); ++i) {
        for (const std::string& d : fns[i].decorator_names) {
          if (IsExcludingDecorator(d)) r_.state_[f][i] = CompiledRegion::State::kExcluded;
        }
      }
    }
    children_.resize(files_.size());
    for (size_t f = 0; f < files_.size(); ++f) {
      const auto& fns = files_[f]->functions();
      children_[f].resize(fns.size());
      for (size_t i = 0; i < fns.size(); ++i) {
        if (fns[i].parent >= 0 && fns[i].cls < 0)
          children_[f][fns[i].parent].push_back(static_cast<int>(i));
      }
    }
    for (int f = 0; f < static_cast<int>(files_.size()); ++f) FindRoots(f, frames);
    Close();
    for (size_t f = 0; f < files_.size(); ++f) {
      bool any = compile_sites_[f];
      for (CompiledRegion::State s : r_.state_[f])
        any = any || s == CompiledRegion::State::kCompiled;
      r_.assumed_[f] = !any;
    }
  }

 private:
  void AddRoot(int file, int function, std::string why) {
    if (function < 0) return;
    CompiledRegion::State& s = r_.state_[file][function];
    if (s == CompiledRegion::State::kExcluded) return;
    for (RegionRoot& root : r_.roots_) {
      if (root.file == file && root.function == function) {
        // One root, every reason it is one ("compiled frame in the capture; torch.compile(model)
        // ...").
        if (root.why.find(why) == std::string::npos) absl::StrAppend(&root.why, "; ", why);
        return;
      }
    }
    r_.roots_.push_back({file, function, std::move(why)});
    Enqueue({file, function});
  }

  void Enqueue(FunctionRef f) {
    CompiledRegion::State& s = r_.state_[f.file][f.function];
    if (s != CompiledRegion::State::kOutside) return;
    s = CompiledRegion::State::kCompiled;
    queue_.push_back(f);
  }

  void FindRoots(int file, const std::vector<CompiledFrame>& frames) {
    const ModuleIndex& m = *files_[file];
    const SyntaxTree& t = m.tree();
    const auto& fns = m.functions();
    for (size_t i = 0; i < fns.size(); ++i) {
      for (const std::string& d : fns[i].decorator_names) {
        if (IsCompileDecorator(d)) {
          compile_sites_[file] = true;
          AddRoot(file, static_cast<int>(i), absl::StrCat("@", d));
        }
      }
    }
    for (const CompiledFrame& frame : frames) {
      if (frame.file != m.path()) continue;
      for (size_t i = 0; i < fns.size(); ++i) {
        if (fns[i].name == frame.name &&
            (fns[i].first_line == frame.line || t.line(fns[i].node) == frame.line)) {
          AddRoot(file, static_cast<int>(i), "compiled frame in the capture");
        }
      }
    }
    for (const FunctionView& view : m.views()) {
      for (const CallSite& call : view.calls) CompileCall(file, view, call);
    }
  }

  // torch.compile(target), torch._dynamo.optimize(...)(target), model.compile().
  void CompileCall(int file, const FunctionView& view, const CallSite& call) {
    const ModuleIndex& m = *files_[file];
    const SyntaxTree& t = m.tree();
    const NodeId fn = t.Child(call.node, Field::kFunction);
    bool compile = IsCompileCallee(call.callee);
    if (!compile && fn != kNoNode && t.kind(fn) == Kind::kCall) {
      const std::string inner = m.Callee(fn, &view);
      compile = inner == "torch._dynamo.optimize" || inner == "torch._dynamo.optimize_assert";
    }
    const uint32_t line = t.line(call.node);
    if (compile) {
      compile_sites_[file] = true;
      const NodeId target = CompileTarget(t, call.node);
      if (target == kNoNode) return;
      const std::string why = absl::StrCat(t.Snippet(call.node, 60), " at line ", line);
      for (FunctionRef f : Targets(file, view, target)) AddRoot(f.file, f.function, why);
      return;
    }
    if (call.method == "compile" && call.object != kNoNode &&
        t.kind(call.object) == Kind::kIdentifier && !m.IsImported(t.Text(call.object))) {
      const ClassRef k =
          resolver_.InstanceClass(file, view, t.Text(call.object), t[call.node].start);
      if (!k.ok()) return;
      compile_sites_[file] = true;
      const FunctionRef forward = resolver_.FindMethod(k, "forward");
      if (forward.ok())
        AddRoot(forward.file, forward.function,
                absl::StrCat(t.Snippet(call.node, 60), " at line ", line));
    }
  }

  static NodeId CompileTarget(const SyntaxTree& t, NodeId call) {
    const NodeId args = t.Child(call, Field::kArguments);
    if (args == kNoNode) return kNoNode;
    for (NodeId a : NamedChildren(t, args)) {
      if (t.kind(a) != Kind::kKeywordArgument) return t.Unparen(a);
      const NodeId name = t.Child(a, Field::kName);
      if (name != kNoNode && (t.Text(name) == "model" || t.Text(name) == "fn")) {
        return t.Unparen(t.Child(a, Field::kValue));
      }
    }
    return kNoNode;
  }

  // What a compile target names: a function, the forward of an instance's class, a method.
  std::vector<FunctionRef> Targets(int file, const FunctionView& view, NodeId target) {
    const ModuleIndex& m = *files_[file];
    const SyntaxTree& t = m.tree();
    std::vector<FunctionRef> out;
    const uint32_t pos = t[target].start;
    switch (t.kind(target)) {
      case Kind::kIdentifier: {
        const absl::string_view name = t.Text(target);
        CallSite as_call;
        as_call.node = target;
        as_call.callee = m.Canonical(target, &view, pos);
        if (view.function >= 0) {
          for (int scope = view.function; scope >= 0; scope = m.functions()[scope].parent) {
            if (const int nested = m.NestedFunction(scope, name); nested >= 0)
              return {{file, nested}};
          }
        }
        if (const ClassRef k = resolver_.InstanceClass(file, view, name, pos); k.ok()) {
          if (const FunctionRef f = resolver_.FindMethod(k, "forward"); f.ok()) out.push_back(f);
          return out;
        }
        if (const FunctionRef f = resolver_.ResolveFunction(file, as_call.callee); f.ok())
          out.push_back(f);
        return out;
      }
      case Kind::kCall: {
        // torch.compile(Model(...))
        if (const ClassRef k = resolver_.ResolveClass(file, m.Callee(target, &view)); k.ok()) {
          if (const FunctionRef f = resolver_.FindMethod(k, "forward"); f.ok()) out.push_back(f);
        }
        return out;
      }
      case Kind::kAttribute: {
        // torch.compile(model.forward), torch.compile(self.step)
        const NodeId object = t.Unparen(t.Child(target, Field::kObject));
        const NodeId attr = t.Child(target, Field::kAttribute);
        if (object == kNoNode || attr == kNoNode || t.kind(object) != Kind::kIdentifier) return out;
        ClassRef k;
        if (t.Text(object) == "self" && view.function >= 0) {
          k = resolver_.EnclosingClass(file, view.function);
        } else {
          k = resolver_.InstanceClass(file, view, t.Text(object), pos);
        }
        if (const FunctionRef f = resolver_.FindMethod(k, t.Text(attr)); f.ok()) out.push_back(f);
        return out;
      }
      default:
        return out;
    }
  }

  void Close() {
    std::vector<FunctionRef> targets;
    while (!queue_.empty()) {
      const FunctionRef f = queue_.front();
      queue_.pop_front();
      const ModuleIndex& m = *files_[f.file];
      // Functions defined inside a compiled one run compiled when called there.
      for (int nested : children_[f.file][f.function]) Enqueue({f.file, nested});
      const FunctionView& view = m.view_of(f.function);
      for (const CallSite& call : view.calls) {
        targets.clear();
        resolver_.CallTargets(f.file, f.function, view, call, &targets);
        for (FunctionRef t : targets) Enqueue(t);
      }
    }
  }

  const std::vector<const ModuleIndex*>& files_;
  Resolver resolver_;
  CompiledRegion& r_;
  std::vector<bool> compile_sites_;
  std::vector<std::vector<std::vector<int>>>
      children_;  // [file][function] → nested plain functions
  std::deque<FunctionRef> queue_;
};

CompiledRegion CompiledRegion::Compute(const std::vector<const ModuleIndex*>& files,
                                       const std::vector<CompiledFrame>& frames) {
  CompiledRegion region;
  RegionBuilder(files, region).Build(frames);
  return region;
}

bool CompiledRegion::InRegion(int file, int function) const {
  if (function < 0) return false;
  const State s = state_[file][function];
  return s == State::kCompiled || (assumed_[file] && s != State::kExcluded);
}

bool CompiledRegion::Excluded(int file, int function) const {
  return function >= 0 && state_[file][function] == State::kExcluded;
}

}  // namespace cl::lint

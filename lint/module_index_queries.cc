// ModuleIndex's queries: lookups, canonical names, view bases, tensor-ness.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lint/module_index.h"
#include "lint/torch_names.h"

namespace cl::lint {

int ModuleIndex::TopFunction(absl::string_view name) const {
  auto it = top_functions_.find(name);
  return it == top_functions_.end() ? -1 : it->second;
}

int ModuleIndex::TopClass(absl::string_view name) const {
  auto it = top_classes_.find(name);
  return it == top_classes_.end() ? -1 : it->second;
}

int ModuleIndex::AnyClass(absl::string_view name) const {
  if (const int top = TopClass(name); top >= 0) return top;
  for (size_t i = 0; i < classes_.size(); ++i) {
    if (classes_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int ModuleIndex::NestedFunction(int parent, absl::string_view name) const {
  auto it = nested_functions_.find(std::make_pair(parent, name));
  return it == nested_functions_.end() ? -1 : it->second;
}

const std::vector<NodeId>& ModuleIndex::ModuleAssignments(absl::string_view name) const {
  static const auto* const kNone = new std::vector<NodeId>;
  auto it = module_assignments_.find(name);
  return it == module_assignments_.end() ? *kNone : it->second;
}

const std::string* ModuleIndex::ImportOf(absl::string_view name) const {
  auto it = imports_.find(name);
  return it == imports_.end() ? nullptr : &it->second;
}

namespace {

// Appends the dotted form of an identifier/attribute chain; false for anything else.
bool AppendDotted(const SyntaxTree& t, NodeId n, std::string* out) {
  n = t.Unparen(n);
  if (n == kNoNode) return false;
  switch (t.kind(n)) {
    case Kind::kIdentifier:
      absl::StrAppend(out, t.Text(n));
      return true;
    case Kind::kAttribute: {
      const NodeId attr = t.Child(n, Field::kAttribute);
      if (attr == kNoNode || !AppendDotted(t, t.Child(n, Field::kObject), out)) return false;
      out->push_back('.');
      absl::StrAppend(out, t.Text(attr));
      return true;
    }
    case Kind::kCall: {
      // `super()` stands for the base class (super().forward).
      const NodeId fn = t.Child(n, Field::kFunction);
      if (fn != kNoNode && t.kind(fn) == Kind::kIdentifier && t.Text(fn) == "super") {
        out->append("super()");
        return true;
      }
      return false;
    }
    default:
      return false;
  }
}

}  // namespace

std::string ModuleIndex::Canonical(NodeId expr, const FunctionView* view, uint32_t pos) const {
  std::string out;
  if (!AppendDotted(tree_, expr, &out)) return "";
  const size_t dot = out.find('.');
  const absl::string_view head = absl::string_view(out).substr(0, dot);
  if (auto it = imports_.find(head); it != imports_.end()) {
    return dot == std::string::npos ? it->second : absl::StrCat(it->second, out.substr(dot));
  }
  if (dot == std::string::npos) return out;
  // `rng.shuffle` where `rng = random.Random(0)`: "random.Random().shuffle".
  if (view != nullptr) {
    if (const Binding* b = view->At(head, pos); b != nullptr) {
      const NodeId value = tree_.Unparen(b->value);
      if (value != kNoNode && tree_.kind(value) == Kind::kCall && tree_[value].start < pos) {
        const std::string ctor = Callee(value, view);
        if (IsStatefulConstructor(ctor)) return absl::StrCat(ctor, "()", out.substr(dot));
      }
      return out;
    }
  }
  if (auto it = instances_.find(head); it != instances_.end()) {
    return absl::StrCat(it->second, "()", out.substr(dot));
  }
  return out;
}

std::string ModuleIndex::Callee(NodeId call, const FunctionView* view) const {
  if (call == kNoNode || tree_.kind(call) != Kind::kCall) return "";
  return Canonical(tree_.Child(call, Field::kFunction), view, tree_[call].start);
}

NodeId ModuleIndex::ViewBase(NodeId expr, std::string* op, const FunctionView* view) const {
  NodeId n = tree_.Unparen(expr);
  bool overlap = false;
  auto record = [&](absl::string_view o) {
    if (overlap) return;
    *op = std::string(o);
    overlap = IsOverlapOp(o);
  };
  bool any = false;
  for (int hops = 0; n != kNoNode && hops < SyntaxTree::kMaxDepth; ++hops) {
    switch (tree_.kind(n)) {
      case Kind::kIdentifier:
        return any ? n : kNoNode;
      case Kind::kCall: {
        const NodeId fn = tree_.Child(n, Field::kFunction);
        if (fn == kNoNode) return kNoNode;
        if (tree_.kind(fn) == Kind::kAttribute) {
          const NodeId attr = tree_.Child(fn, Field::kAttribute);
          const absl::string_view m = attr == kNoNode ? "" : tree_.Text(attr);
          const std::string callee = Canonical(fn, view, tree_[n].start);
          if (absl::StartsWith(callee, "torch.") && callee.find('.', 6) == std::string::npos &&
              IsViewOp(m)) {
            // torch.transpose(b, 0, 1): the base is the first argument.
            const NodeId args = tree_.Child(n, Field::kArguments);
            record(m);
            any = true;
            n = args == kNoNode ? kNoNode : tree_.Unparen(tree_.NamedChild(args));
            continue;
          }
          if (!IsViewOp(m) || m == "[]" || m == "iter") return kNoNode;
          record(m);
          any = true;
          n = tree_.Unparen(tree_.Child(fn, Field::kObject));
          continue;
        }
        return kNoNode;
      }
      case Kind::kAttribute: {
        const NodeId attr = tree_.Child(n, Field::kAttribute);
        if (attr == kNoNode || !IsViewAttribute(tree_.Text(attr))) return kNoNode;
        record(tree_.Text(attr));
        any = true;
        n = tree_.Unparen(tree_.Child(n, Field::kObject));
        continue;
      }
      case Kind::kSubscript: {
        // Basic indexing (ints, slices, None, ...) views; a tensor or list index copies.
        for (NodeId s = tree_.first_child(n); s != kNoNode; s = tree_.next_sibling(s)) {
          if (tree_[s].field != Field::kSubscript) continue;
          const Kind k = tree_.kind(s);
          if (k != Kind::kSlice && k != Kind::kInteger && k != Kind::kNoneLiteral &&
              k != Kind::kEllipsis && k != Kind::kUnaryOperator && k != Kind::kIdentifier) {
            return kNoNode;
          }
          if (k == Kind::kIdentifier && view != nullptr) {
            if (const Binding* b = view->At(tree_.Text(s), tree_[s].start);
                b != nullptr && b->tensor) {
              return kNoNode;
            }
          }
        }
        record("[]");
        any = true;
        n = tree_.Unparen(tree_.Child(n, Field::kValue));
        continue;
      }
      default:
        return kNoNode;
    }
  }
  return kNoNode;
}

bool ModuleIndex::IsTensor(NodeId expr, const FunctionView& view, uint32_t pos) const {
  const NodeId n = tree_.Unparen(expr);
  if (n == kNoNode) return false;
  switch (tree_.kind(n)) {
    case Kind::kIdentifier: {
      const Binding* b = view.At(tree_.Text(n), pos);
      return b != nullptr && b->tensor;
    }
    case Kind::kCall: {
      const NodeId fn = tree_.Child(n, Field::kFunction);
      if (fn == kNoNode) return false;
      const std::string callee = Canonical(fn, &view, pos);
      if (absl::StartsWith(callee, "torch.")) return !IsNonTensorTorchCall(callee);
      if (tree_.kind(fn) != Kind::kAttribute) return false;
      const NodeId attr = tree_.Child(fn, Field::kAttribute);
      const NodeId object = tree_.Unparen(tree_.Child(fn, Field::kObject));
      if (attr == kNoNode || object == kNoNode) return false;
      const absl::string_view method = tree_.Text(attr);
      if (tree_.kind(object) == Kind::kIdentifier && tree_.Text(object) == "self") {
        // self.sub(x) calls a submodule (a tensor out); self.helper(x) a method (unknown).
        if (view.function < 0 || !uses_torch_) return false;
        for (int f = view.function; f >= 0; f = functions_[f].parent) {
          if (functions_[f].cls >= 0) return !classes_[functions_[f].cls].methods.contains(method);
        }
        return false;
      }
      return !IsNonTensorMember(method) && IsTensor(object, view, pos);
    }
    case Kind::kAttribute: {
      const NodeId attr = tree_.Child(n, Field::kAttribute);
      if (attr == kNoNode || IsNonTensorMember(tree_.Text(attr))) return false;
      return IsTensor(tree_.Child(n, Field::kObject), view, pos);
    }
    case Kind::kSubscript:
      return IsTensor(tree_.Child(n, Field::kValue), view, pos);
    case Kind::kBinaryOperator:
    case Kind::kBooleanOperator:
      return IsTensor(tree_.Child(n, Field::kLeft), view, pos) ||
             IsTensor(tree_.Child(n, Field::kRight), view, pos);
    case Kind::kUnaryOperator:
      return IsTensor(tree_.Child(n, Field::kArgument), view, pos);
    case Kind::kNotOperator:
      return IsTensor(tree_.Child(n, Field::kArgument), view, pos);
    case Kind::kComparisonOperator: {
      bool tensor = false;
      for (NodeId c = tree_.first_child(n); c != kNoNode; c = tree_.next_sibling(c)) {
        if (tree_.kind(c) == Kind::kToken) {
          const absl::string_view op = tree_.Text(c);
          if (op == "is" || op == "in" || op == "not" || absl::StartsWith(op, "is ") ||
              absl::StartsWith(op, "not ")) {
            return false;  // identity and membership give Python bools
          }
          continue;
        }
        tensor = tensor || IsTensor(c, view, pos);
      }
      return tensor;
    }
    case Kind::kConditionalExpression:
      return IsTensor(tree_.NamedChild(n, 0), view, pos) ||
             IsTensor(tree_.NamedChild(n, 2), view, pos);
    case Kind::kNamedExpression:
      return IsTensor(tree_.Child(n, Field::kValue), view, pos);
    default:
      return false;
  }
}

}  // namespace cl::lint

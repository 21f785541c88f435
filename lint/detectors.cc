#include "lint/detectors.h"

#include <algorithm>

namespace cl::lint {

DetectorFn DetectorFor(DetectorKind kind) {
  switch (kind) {
    case DetectorKind::kInplaceOnAlias:
      return DetectInplaceOnAlias;
    case DetectorKind::kSubscriptAssignOverlap:
      return DetectSubscriptAssignOverlap;
    case DetectorKind::kDataAttr:
      return DetectDataAttr;
    case DetectorKind::kStorageChangeOnView:
      return DetectStorageChangeOnView;
    case DetectorKind::kCustomOpMutation:
      return DetectCustomOpMutation;
    case DetectorKind::kDataDependentControl:
      return DetectDataDependentControl;
    case DetectorKind::kSideEffect:
      return DetectSideEffect;
    case DetectorKind::kCallInRegion:
      return DetectCallInRegion;
    case DetectorKind::kDecoratedInRegion:
      return DetectDecoratedInRegion;
    case DetectorKind::kGradMode:
      return DetectGradMode;
    case DetectorKind::kModuleAttr:
      return DetectModuleAttr;
    case DetectorKind::kGlobalRebind:
      return DetectGlobalRebind;
    case DetectorKind::kScalarArgs:
      return DetectScalarArgs;
    case DetectorKind::kHookAfterCompile:
      return DetectHookAfterCompile;
  }
  return nullptr;
}

RawFinding MakeFinding(int file, int function, NodeId node, absl::string_view form, bool in_loop,
                       bool assumed) {
  RawFinding f;
  f.file = file;
  f.function = function;
  f.node = node;
  f.form = std::string(form);
  f.in_loop = in_loop;
  f.assumed = assumed;
  return f;
}

RawFinding MakeOpFinding(int file, int function, NodeId node, absl::string_view form,
                         absl::string_view name, absl::string_view op, bool in_loop, bool assumed) {
  RawFinding f = MakeFinding(file, function, node, form, in_loop, assumed);
  f.name = std::string(name);
  f.op = std::string(op);
  f.producer = std::string(op);
  return f;
}

size_t FirstReadFrom(const FunctionView& view, uint32_t pos) {
  return static_cast<size_t>(std::lower_bound(view.reads.begin(), view.reads.end(), pos,
                                              [](const Read& r, uint32_t p) { return r.pos < p; }) -
                             view.reads.begin());
}

bool IsModuleName(const ModuleIndex& m, absl::string_view name) {
  return !m.ModuleAssignments(name).empty() || m.TopFunction(name) >= 0 || m.TopClass(name) >= 0;
}

bool IsLiteralValue(const SyntaxTree& t, NodeId n) {
  n = t.Unparen(n);
  if (n == kNoNode) return false;
  switch (t.kind(n)) {
    case Kind::kInteger:
    case Kind::kFloat:
    case Kind::kString:
    case Kind::kConcatenatedString:
    case Kind::kTrue:
    case Kind::kFalse:
    case Kind::kNoneLiteral:
      return true;
    case Kind::kUnaryOperator:
      return IsLiteralValue(t, t.Child(n, Field::kArgument));
    default:
      return false;
  }
}

bool InLoop(const SyntaxTree& t, NodeId node) {
  for (NodeId p = t.parent(node); p != kNoNode; p = t.parent(p)) {
    switch (t.kind(p)) {
      case Kind::kForStatement:
      case Kind::kWhileStatement:
      case Kind::kListComprehension:
      case Kind::kSetComprehension:
      case Kind::kDictionaryComprehension:
      case Kind::kGeneratorExpression:
        return true;
      case Kind::kFunctionDefinition:
      case Kind::kLambda:
      case Kind::kClassDefinition:
      case Kind::kModule:
        return false;
      default:
        break;
    }
  }
  return false;
}

}  // namespace cl::lint

// custom_op_mutation_undeclared: custom ops (torch.library.custom_op as a decorator or a call,
// torch.library.Library define/impl) whose body writes a parameter the op does not declare.
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lint/detectors.h"

namespace cl::lint {
namespace {

// The value of a plain string literal ('x', "x", r"x"); nullopt for anything else.
std::optional<absl::string_view> StringValue(const SyntaxTree& t, NodeId n) {
  n = t.Unparen(n);
  if (n == kNoNode || t.kind(n) != Kind::kString) return std::nullopt;
  absl::string_view s = t.Text(n);
  while (!s.empty() && absl::ascii_isalpha(static_cast<unsigned char>(s.front()))) {
    if (s.front() == 'f' || s.front() == 'F') return std::nullopt;
    s.remove_prefix(1);
  }
  for (absl::string_view q : {"\"\"\"", "'''", "\"", "'"}) {
    if (absl::ConsumePrefix(&s, q) && absl::ConsumeSuffix(&s, q)) return s;
  }
  return std::nullopt;
}

struct CustomOp {
  int function = -1;
  NodeId declared = kNoNode;
  bool unknown = false;
  absl::flat_hash_set<std::string> mutates;
};

// mutates_args=(…) / "unknown" on a torch.library.custom_op call.
void ReadMutatesArgs(const SyntaxTree& t, NodeId call, CustomOp& op) {
  const NodeId args = t.Child(call, Field::kArguments);
  if (args == kNoNode) return;
  for (NodeId a : NamedChildren(t, args)) {
    if (t.kind(a) != Kind::kKeywordArgument || t.Text(t.Child(a, Field::kName)) != "mutates_args")
      continue;
    const NodeId value = t.Unparen(t.Child(a, Field::kValue));
    if (const auto s = StringValue(t, value)) {
      if (*s == "unknown") {
        op.unknown = true;
      } else {
        op.mutates.emplace(*s);
      }
      return;
    }
    if (value == kNoNode) return;
    for (NodeId e : NamedChildren(t, value)) {
      if (const auto s = StringValue(t, e)) op.mutates.emplace(*s);
    }
  }
}

// "op(Tensor(a!) x, Tensor y) -> ()": the positions of the mutated arguments.
std::vector<int> MutatedPositions(absl::string_view schema) {
  std::vector<int> out;
  const size_t open = schema.find('(');
  const size_t close = schema.rfind(") ->");
  if (open == absl::string_view::npos || close == absl::string_view::npos || close < open)
    return out;
  int depth = 0;
  int index = 0;
  bool mutated = false;
  for (size_t i = open + 1; i < close; ++i) {
    const char c = schema[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == '!') mutated = true;
    if (c == ',' && depth == 0) {
      if (mutated) out.push_back(index);
      mutated = false;
      ++index;
    }
  }
  if (mutated) out.push_back(index);
  return out;
}

}  // namespace

// Custom ops whose body writes a parameter that mutates_args (or the Library schema) does not
// declare.
void DetectCustomOpMutation(const DetectInput& in, const PatternSpec& spec,
                            std::vector<RawFinding>* out) {
  for (int f = 0; f < static_cast<int>(in.files.size()); ++f) {
    const ModuleIndex& m = *in.files[f];
    const SyntaxTree& t = m.tree();
    std::vector<CustomOp> ops;
    const auto& fns = m.functions();
    for (size_t i = 0; i < fns.size(); ++i) {
      for (size_t d = 0; d < fns[i].decorator_names.size(); ++d) {
        if (fns[i].decorator_names[d] != "torch.library.custom_op") continue;
        CustomOp op;
        op.function = static_cast<int>(i);
        op.declared = fns[i].decorators[d];
        if (t.kind(op.declared) == Kind::kCall) ReadMutatesArgs(t, op.declared, op);
        ops.push_back(std::move(op));
      }
    }
    absl::flat_hash_map<std::string, std::vector<int>>
        schemas;  // Library.define: op name → mutated positions
    for (const FunctionView& v : m.views()) {
      for (const CallSite& c : v.calls) {
        const NodeId args = t.Child(c.node, Field::kArguments);
        if (args == kNoNode || t.kind(args) != Kind::kArgumentList) continue;
        std::vector<NodeId> positional;
        for (NodeId a : NamedChildren(t, args)) {
          if (t.kind(a) != Kind::kKeywordArgument) positional.push_back(t.Unparen(a));
        }
        auto function_named = [&](NodeId n) -> int {
          if (n == kNoNode || t.kind(n) != Kind::kIdentifier) return -1;
          for (int scope = v.function; scope >= 0; scope = fns[scope].parent) {
            if (const int nested = m.NestedFunction(scope, t.Text(n)); nested >= 0) return nested;
          }
          return m.TopFunction(t.Text(n));
        };
        if (c.callee == "torch.library.custom_op" && positional.size() >= 2) {
          CustomOp op;
          op.function = function_named(positional[1]);
          op.declared = c.node;
          ReadMutatesArgs(t, c.node, op);
          if (op.function >= 0) ops.push_back(std::move(op));
        }
        const NodeId fn = t.Child(c.node, Field::kFunction);
        if (fn != kNoNode && t.kind(fn) == Kind::kCall &&
            m.Callee(fn, &v) == "torch.library.custom_op" && !positional.empty()) {
          CustomOp op;
          op.function = function_named(positional[0]);
          op.declared = fn;
          ReadMutatesArgs(t, fn, op);
          if (op.function >= 0) ops.push_back(std::move(op));
        }
        if (c.method == "define" && !positional.empty()) {
          if (const auto schema = StringValue(t, positional[0])) {
            const absl::string_view name = schema->substr(0, schema->find('('));
            schemas[std::string(absl::StripAsciiWhitespace(name))] = MutatedPositions(*schema);
          }
        }
        if (c.method == "impl" && positional.size() >= 2) {
          const auto name = StringValue(t, positional[0]);
          const int target = function_named(positional[1]);
          if (!name || target < 0) continue;
          auto it = schemas.find(std::string(name->substr(
              name->rfind(':') == absl::string_view::npos ? 0 : name->rfind(':') + 1)));
          if (it == schemas.end()) it = schemas.find(std::string(*name));
          if (it == schemas.end()) continue;
          CustomOp op;
          op.function = target;
          op.declared = c.node;
          for (int pos : it->second) {
            if (pos < static_cast<int>(fns[target].params.size())) {
              op.mutates.emplace(fns[target].params[pos].name);
            }
          }
          ops.push_back(std::move(op));
        }
      }
    }
    for (const CustomOp& op : ops) {
      const FunctionInfo& fn = fns[op.function];
      const FunctionView& v = m.view_of(op.function);
      absl::flat_hash_set<absl::string_view> params;
      for (const Param& p : fn.params) params.insert(p.name);
      absl::flat_hash_set<absl::string_view> reported;
      for (const Mutation& mu : v.mutations) {
        if (!params.contains(mu.name) || reported.contains(mu.name)) continue;
        if (v.IndexAt(mu.name, mu.pos) < 0 || !v.bindings[v.IndexAt(mu.name, mu.pos)].param)
          continue;
        if (mu.form == Mutation::Form::kMethod && spec.params.exclude_methods.Matches(mu.op))
          continue;
        if (!op.unknown && op.mutates.contains(mu.name)) continue;
        reported.insert(mu.name);
        RawFinding r = MakeFinding(f, op.function, mu.node, op.unknown ? "unknown" : "undeclared",
                                   /*in_loop=*/false, /*assumed=*/false);
        r.name = std::string(mu.name);
        r.base = fn.qualname;
        r.op = std::string(mu.op);
        r.detail = op.unknown
                       ? "mutates_args=\"unknown\" makes every argument a possible write"
                       : absl::StrCat("`", mu.name, "` is not in mutates_args (declared at line ",
                                      t.line(op.declared), ")");
        r.in_loop = mu.in_loop;
        out->push_back(std::move(r));
        if (op.unknown) break;
      }
    }
  }
}

}  // namespace cl::lint

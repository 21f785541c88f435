#include "capture/torch_trace/fx_expression.h"

#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cl::fx {
namespace {

// Identifiers joined by single dots (`torch.ops.aten.mm.default`).
bool IsDottedName(absl::string_view s) {
  bool part_start = true;  // at the start of a part: a letter or '_' must follow
  for (const char c : s) {
    if (c == '.') {
      if (part_start) return false;
      part_start = true;
    } else if (absl::ascii_isalpha(c) || c == '_' || (!part_start && absl::ascii_isdigit(c))) {
      part_start = false;
    } else {
      return false;
    }
  }
  return !part_start;
}

// FX prints these `operator` functions as Python operators (torch/fx/graph.py magic_methods);
// the node's target is `operator.<name>`.
absl::string_view BinaryOperatorName(absl::string_view op) {
  static const auto* const kNames = new absl::flat_hash_map<absl::string_view, absl::string_view>{
      {"+", "add"}, {"-", "sub"},  {"*", "mul"},     {"/", "truediv"}, {"//", "floordiv"},
      {"%", "mod"}, {"**", "pow"}, {"<<", "lshift"}, {">>", "rshift"}, {"&", "and_"},
      {"|", "or_"}, {"^", "xor"},  {"@", "matmul"},  {"==", "eq"},     {"!=", "ne"},
      {"<", "lt"},  {">", "gt"},   {"<=", "le"},     {">=", "ge"}};
  auto it = kNames->find(op);
  return it == kNames->end() ? absl::string_view() : it->second;
}

// A module path the way FX prints one: `self.fc1.weight`, or `getattr(self.layers, "0").weight`
// for parts that are not identifiers. "" for `self` itself; nullopt for anything else. Iterative:
// the getattr( prefixes are counted, then the path is read left to right.
std::optional<std::string> ParseSelfPath(absl::string_view e) {
  int open = 0;
  while (absl::ConsumePrefix(&e, "getattr(")) ++open;
  if (!absl::ConsumePrefix(&e, "self")) return std::nullopt;
  std::string path;
  while (!e.empty()) {
    absl::string_view part;
    if (absl::ConsumePrefix(&e, ".")) {
      size_t n = 0;
      while (n < e.size() && (absl::ascii_isalnum(e[n]) || e[n] == '_')) ++n;
      part = e.substr(0, n);
      e.remove_prefix(n);
      if (!IsIdentifier(part)) return std::nullopt;
    } else if (open > 0 && absl::ConsumePrefix(&e, ",")) {
      e = absl::StripLeadingAsciiWhitespace(e);
      if (e.empty() || (e[0] != '"' && e[0] != '\'')) return std::nullopt;
      const size_t end = e.find(e[0], 1);
      if (end == kNpos || end + 1 >= e.size() || e[end + 1] != ')') return std::nullopt;
      part = e.substr(1, end - 1);
      e.remove_prefix(end + 2);
      --open;
    } else {
      return std::nullopt;
    }
    if (!path.empty()) path.push_back('.');
    absl::StrAppend(&path, part);
  }
  if (open != 0) return std::nullopt;
  return path;
}

}  // namespace

// torch/fx/graph.py inplace_methods.
absl::string_view InplaceOperatorName(absl::string_view op) {
  static const auto* const kNames = new absl::flat_hash_map<absl::string_view, absl::string_view>{
      {"+=", "iadd"}, {"-=", "isub"},  {"*=", "imul"},     {"/=", "itruediv"}, {"//=", "ifloordiv"},
      {"%=", "imod"}, {"**=", "ipow"}, {"<<=", "ilshift"}, {">>=", "irshift"}, {"&=", "iand"},
      {"|=", "ior"},  {"^=", "ixor"},  {"@=", "imatmul"}};
  auto it = kNames->find(op);
  return it == kNames->end() ? absl::string_view() : it->second;
}

bool ExpressionReader::ReadExpression(absl::string_view rhs, v1::Node* node) {
  absl::string_view token;
  if (const size_t at = FindSpacedOperator(index_, rhs, &token); at != kNpos) {
    const absl::string_view name = BinaryOperatorName(token);
    if (name.empty()) return false;
    SetCall(node, "call_function", absl::StrCat("operator.", name));
    node->mutable_args()->Reserve(2);
    ReadValue(rhs.substr(0, at), 0, node->add_args());
    ReadValue(rhs.substr(at + token.size() + 2), 0, node->add_args());
    return true;
  }
  if (const size_t open = TrailingGroup(index_, rhs, '('); open != kNpos) {
    const absl::string_view callee = Strip(rhs.substr(0, open));
    const absl::string_view args = rhs.substr(open + 1, rhs.size() - open - 2);
    if (std::optional<std::string> path = ParseSelfPath(callee); path && !path->empty()) {
      SetCall(node, "call_module", *path);
    } else if (!IsDottedName(callee)) {
      return false;
    } else if (const size_t dot = callee.find('.'); dot != kNpos && dot == callee.rfind('.') &&
                                                    defined_.contains(callee.substr(0, dot))) {
      SetCall(node, "call_method", callee.substr(dot + 1));
      Assign(node->add_args()->mutable_node(), callee.substr(0, dot));
    } else {
      SetCall(node, "call_function", absl::StripPrefix(callee, "torch.ops."));
    }
    ReadCallArgs(args, node);
    return true;
  }
  if (const size_t open = TrailingGroup(index_, rhs, '['); open != kNpos) {
    if (!IsIdentifier(Strip(rhs.substr(0, open)))) return false;
    SetCall(node, "call_function", "operator.getitem");
    node->mutable_args()->Reserve(2);
    ReadValue(rhs.substr(0, open), 0, node->add_args());
    ReadValue(rhs.substr(open + 1, rhs.size() - open - 2), 0, node->add_args());
    return true;
  }
  if (!rhs.empty() && absl::StrContains("-+~", rhs[0]) && IsIdentifier(Strip(rhs.substr(1)))) {
    SetCall(node, "call_function",
            rhs[0] == '-'   ? "operator.neg"
            : rhs[0] == '+' ? "operator.pos"
                            : "operator.invert");
    ReadValue(rhs.substr(1), 0, node->add_args());
    return true;
  }
  if (std::optional<std::string> path = ParseSelfPath(rhs); path && !path->empty()) {
    SetCall(node, "get_attr", *path);
    return true;
  }
  // `getattr(x, 'shape')` with an identifier attribute prints as `x.shape`.
  if (const size_t dot = rhs.find('.'); dot != kNpos && dot == rhs.rfind('.') &&
                                        defined_.contains(rhs.substr(0, dot)) &&
                                        IsIdentifier(rhs.substr(dot + 1))) {
    SetCall(node, "call_function", "getattr");
    Assign(node->add_args()->mutable_node(), rhs.substr(0, dot));
    node->add_args()->set_literal(absl::StrCat("'", rhs.substr(dot + 1), "'"));
    return true;
  }
  return false;
}

// `a, [b, 2], key = 'mean'`: positional values and `key = value` keywords (FX spaces them;
// `key=value` is read too).
void ExpressionReader::ReadCallArgs(absl::string_view text, v1::Node* node) {
  std::vector<absl::string_view>& items = call_items_;
  SplitTopLevel(index_, text, ',', &items);
  if (Strip(items.back()).empty()) items.pop_back();  // `f()` or a trailing comma
  node->mutable_args()->Reserve(node->args_size() + static_cast<int>(items.size()));
  for (absl::string_view item : items) {
    if (const size_t eq = FindAssign(index_, item);
        eq != kNpos && IsIdentifier(Strip(item.substr(0, eq)))) {
      ReadValue(item.substr(eq + 1), 0,
                &(*node->mutable_kwargs())[std::string(Strip(item.substr(0, eq)))]);
    } else {
      ReadValue(item, 0, node->add_args());
    }
  }
}

void ExpressionReader::ReadValue(absl::string_view v, int depth, v1::Arg* out) {
  v = Strip(v);
  if (!v.empty() && (v[0] == '[' || v[0] == '(') && depth < kMaxArgNesting &&
      index_.MatchingClose(v, 0) == v.size() - 1) {
    // Each depth has its own scratch list: the items of the outer lists stay while inner ones
    // are read.
    std::vector<absl::string_view>& items = list_items_[depth];
    SplitTopLevel(index_, v.substr(1, v.size() - 2), ',', &items);
    const bool trailing_comma = items.size() > 1 && Strip(items.back()).empty();
    if (Strip(items.back()).empty()) items.pop_back();
    if (v[0] == '(' && items.size() == 1 && !trailing_comma) {
      ReadValue(items[0], depth + 1, out);  // parentheses around one value, not a tuple
      return;
    }
    v1::ArgList* list = out->mutable_list();
    list->set_tuple(v[0] == '(');
    list->mutable_items()->Reserve(static_cast<int>(items.size()));
    for (absl::string_view item : items) ReadValue(item, depth + 1, list->add_items());
    return;
  }
  if (IsIdentifier(v) && defined_.contains(v)) {
    Assign(out->mutable_node(), v);
  } else {
    Assign(out->mutable_literal(), v);
  }
}

}  // namespace cl::fx

#include "capture/torch_trace/fx_graph.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "capture/torch_trace/fx_expression.h"
#include "capture/torch_trace/fx_lines.h"
#include "capture/torch_trace/fx_meta.h"
#include "capture/torch_trace/fx_scan.h"
#include "capture/torch_trace/fx_text.h"
#include "common/utf8.h"

namespace cl {
namespace fx {
namespace {

// Problem messages quote at most this many bytes of the offending text.
constexpr size_t kExcerptBytes = 80;
// A source comment's file, function and code are each kept to this many bytes.
constexpr size_t kMaxSourceBytes = 1024;

// Almost all FX text is ASCII; checking that eight bytes at a time spares the full UTF-8 decoder.
bool IsAscii(absl::string_view s) {
  uint64_t high = 0;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    high |= word;
  }
  for (; i < s.size(); ++i) high |= static_cast<unsigned char>(s[i]);
  return (high & 0x8080808080808080ULL) == 0;
}

// `class GraphModule(torch.nn.Module):`, and the nested classes of subgraphs.
bool IsClassLine(absl::string_view s) {
  return absl::StartsWith(s, "class ") && absl::EndsWith(s, ":");
}

// What a line before the forward is to a GraphModule's outline: the parser and the scan
// (ScanFxSourceFiles) take the same ones.
enum class PreambleLine {
  kSkip,     // a comment; inside the class, the torch.fx.wrap registrations FX prints
  kClass,    // the one class line
  kForward,  // `def ...`: the forward begins
  kForeign,  // anything else: not an FX GraphModule
};
PreambleLine ReadPreambleLine(absl::string_view text, bool comment, bool in_class) {
  if (comment) return PreambleLine::kSkip;
  if (absl::StartsWith(text, "def ")) return PreambleLine::kForward;
  if (!in_class && IsClassLine(text)) return PreambleLine::kClass;
  if (in_class && absl::StrContains(text, "wrap(")) return PreambleLine::kSkip;
  return PreambleLine::kForeign;
}

// ---- Source comments ----------------------------------------------------------------------

// At most kMaxSourceBytes of valid UTF-8 `s` (and the ellipsis when cut). Every node after a
// source comment gets a copy, so an uncapped comment would multiply the input's size.
std::string CapSourceField(absl::string_view s) { return ClipUtf8(s, kMaxSourceBytes); }

// `File: /path/x.py:69 in forward, code: h = self.up(x)` (FX's stack-trace summary). With
// `detail` kAnalysis, the file and line only.
void ParseFileComment(absl::string_view s, v1::SourceLoc* loc, FxDetail detail = FxDetail::kFull) {
  s = Strip(s);
  if (const size_t code = s.find(", code: "); code != kNpos) {
    if (detail == FxDetail::kFull) loc->set_code(CapSourceField(s.substr(code + 8)));
    s = s.substr(0, code);
  }
  // The last ":<digits> in " separates the file from the function; paths may hold " in ".
  for (size_t in = s.rfind(" in "); in != kNpos && in > 0; in = s.rfind(" in ", in - 1)) {
    const size_t colon = s.rfind(':', in);
    uint32_t line = 0;
    if (colon == kNpos || !absl::SimpleAtoi(s.substr(colon + 1, in - colon - 1), &line)) continue;
    loc->set_file(CapSourceField(s.substr(0, colon)));
    loc->set_line(line);
    if (detail == FxDetail::kFull) loc->set_fn(CapSourceField(s.substr(in + 4)));
    return;
  }
  loc->set_file(CapSourceField(s));
}

// ---- The reader ---------------------------------------------------------------------------

struct Param {
  std::string name;    // the node name: `args` for `*args`
  std::string target;  // as written in the signature
  v1::TensorMeta meta;
};

// One pass over the text: a small state machine over logical lines (before the class, inside it,
// inside the top-level forward, after its return), appending nodes to the graph as it goes.
//
// Nodes are built in place at the end of the graph and removed again when the statement turns out
// unreadable; the names of the nodes defined so far are looked up through views of the nodes' own
// name strings, which stay put while the graph grows.
class FxGraphReader {
 public:
  FxGraphReader(v1::Graph* graph, FxParseResult* result, FxDetail detail)
      : graph_(graph),
        result_(result),
        first_node_(graph->nodes_size()),
        detail_(detail),
        layout_(detail == FxDetail::kFull) {
    defined_.reserve(graph_->nodes_size());
    for (int i = 0; i < graph_->nodes_size(); ++i) defined_.emplace(graph_->nodes(i).name(), i);
  }

  void Run(absl::string_view text) {
    LineReader reader(text, &index_);
    Line line;
    while (reader.Next(&line)) OnLine(line);
    if (state_ == State::kPreamble || state_ == State::kClass) {
      Problem(0, "no `def forward` found", "");
    } else if (state_ == State::kForward) {
      Materialize();
      Problem(0, "the forward ends without a return statement (cut-off text?)", "");
    }
  }

 private:
  enum class State { kPreamble, kClass, kForward, kAfterForward };

  void OnLine(const Line& line) {
    if (!IsAscii(line.text) && !IsValidUtf8(line.text)) {
      Problem(line.number, "not UTF-8 text", line.text);
      return;
    }
    switch (state_) {
      case State::kPreamble:
      case State::kClass:
        switch (ReadPreambleLine(line.text, line.comment, state_ == State::kClass)) {
          case PreambleLine::kSkip:
            return;
          case PreambleLine::kForward:
            StartForward(line);
            return;
          case PreambleLine::kClass:
            class_indent_ = static_cast<int64_t>(line.indent);
            state_ = State::kClass;
            return;
          case PreambleLine::kForeign:
            Problem(line.number, "not part of an FX GraphModule", line.text);
            return;
        }
        return;
      case State::kForward:
        if (line.comment) {
          OnComment(line.text);
        } else if (static_cast<int64_t>(line.indent) <= def_indent_) {
          Materialize();
          Problem(line.number, "the forward ends without a return statement", line.text);
          state_ = State::kAfterForward;
          OnAfterForward(line);
        } else if (line.text == "return" || absl::StartsWith(line.text, "return ") ||
                   absl::StartsWith(line.text, "return(") ||
                   absl::StartsWith(line.text, "return[")) {
          OnReturn(line);
        } else {
          OnStatement(line);
        }
        return;
      case State::kAfterForward:
        OnAfterForward(line);
        return;
    }
  }

  // After the forward: nested classes (subgraphs) are counted and their bodies skipped.
  void OnAfterForward(const Line& line) {
    if (line.comment) return;
    const auto indent = static_cast<int64_t>(line.indent);
    if (IsClassLine(line.text)) {
      ++result_->nested_classes;
      if (!in_nested_ || indent <= nested_indent_) {
        if (indent <= class_indent_) {
          Problem(line.number, "a second top-level class (ignored)", line.text);
        }
        in_nested_ = true;
        nested_indent_ = indent;
      }
      return;
    }
    if (in_nested_ && indent > nested_indent_) return;
    Problem(line.number, "after the forward's return", line.text);
  }

  // `def forward(self, a: "f32[4][1]cpu", b, *args):`; the placeholders are made on the first
  // statement of the body, which may replace them with a pytree flattening.
  void StartForward(const Line& line) {
    const StatementIndex& scan = index_;
    if (!line.indexed) index_.Reset(line.text);
    state_ = State::kForward;
    def_line_ = line.number;
    def_indent_ = static_cast<int64_t>(line.indent);
    const absl::string_view text = line.text;
    const size_t open = text.find('(');
    const size_t close = open == kNpos ? kNpos : scan.MatchingClose(text, open);
    if (close == kNpos) {
      Problem(line.number, "a `def` without a readable signature", text);
      return;
    }
    bool first = true;
    std::vector<absl::string_view> params;
    SplitTopLevel(scan, text.substr(open + 1, close - open - 1), ',', &params);
    for (absl::string_view p : params) {
      p = Strip(p);
      if (p.empty() || p == "*" || p == "/") continue;
      if (std::exchange(first, false) && p == "self") continue;
      if (const size_t eq = FindAssign(scan, p); eq != kNpos)
        p = Strip(p.substr(0, eq));  // a default
      Param param;
      absl::string_view ann;
      if (const size_t colon = FindTopLevel(scan, p, ':'); colon != kNpos) {
        ann = Strip(p.substr(colon + 1));
        p = Strip(p.substr(0, colon));
      }
      absl::string_view name = p;
      while (absl::ConsumePrefix(&name, "*")) {
      }
      if (!IsIdentifier(name)) {
        Problem(line.number, "a parameter that is not a name", p);
        continue;
      }
      param.name = std::string(name);
      param.target = std::string(p);
      if (IsQuoted(ann) &&
          !ParseMeta(ann.substr(1, ann.size() - 2), &param.meta, &dims_, layout_)) {
        Problem(line.number, "an unreadable annotation", ann);
        param.meta.Clear();
      }
      params_.push_back(std::move(param));
    }
  }

  // A source comment is parsed once; each node after it gets a copy.
  void OnComment(absl::string_view text) {
    absl::string_view body = Strip(text.substr(1));
    if (absl::ConsumePrefix(&body, "File:")) {
      source_.emplace();
      ParseFileComment(body, &*source_, detail_);
    } else if (absl::StartsWith(body, "No stacktrace found")) {
      source_.emplace();
      source_->set_no_stacktrace(true);
    }
    // Other comments (`# graph id: ...`, annotations of pytree inputs) carry nothing we keep.
  }

  void OnStatement(const Line& line) {
    if (line.unbalanced) {
      Problem(line.number, "unbalanced brackets", line.text);
      return;
    }
    if (!line.indexed) index_.Reset(line.text);
    std::vector<absl::string_view>& parts = parts_;
    SplitTopLevel(index_, line.text, ';', &parts);
    size_t kept = 0;  // the non-empty parts, stripped, in place
    for (absl::string_view p : parts) {
      if (p = Strip(p); !p.empty()) parts[kept++] = p;
    }
    parts.resize(kept);
    if (parts.empty()) return;
    if (OnAnnotations(line, parts)) return;
    const absl::string_view stmt = parts[0];
    const size_t eq = FindAssign(index_, stmt);
    if (!materialized_) {
      if (eq != kNpos &&
          absl::StartsWith(Strip(stmt.substr(eq + 1)), "fx_pytree.tree_flatten_spec(")) {
        MaterializePytree(line, Strip(stmt.substr(0, eq)));
        return;
      }
      Materialize();
    }
    // FX spaces operators, so the first spaced one of `a += b` is `+=` and of `x = f(a)` is `=`.
    if (absl::string_view token;
        FindSpacedOperator(index_, stmt, &token) != kNpos && !InplaceOperatorName(token).empty()) {
      OnInplace(line, parts);
      return;
    }
    if (eq == kNpos) {
      Problem(line.number, "not an FX node statement", line.text);
      return;
    }
    absl::string_view lhs = Strip(stmt.substr(0, eq));
    const absl::string_view rhs = Strip(stmt.substr(eq + 1));
    if (const size_t index = TrailingGroup(index_, lhs, '['); index != kNpos) {
      OnSetitem(line, parts, lhs, index, rhs);
      return;
    }
    absl::string_view ann;
    if (const size_t colon = FindTopLevel(index_, lhs, ':'); colon != kNpos) {
      ann = Strip(lhs.substr(colon + 1));
      lhs = Strip(lhs.substr(0, colon));
    }
    if (!IsIdentifier(lhs)) {
      Problem(line.number, "not an FX node statement", line.text);
      return;
    }
    if (ann.empty() && RenamePlaceholder(lhs, rhs)) return;
    v1::Node* node = graph_->add_nodes();
    if (!expressions_.ReadExpression(rhs, node)) {
      graph_->mutable_nodes()->RemoveLast();
      Problem(line.number, "an expression FX does not print", line.text);
      return;
    }
    if (IsQuoted(ann) &&
        !ParseMeta(ann.substr(1, ann.size() - 2), node->mutable_meta(), &dims_, layout_)) {
      Problem(line.number, "an unreadable annotation", ann);
      node->clear_meta();
    }
    Append(line.number, lhs, /*with_source=*/true);
  }

  // `primals_1: "f32[4][1]cpu"; primals_2: "f32[4][1]cpu"; ` (or one per line): the annotations
  // of the inputs a pytree forward flattens next.
  bool OnAnnotations(const Line& line, const std::vector<absl::string_view>& parts) {
    for (absl::string_view p : parts) {
      const size_t colon = FindTopLevel(index_, p, ':');
      if (FindAssign(index_, p) != kNpos || colon == kNpos ||
          !IsIdentifier(Strip(p.substr(0, colon))) || !IsQuoted(Strip(p.substr(colon + 1)))) {
        return false;
      }
    }
    if (materialized_) {
      Problem(line.number, "an annotation after the inputs", line.text);
      return true;
    }
    for (absl::string_view p : parts) {
      const size_t colon = FindTopLevel(index_, p, ':');
      const absl::string_view ann = Strip(p.substr(colon + 1));
      v1::TensorMeta& meta = pending_meta_[Strip(p.substr(0, colon))];
      if (!ParseMeta(ann.substr(1, ann.size() - 2), &meta, &dims_, layout_)) {
        Problem(line.number, "an unreadable annotation", ann);
        meta.Clear();
      }
    }
    return true;
  }

  // `primals_1, primals_2, = fx_pytree.tree_flatten_spec([primals], self._in_spec)`: the real
  // placeholders, in place of the signature's.
  void MaterializePytree(const Line& line, absl::string_view names) {
    materialized_ = true;
    std::vector<absl::string_view> split;
    SplitTopLevel(index_, names, ',', &split);
    for (absl::string_view name : split) {
      name = Strip(name);
      if (name.empty()) continue;
      if (!IsIdentifier(name)) {
        Problem(line.number, "a flattened input that is not a name", name);
        continue;
      }
      v1::Node* node = graph_->add_nodes();
      node->set_op("placeholder");
      Assign(node->mutable_target(), name);
      if (auto it = pending_meta_.find(name); it != pending_meta_.end()) {
        // Moved: the flattening happens once, and a name repeated in it is dropped as a duplicate.
        *node->mutable_meta() = std::move(it->second);
      }
      Append(line.number, name, /*with_source=*/false);
    }
  }

  void Materialize() {
    if (std::exchange(materialized_, true)) return;
    for (Param& p : params_) {
      v1::Node* node = graph_->add_nodes();
      node->set_op("placeholder");
      node->set_target(p.target);
      *node->mutable_meta() = std::move(p.meta);
      Append(def_line_, p.name, /*with_source=*/false);
    }
  }

  // `l_x_ = L_x_`: dynamo names a placeholder `l_x_` whose target (the parameter) is `L_x_`. FX
  // prints these right after the signature; later, a rename would leave earlier uses dangling.
  bool RenamePlaceholder(absl::string_view name, absl::string_view rhs) {
    if (!only_placeholders_) return false;
    auto it = defined_.find(rhs);
    if (it == defined_.end() || it->second < first_node_ || defined_.contains(name)) return false;
    v1::Node* node = graph_->mutable_nodes(it->second);
    if (node->op() != "placeholder" || node->name() != node->target()) return false;
    const int index = it->second;
    defined_.erase(it);  // before the name its key views changes
    Assign(node->mutable_name(), name);
    defined_.emplace(node->name(), index);
    return true;
  }

  // `a += b;  iadd = a`: FX prints in-place operators (dynamo emits them) as a statement and then
  // names the node after it.
  void OnInplace(const Line& line, const std::vector<absl::string_view>& parts) {
    absl::string_view token;
    const size_t at = FindSpacedOperator(index_, parts[0], &token);
    v1::Node* node = graph_->add_nodes();
    SetCall(node, "call_function", absl::StrCat("operator.", InplaceOperatorName(token)));
    expressions_.ReadValue(parts[0].substr(0, at), 0, node->add_args());
    expressions_.ReadValue(parts[0].substr(at + token.size() + 2), 0, node->add_args());
    NameAfter(line, parts, node);
  }

  // `a[i] = v;  setitem = a`.
  void OnSetitem(const Line& line, const std::vector<absl::string_view>& parts,
                 absl::string_view lhs, size_t index, absl::string_view rhs) {
    v1::Node* node = graph_->add_nodes();
    SetCall(node, "call_function", "operator.setitem");
    expressions_.ReadValue(lhs.substr(0, index), 0, node->add_args());
    expressions_.ReadValue(lhs.substr(index + 1, lhs.size() - index - 2), 0, node->add_args());
    expressions_.ReadValue(rhs, 0, node->add_args());
    NameAfter(line, parts, node);
  }

  // Names `node`, the graph's last, after the statement that follows it; drops it without one.
  void NameAfter(const Line& line, const std::vector<absl::string_view>& parts, v1::Node* node) {
    const size_t eq = parts.size() > 1 ? FindAssign(index_, parts[1]) : kNpos;
    absl::string_view name = eq == kNpos ? absl::string_view() : Strip(parts[1].substr(0, eq));
    absl::string_view ann;
    if (const size_t colon = FindTopLevel(index_, name, ':'); colon != kNpos) {
      ann = Strip(name.substr(colon + 1));
      name = Strip(name.substr(0, colon));
    }
    if (!IsIdentifier(name)) {
      graph_->mutable_nodes()->RemoveLast();
      Problem(line.number, "an in-place statement without its node name", line.text);
      return;
    }
    if (IsQuoted(ann) &&
        !ParseMeta(ann.substr(1, ann.size() - 2), node->mutable_meta(), &dims_, layout_)) {
      Problem(line.number, "an unreadable annotation", ann);
      node->clear_meta();
    }
    Append(line.number, name, /*with_source=*/true);
  }

  // `return (a, b)`, `return [a]`, `return a`, `return pytree.tree_unflatten([a, b],
  // self._out_spec)`.
  void OnReturn(const Line& line) {
    state_ = State::kAfterForward;
    Materialize();
    if (line.unbalanced) {
      Problem(line.number, "unbalanced brackets", line.text);
      return;
    }
    if (!line.indexed) index_.Reset(line.text);
    absl::string_view value = Strip(line.text.substr(6));
    if (absl::StartsWith(value, "pytree.tree_unflatten(")) {
      const size_t open = value.find('(');
      if (index_.MatchingClose(value, open) == value.size() - 1) {
        const absl::string_view args = value.substr(open + 1, value.size() - open - 2);
        value = args.substr(0, FindTopLevel(index_, args, ','));  // the first argument
      }
    }
    v1::Node* node = graph_->add_nodes();
    node->set_op("output");
    node->set_target("output");
    if (!Strip(value).empty()) {
      v1::Arg returned;
      expressions_.ReadValue(value, 0, &returned);
      if (returned.has_list()) {
        node->mutable_args()->Swap(returned.mutable_list()->mutable_items());
      } else {
        *node->add_args() = std::move(returned);
      }
    }
    std::string name = "output";
    for (int i = 1; defined_.contains(name); ++i) name = absl::StrCat("output_", i);
    Append(line.number, name, /*with_source=*/false);
  }

  // Names the graph's last node (just built) `name`, or drops it when the name is taken.
  void Append(size_t line, absl::string_view name, bool with_source) {
    const int index = graph_->nodes_size() - 1;
    v1::Node* node = graph_->mutable_nodes(index);
    Assign(node->mutable_name(), name);
    if (!defined_.try_emplace(node->name(), index).second) {
      graph_->mutable_nodes()->RemoveLast();
      Problem(line, "a node name defined twice (the second is dropped)", name);
      return;
    }
    if (node->op() != "placeholder") only_placeholders_ = false;
    if (with_source && source_) *node->mutable_source() = *source_;
    ++result_->nodes;
  }

  void Problem(size_t line, absl::string_view what, absl::string_view text) {
    ++result_->skipped_lines;
    if (result_->problems.size() >= kMaxFxProblems) return;
    std::string message = line == 0 ? std::string(what) : absl::StrCat("line ", line, ": ", what);
    if (!text.empty()) {
      absl::StrAppend(&message, ": ", EscapedExcerpt(text, kExcerptBytes));
    }
    result_->problems.push_back(std::move(message));
  }

  v1::Graph* graph_;
  FxParseResult* result_;
  const int first_node_;  // the graph's first node from this text
  const FxDetail detail_;
  const bool layout_;              // keep each meta's stride, device and SymInt expression
  bool only_placeholders_ = true;  // no other node appended yet
  State state_ = State::kPreamble;
  int64_t class_indent_ = -1;  // -1: a bare `def forward` without a class
  int64_t def_indent_ = 0;
  size_t def_line_ = 0;
  bool in_nested_ = false;
  int64_t nested_indent_ = 0;
  std::vector<Param> params_;
  bool materialized_ = false;  // the placeholders have been appended
  absl::flat_hash_map<std::string, v1::TensorMeta> pending_meta_;
  // Node name -> index in graph_->nodes; the keys view the nodes' names.
  DefinedNames defined_;
  std::optional<v1::SourceLoc> source_;  // of the nodes that follow
  // The statement being read, and scratch lists reused from one statement to the next.
  StatementIndex index_;
  ExpressionReader expressions_{&index_, &defined_};
  std::vector<absl::string_view> parts_;
  std::vector<absl::string_view> dims_;
};

}  // namespace
}  // namespace fx

void ClearBeyondAnalysisDetail(v1::Graph* graph) {
  for (v1::Node& n : *graph->mutable_nodes()) {
    if (n.has_meta()) {
      v1::TensorMeta* meta = n.mutable_meta();
      meta->clear_stride();
      meta->clear_device();
      meta->clear_sym_expr();
    }
    if (n.has_source()) {
      n.mutable_source()->clear_fn();
      n.mutable_source()->clear_code();
    }
  }
}

FxParseResult ParseFxGraphText(absl::string_view text, v1::Graph* graph, FxDetail detail) {
  FxParseResult result;
  fx::FxGraphReader(graph, &result, detail).Run(text);
  return result;
}

// Physical lines, as LineReader sees them: the forward starts at the first `def` line and ends at
// its `return`; a line indented no deeper than the `def` before that, which does not close a
// bracket, is a forward cut short. A comment is a line whose text starts with '#'.
bool ScanFxSourceFiles(absl::string_view text, absl::flat_hash_set<std::string>* files) {
  std::vector<std::string> found;
  bool in_forward = false, in_class = false;
  size_t def_indent = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    absl::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == fx::kNpos ? text.size() : newline + 1);
    const size_t indent = line.find_first_not_of(' ');
    if (indent == fx::kNpos) continue;
    line = fx::Strip(line.substr(indent));
    if (line.empty()) continue;
    if (!in_forward) {
      switch (fx::ReadPreambleLine(line, line[0] == '#', in_class)) {
        case fx::PreambleLine::kSkip:
          break;
        case fx::PreambleLine::kForward:
          in_forward = true;
          def_indent = indent;
          break;
        case fx::PreambleLine::kClass:
          in_class = true;
          break;
        case fx::PreambleLine::kForeign:
          return false;
      }
      continue;
    }
    if (line[0] == '#') {
      absl::string_view body = fx::Strip(line.substr(1));
      if (!absl::ConsumePrefix(&body, "File:")) continue;
      if (!fx::IsAscii(line) && !IsValidUtf8(line)) return false;
      v1::SourceLoc loc;
      fx::ParseFileComment(body, &loc, FxDetail::kAnalysis);
      if (!loc.file().empty()) found.push_back(loc.file());
      continue;
    }
    // Shallower, unless it closes a bracket (`):` ending a signature spread over lines).
    if (indent <= def_indent && line[0] != ')' && line[0] != ']' && line[0] != '}') return false;
    if (absl::ConsumePrefix(&line, "return") &&
        (line.empty() || line[0] == ' ' || line[0] == '(' || line[0] == '[')) {
      files->insert(std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
      return true;
    }
  }
  return false;
}

}  // namespace cl

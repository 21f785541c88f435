#include "capture/torch_trace/fx_graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/utf8.h"

namespace cl {
namespace {

constexpr size_t kNpos = absl::string_view::npos;
// List arguments nested deeper than this are kept as one literal: the parser's recursion is
// bounded by this, never by the input.
constexpr int kMaxArgNesting = 32;
// Problem messages quote at most this many bytes of the offending text.
constexpr size_t kExcerptBytes = 80;
// A source comment's file, function and code are each kept to this many bytes.
constexpr size_t kMaxSourceBytes = 1024;

absl::string_view Strip(absl::string_view s) { return absl::StripAsciiWhitespace(s); }

bool IsOpen(char c) { return c == '(' || c == '[' || c == '{'; }
bool IsClose(char c) { return c == ')' || c == ']' || c == '}'; }
char CloserOf(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(s[0])) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

bool IsDottedName(absl::string_view s) {
  for (absl::string_view part : absl::StrSplit(s, '.')) {
    if (!IsIdentifier(part)) return false;
  }
  return true;
}

// Steps over string literals: true when text[i] is part of one (an opening quote, a character
// inside, or the closing quote), updating `quote` and skipping escaped characters.
bool InString(absl::string_view text, size_t& i, char& quote) {
  const char c = text[i];
  if (quote != 0) {
    if (c == '\\') {
      ++i;
    } else if (c == quote) {
      quote = 0;
    }
    return true;
  }
  if (c == '\'' || c == '"') {
    quote = c;
    return true;
  }
  return false;
}

// Calls `fn(i)` for each index of `text` outside every string literal and bracket pair (an opening
// bracket at that level is reported before it opens) and returns the first index for which `fn`
// returns true, else kNpos. Unbalanced closers are ignored; an unterminated string runs to the end.
template <typename Fn>
size_t ScanTopLevel(absl::string_view text, Fn fn) {
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (InString(text, i, quote)) continue;
    const char c = text[i];
    if (depth == 0 && fn(i)) return i;
    if (IsOpen(c)) {
      ++depth;
    } else if (IsClose(c) && depth > 0) {
      --depth;
    }
  }
  return kNpos;
}

// The index of the bracket closing the one at `open`, or kNpos when it never closes or closes
// with the wrong kind.
size_t MatchingClose(absl::string_view text, size_t open) {
  int depth = 0;
  char quote = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (InString(text, i, quote)) continue;
    const char c = text[i];
    if (IsOpen(c)) {
      ++depth;
    } else if (IsClose(c) && --depth == 0) {
      return c == CloserOf(text[open]) ? i : kNpos;
    }
  }
  return kNpos;
}

// `text` cut at every top-level `sep`; always at least one part.
std::vector<absl::string_view> SplitTopLevel(absl::string_view text, char sep) {
  std::vector<absl::string_view> parts;
  size_t start = 0;
  ScanTopLevel(text, [&](size_t i) {
    if (text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
    return false;
  });
  parts.push_back(text.substr(start));
  return parts;
}

size_t FindTopLevel(absl::string_view text, char c) {
  return ScanTopLevel(text, [&](size_t i) { return text[i] == c; });
}

// The last top-level `open` bracket, when its pair ends `text` and something precedes it:
// the `(` of `callee(args)`, the `[` of `base[index]`.
size_t TrailingGroup(absl::string_view text, char open) {
  if (text.empty() || text.back() != CloserOf(open)) return kNpos;
  size_t last = kNpos;
  ScanTopLevel(text, [&](size_t i) {
    if (text[i] == open) last = i;
    return false;
  });
  if (last == kNpos || last == 0 || MatchingClose(text, last) != text.size() - 1) return kNpos;
  return last;
}

// The top-level plain `=` of an assignment or keyword argument (not `==`, `<=`, `+=`, ...).
size_t FindAssign(absl::string_view text) {
  return ScanTopLevel(text, [&](size_t i) {
    if (text[i] != '=') return false;
    if (i + 1 < text.size() && text[i + 1] == '=') return false;
    return i == 0 || !absl::StrContains("=!<>+-*/%&|^@:", text[i - 1]);
  });
}

bool IsOperatorChar(char c) { return absl::StrContains("+-*/%<>=!&|^@~", c); }

// The first top-level operator written the way FX writes one, with a space on each side
// (`a + b`, `a >= b`, `a += b`): sets `token` and returns the index of the space before it.
size_t FindSpacedOperator(absl::string_view text, absl::string_view* token) {
  return ScanTopLevel(text, [&](size_t i) {
    if (text[i] != ' ') return false;
    size_t end = i + 1;
    while (end < text.size() && IsOperatorChar(text[end])) ++end;
    if (end == i + 1 || end >= text.size() || text[end] != ' ') return false;
    *token = text.substr(i + 1, end - i - 1);
    return true;
  });
}

// FX prints these `operator` functions as Python operators (torch/fx/graph.py magic_methods,
// inplace_methods); the node's target is `operator.<name>`.
absl::string_view BinaryOperatorName(absl::string_view op) {
  static const auto* const kNames = new absl::flat_hash_map<absl::string_view, absl::string_view>{
      {"+", "add"}, {"-", "sub"},  {"*", "mul"},     {"/", "truediv"}, {"//", "floordiv"},
      {"%", "mod"}, {"**", "pow"}, {"<<", "lshift"}, {">>", "rshift"}, {"&", "and_"},
      {"|", "or_"}, {"^", "xor"},  {"@", "matmul"},  {"==", "eq"},     {"!=", "ne"},
      {"<", "lt"},  {">", "gt"},   {"<=", "le"},     {">=", "ge"}};
  auto it = kNames->find(op);
  return it == kNames->end() ? absl::string_view() : it->second;
}

absl::string_view InplaceOperatorName(absl::string_view op) {
  static const auto* const kNames = new absl::flat_hash_map<absl::string_view, absl::string_view>{
      {"+=", "iadd"}, {"-=", "isub"},  {"*=", "imul"},     {"/=", "itruediv"}, {"//=", "ifloordiv"},
      {"%=", "imod"}, {"**=", "ipow"}, {"<<=", "ilshift"}, {">>=", "irshift"}, {"&=", "iand"},
      {"|=", "ior"},  {"^=", "ixor"},  {"@=", "imatmul"}};
  auto it = kNames->find(op);
  return it == kNames->end() ? absl::string_view() : it->second;
}

bool IsQuoted(absl::string_view s) {
  return s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front();
}

void AddDims(absl::string_view list, google::protobuf::RepeatedPtrField<std::string>* dims) {
  if (Strip(list).empty()) return;
  for (absl::string_view d : SplitTopLevel(list, ',')) dims->Add(std::string(Strip(d)));
}

// The meta of FX's verbose annotations: "f32[s0, 64][64, 1]cpu", "f32[16, 256]" (no stride or
// device), "Sym(s0)" (a SymInt: dtype "Sym", sym_expr "s0", no shape), and for several outputs
// "(f32[2][1]cpu, i64[2][1]cpu)", of which the first is kept.
bool ParseMeta(absl::string_view ann, v1::TensorMeta* meta) {
  ann = Strip(ann);
  for (int i = 0; i < kMaxArgNesting && absl::StartsWith(ann, "("); ++i) {
    if (MatchingClose(ann, 0) != ann.size() - 1) return false;
    ann = Strip(SplitTopLevel(ann.substr(1, ann.size() - 2), ',').front());
  }
  if (ann.empty()) return true;  // "()": no outputs, nothing to record
  if (absl::StartsWith(ann, "Sym(")) {
    if (ann.back() != ')') return false;
    meta->set_dtype("Sym");
    meta->set_sym_expr(std::string(Strip(ann.substr(4, ann.size() - 5))));
    return true;
  }
  const size_t shape_open = ann.find('[');
  if (shape_open == kNpos || shape_open == 0) return false;
  const absl::string_view dtype = ann.substr(0, shape_open);
  if (!IsIdentifier(dtype)) return false;
  const size_t shape_close = MatchingClose(ann, shape_open);
  if (shape_close == kNpos) return false;
  meta->set_dtype(std::string(dtype));
  AddDims(ann.substr(shape_open + 1, shape_close - shape_open - 1), meta->mutable_shape());
  size_t rest = shape_close + 1;
  if (rest < ann.size() && ann[rest] == '[') {
    const size_t stride_close = MatchingClose(ann, rest);
    if (stride_close == kNpos) return false;
    AddDims(ann.substr(rest + 1, stride_close - rest - 1), meta->mutable_stride());
    rest = stride_close + 1;
  }
  meta->set_device(std::string(Strip(ann.substr(rest))));
  return true;
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

// At most kMaxSourceBytes of valid UTF-8 `s`, cut at a character boundary. Every node after a
// source comment gets a copy, so an uncapped comment would multiply the input's size.
std::string CapSourceField(absl::string_view s) {
  if (s.size() <= kMaxSourceBytes) return std::string(s);
  size_t n = kMaxSourceBytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return absl::StrCat(s.substr(0, n), "...");
}

// `File: /path/x.py:69 in forward, code: h = self.up(x)` (FX's stack-trace summary).
void ParseFileComment(absl::string_view s, v1::SourceLoc* loc) {
  s = Strip(s);
  if (const size_t code = s.find(", code: "); code != kNpos) {
    loc->set_code(CapSourceField(s.substr(code + 8)));
    s = s.substr(0, code);
  }
  // The last ":<digits> in " separates the file from the function; paths may hold " in ".
  for (size_t in = s.rfind(" in "); in != kNpos && in > 0; in = s.rfind(" in ", in - 1)) {
    const size_t colon = s.rfind(':', in);
    uint32_t line = 0;
    if (colon == kNpos || !absl::SimpleAtoi(s.substr(colon + 1, in - colon - 1), &line)) continue;
    loc->set_file(CapSourceField(s.substr(0, colon)));
    loc->set_line(line);
    loc->set_fn(CapSourceField(s.substr(in + 4)));
    return;
  }
  loc->set_file(CapSourceField(s));
}

// ---- Logical lines ------------------------------------------------------------------------

struct Line {
  size_t number = 0;        // of its first physical line, 1-based
  size_t indent = 0;        // of its first physical line
  bool comment = false;     // a comment line: `text` starts with '#'
  bool unbalanced = false;  // it opens brackets it never closes
  // The code without indentation, trailing comment or trailing space; a statement spread over
  // several physical lines (open brackets) is joined with single spaces.
  absl::string_view text;
};

// Cuts the text into logical lines the way Python does (a statement continues while brackets are
// open), skipping blank lines. A continuation line indented no deeper than the statement's first
// line, that does not start by closing a bracket, starts a new statement instead: that keeps one
// unbalanced bracket in cut-off or hostile text from swallowing the rest of the graph.
class LineReader {
 public:
  explicit LineReader(absl::string_view text) : rest_(text) {}

  // The next logical line; false at the end. `line->text` is valid until the next call.
  bool Next(Line* line) {
    while (!rest_.empty()) {
      const Physical first = Take();
      if (first.body.empty()) continue;
      *line = Line{first.number, first.indent, first.body[0] == '#', false, first.body};
      if (line->comment) return true;
      int depth = 0;
      const absl::string_view code = Code(first.body, &depth);
      if (code.empty()) continue;
      line->text = code;
      if (depth == 0) return true;
      buffer_.assign(code.data(), code.size());
      while (depth > 0 && !rest_.empty()) {
        const Physical next = Peek();
        if (!next.body.empty() && next.body[0] != '#' && next.indent <= first.indent &&
            !IsClose(next.body[0])) {
          break;
        }
        Take();
        if (next.body.empty() || next.body[0] == '#') continue;
        const absl::string_view more = Code(next.body, &depth);
        if (more.empty()) continue;
        buffer_.push_back(' ');
        buffer_.append(more.data(), more.size());
      }
      line->unbalanced = depth > 0;
      line->text = buffer_;
      return true;
    }
    return false;
  }

 private:
  struct Physical {
    size_t number = 0;
    size_t indent = 0;
    absl::string_view body;  // after the indentation, without a trailing '\r' or spaces
    size_t length = 0;       // bytes to consume, newline included
  };

  Physical Peek() const {
    Physical p;
    p.number = number_;
    const size_t nl = rest_.find('\n');
    absl::string_view raw = rest_.substr(0, nl);
    p.length = nl == kNpos ? rest_.size() : nl + 1;
    while (p.indent < raw.size() && (raw[p.indent] == ' ' || raw[p.indent] == '\t')) ++p.indent;
    p.body = absl::StripTrailingAsciiWhitespace(raw.substr(p.indent));
    return p;
  }

  Physical Take() {
    Physical p = Peek();
    rest_.remove_prefix(p.length);
    ++number_;
    return p;
  }

  // The code part of one physical line (before a comment), tracking the bracket depth across
  // lines. Strings cannot span lines, so an unterminated one ends with its line.
  static absl::string_view Code(absl::string_view body, int* depth) {
    char quote = 0;
    for (size_t i = 0; i < body.size(); ++i) {
      if (InString(body, i, quote)) continue;
      const char c = body[i];
      if (c == '#') {
        return absl::StripTrailingAsciiWhitespace(body.substr(0, i));
      } else if (IsOpen(c)) {
        ++*depth;
      } else if (IsClose(c) && *depth > 0) {
        --*depth;
      }
    }
    return body;
  }

  absl::string_view rest_;
  size_t number_ = 1;
  std::string buffer_;
};

// ---- The reader ---------------------------------------------------------------------------

struct Param {
  std::string name;    // the node name: `args` for `*args`
  std::string target;  // as written in the signature
  v1::TensorMeta meta;
};

// One pass over the text: a small state machine over logical lines (before the class, inside it,
// inside the top-level forward, after its return), appending nodes to the graph as it goes.
class FxGraphReader {
 public:
  FxGraphReader(v1::Graph* graph, FxParseResult* result)
      : graph_(graph), result_(result), first_node_(graph->nodes_size()) {
    for (int i = 0; i < graph_->nodes_size(); ++i) defined_.emplace(graph_->nodes(i).name(), i);
  }

  void Run(absl::string_view text) {
    LineReader reader(text);
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

  static bool IsClassLine(absl::string_view s) {
    return absl::StartsWith(s, "class ") && absl::EndsWith(s, ":");
  }

  void OnLine(const Line& line) {
    if (!IsValidUtf8(line.text)) {
      Problem(line.number, "not UTF-8 text", line.text);
      return;
    }
    switch (state_) {
      case State::kPreamble:
      case State::kClass:
        if (line.comment) return;
        if (absl::StartsWith(line.text, "def ")) {
          StartForward(line);
        } else if (state_ == State::kPreamble && IsClassLine(line.text)) {
          class_indent_ = static_cast<int64_t>(line.indent);
          state_ = State::kClass;
        } else if (state_ == State::kClass && absl::StrContains(line.text, "wrap(")) {
          // torch.fx.wrap registrations that FX prints before the forward.
        } else {
          Problem(line.number, "not part of an FX GraphModule", line.text);
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
                   absl::StartsWith(line.text, "return(") || absl::StartsWith(line.text, "return[")) {
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
    state_ = State::kForward;
    def_line_ = line.number;
    def_indent_ = static_cast<int64_t>(line.indent);
    const absl::string_view text = line.text;
    const size_t open = text.find('(');
    const size_t close = open == kNpos ? kNpos : MatchingClose(text, open);
    if (close == kNpos) {
      Problem(line.number, "a `def` without a readable signature", text);
      return;
    }
    bool first = true;
    for (absl::string_view p : SplitTopLevel(text.substr(open + 1, close - open - 1), ',')) {
      p = Strip(p);
      if (p.empty() || p == "*" || p == "/") continue;
      if (std::exchange(first, false) && p == "self") continue;
      if (const size_t eq = FindAssign(p); eq != kNpos) p = Strip(p.substr(0, eq));  // a default
      Param param;
      absl::string_view ann;
      if (const size_t colon = FindTopLevel(p, ':'); colon != kNpos) {
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
      if (IsQuoted(ann) && !ParseMeta(ann.substr(1, ann.size() - 2), &param.meta)) {
        Problem(line.number, "an unreadable annotation", ann);
        param.meta.Clear();
      }
      params_.push_back(std::move(param));
    }
  }

  void OnComment(absl::string_view text) {
    absl::string_view body = Strip(text.substr(1));
    if (absl::ConsumePrefix(&body, "File:")) {
      source_.emplace();
      ParseFileComment(body, &*source_);
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
    std::vector<absl::string_view> parts;
    for (absl::string_view p : SplitTopLevel(line.text, ';')) {
      if (p = Strip(p); !p.empty()) parts.push_back(p);
    }
    if (parts.empty()) return;
    if (OnAnnotations(line, parts)) return;
    const absl::string_view stmt = parts[0];
    const size_t eq = FindAssign(stmt);
    if (!materialized_) {
      if (eq != kNpos && absl::StartsWith(Strip(stmt.substr(eq + 1)), "fx_pytree.tree_flatten_spec(")) {
        MaterializePytree(line, Strip(stmt.substr(0, eq)));
        return;
      }
      Materialize();
    }
    // FX spaces operators, so the first spaced one of `a += b` is `+=` and of `x = f(a)` is `=`.
    if (absl::string_view token;
        FindSpacedOperator(stmt, &token) != kNpos && !InplaceOperatorName(token).empty()) {
      OnInplace(line, parts);
      return;
    }
    if (eq == kNpos) {
      Problem(line.number, "not an FX node statement", line.text);
      return;
    }
    absl::string_view lhs = Strip(stmt.substr(0, eq));
    const absl::string_view rhs = Strip(stmt.substr(eq + 1));
    if (const size_t index = TrailingGroup(lhs, '['); index != kNpos) {
      OnSetitem(line, parts, lhs, index, rhs);
      return;
    }
    absl::string_view ann;
    if (const size_t colon = FindTopLevel(lhs, ':'); colon != kNpos) {
      ann = Strip(lhs.substr(colon + 1));
      lhs = Strip(lhs.substr(0, colon));
    }
    if (!IsIdentifier(lhs)) {
      Problem(line.number, "not an FX node statement", line.text);
      return;
    }
    if (ann.empty() && RenamePlaceholder(lhs, rhs)) return;
    v1::Node node;
    if (!ReadExpression(rhs, &node)) {
      Problem(line.number, "an expression FX does not print", line.text);
      return;
    }
    if (IsQuoted(ann) && !ParseMeta(ann.substr(1, ann.size() - 2), node.mutable_meta())) {
      Problem(line.number, "an unreadable annotation", ann);
      node.clear_meta();
    }
    Append(line.number, lhs, std::move(node), /*with_source=*/true);
  }

  // `primals_1: "f32[4][1]cpu"; primals_2: "f32[4][1]cpu"; ` (or one per line): the annotations
  // of the inputs a pytree forward flattens next.
  bool OnAnnotations(const Line& line, const std::vector<absl::string_view>& parts) {
    for (absl::string_view p : parts) {
      const size_t colon = FindTopLevel(p, ':');
      if (FindAssign(p) != kNpos || colon == kNpos || !IsIdentifier(Strip(p.substr(0, colon))) ||
          !IsQuoted(Strip(p.substr(colon + 1)))) {
        return false;
      }
    }
    if (materialized_) {
      Problem(line.number, "an annotation after the inputs", line.text);
      return true;
    }
    for (absl::string_view p : parts) {
      const size_t colon = FindTopLevel(p, ':');
      const absl::string_view ann = Strip(p.substr(colon + 1));
      v1::TensorMeta& meta = pending_meta_[Strip(p.substr(0, colon))];
      if (!ParseMeta(ann.substr(1, ann.size() - 2), &meta)) {
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
    for (absl::string_view name : SplitTopLevel(names, ',')) {
      name = Strip(name);
      if (name.empty()) continue;
      if (!IsIdentifier(name)) {
        Problem(line.number, "a flattened input that is not a name", name);
        continue;
      }
      v1::Node node;
      node.set_op("placeholder");
      node.set_target(std::string(name));
      if (auto it = pending_meta_.find(name); it != pending_meta_.end()) {
        *node.mutable_meta() = it->second;
      }
      Append(line.number, name, std::move(node), /*with_source=*/false);
    }
  }

  void Materialize() {
    if (std::exchange(materialized_, true)) return;
    for (Param& p : params_) {
      v1::Node node;
      node.set_op("placeholder");
      node.set_target(p.target);
      *node.mutable_meta() = std::move(p.meta);
      Append(def_line_, p.name, std::move(node), /*with_source=*/false);
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
    node->set_name(std::string(name));
    const int index = it->second;
    defined_.erase(it);
    defined_.emplace(name, index);
    return true;
  }

  // The right-hand side of a node statement, in the shapes FX's code generator writes.
  bool ReadExpression(absl::string_view rhs, v1::Node* node) {
    absl::string_view token;
    if (const size_t at = FindSpacedOperator(rhs, &token); at != kNpos) {
      const absl::string_view name = BinaryOperatorName(token);
      if (name.empty()) return false;
      SetCall(node, "call_function", absl::StrCat("operator.", name));
      ReadValue(rhs.substr(0, at), 0, node->add_args());
      ReadValue(rhs.substr(at + token.size() + 2), 0, node->add_args());
      return true;
    }
    if (const size_t open = TrailingGroup(rhs, '('); open != kNpos) {
      const absl::string_view callee = Strip(rhs.substr(0, open));
      const absl::string_view args = rhs.substr(open + 1, rhs.size() - open - 2);
      if (std::optional<std::string> path = ParseSelfPath(callee); path && !path->empty()) {
        SetCall(node, "call_module", *std::move(path));
      } else if (!IsDottedName(callee)) {
        return false;
      } else if (const size_t dot = callee.find('.');
                 dot != kNpos && dot == callee.rfind('.') && defined_.contains(callee.substr(0, dot))) {
        SetCall(node, "call_method", std::string(callee.substr(dot + 1)));
        node->add_args()->set_node(std::string(callee.substr(0, dot)));
      } else {
        SetCall(node, "call_function", std::string(absl::StripPrefix(callee, "torch.ops.")));
      }
      ReadCallArgs(args, node);
      return true;
    }
    if (const size_t open = TrailingGroup(rhs, '['); open != kNpos) {
      if (!IsIdentifier(Strip(rhs.substr(0, open)))) return false;
      SetCall(node, "call_function", "operator.getitem");
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
      SetCall(node, "get_attr", *std::move(path));
      return true;
    }
    // `getattr(x, 'shape')` with an identifier attribute prints as `x.shape`.
    if (const size_t dot = rhs.find('.'); dot != kNpos && dot == rhs.rfind('.') &&
                                          defined_.contains(rhs.substr(0, dot)) &&
                                          IsIdentifier(rhs.substr(dot + 1))) {
      SetCall(node, "call_function", "getattr");
      node->add_args()->set_node(std::string(rhs.substr(0, dot)));
      node->add_args()->set_literal(absl::StrCat("'", rhs.substr(dot + 1), "'"));
      return true;
    }
    return false;
  }

  // `a += b;  iadd = a`: FX prints in-place operators (dynamo emits them) as a statement and then
  // names the node after it.
  void OnInplace(const Line& line, const std::vector<absl::string_view>& parts) {
    absl::string_view token;
    const size_t at = FindSpacedOperator(parts[0], &token);
    v1::Node node;
    SetCall(&node, "call_function", absl::StrCat("operator.", InplaceOperatorName(token)));
    ReadValue(parts[0].substr(0, at), 0, node.add_args());
    ReadValue(parts[0].substr(at + token.size() + 2), 0, node.add_args());
    NameAfter(line, parts, std::move(node));
  }

  // `a[i] = v;  setitem = a`.
  void OnSetitem(const Line& line, const std::vector<absl::string_view>& parts, absl::string_view lhs,
                 size_t index, absl::string_view rhs) {
    v1::Node node;
    SetCall(&node, "call_function", "operator.setitem");
    ReadValue(lhs.substr(0, index), 0, node.add_args());
    ReadValue(lhs.substr(index + 1, lhs.size() - index - 2), 0, node.add_args());
    ReadValue(rhs, 0, node.add_args());
    NameAfter(line, parts, std::move(node));
  }

  void NameAfter(const Line& line, const std::vector<absl::string_view>& parts, v1::Node node) {
    const size_t eq = parts.size() > 1 ? FindAssign(parts[1]) : kNpos;
    absl::string_view name = eq == kNpos ? absl::string_view() : Strip(parts[1].substr(0, eq));
    absl::string_view ann;
    if (const size_t colon = FindTopLevel(name, ':'); colon != kNpos) {
      ann = Strip(name.substr(colon + 1));
      name = Strip(name.substr(0, colon));
    }
    if (!IsIdentifier(name)) {
      Problem(line.number, "an in-place statement without its node name", line.text);
      return;
    }
    if (IsQuoted(ann) && !ParseMeta(ann.substr(1, ann.size() - 2), node.mutable_meta())) {
      Problem(line.number, "an unreadable annotation", ann);
      node.clear_meta();
    }
    Append(line.number, name, std::move(node), /*with_source=*/true);
  }

  // `return (a, b)`, `return [a]`, `return a`, `return pytree.tree_unflatten([a, b], self._out_spec)`.
  void OnReturn(const Line& line) {
    state_ = State::kAfterForward;
    Materialize();
    if (line.unbalanced) {
      Problem(line.number, "unbalanced brackets", line.text);
      return;
    }
    absl::string_view value = Strip(line.text.substr(6));
    if (absl::StartsWith(value, "pytree.tree_unflatten(")) {
      const size_t open = value.find('(');
      if (MatchingClose(value, open) == value.size() - 1) {
        value = SplitTopLevel(value.substr(open + 1, value.size() - open - 2), ',').front();
      }
    }
    v1::Node node;
    node.set_op("output");
    node.set_target("output");
    if (!Strip(value).empty()) {
      v1::Arg returned;
      ReadValue(value, 0, &returned);
      if (returned.has_list()) {
        node.mutable_args()->Swap(returned.mutable_list()->mutable_items());
      } else {
        *node.add_args() = std::move(returned);
      }
    }
    std::string name = "output";
    for (int i = 1; defined_.contains(name); ++i) name = absl::StrCat("output_", i);
    Append(line.number, name, std::move(node), /*with_source=*/false);
  }

  static void SetCall(v1::Node* node, absl::string_view op, std::string target) {
    node->set_op(std::string(op));
    node->set_target(std::move(target));
  }

  // `a, [b, 2], key = 'mean'`: positional values and `key = value` keywords (FX spaces them;
  // `key=value` is read too).
  void ReadCallArgs(absl::string_view text, v1::Node* node) {
    std::vector<absl::string_view> items = SplitTopLevel(text, ',');
    if (Strip(items.back()).empty()) items.pop_back();  // `f()` or a trailing comma
    for (absl::string_view item : items) {
      if (const size_t eq = FindAssign(item); eq != kNpos && IsIdentifier(Strip(item.substr(0, eq)))) {
        ReadValue(item.substr(eq + 1), 0, &(*node->mutable_kwargs())[std::string(Strip(item.substr(0, eq)))]);
      } else {
        ReadValue(item, 0, node->add_args());
      }
    }
  }

  // A name defined earlier is a node; `[...]` and `(...,)` are lists (down to kMaxArgNesting);
  // anything else is a literal in FX's spelling.
  void ReadValue(absl::string_view v, int depth, v1::Arg* out) {
    v = Strip(v);
    if (!v.empty() && (v[0] == '[' || v[0] == '(') && depth < kMaxArgNesting &&
        MatchingClose(v, 0) == v.size() - 1) {
      std::vector<absl::string_view> items = SplitTopLevel(v.substr(1, v.size() - 2), ',');
      const bool trailing_comma = items.size() > 1 && Strip(items.back()).empty();
      if (Strip(items.back()).empty()) items.pop_back();
      if (v[0] == '(' && items.size() == 1 && !trailing_comma) {
        ReadValue(items[0], depth + 1, out);  // parentheses around one value, not a tuple
        return;
      }
      v1::ArgList* list = out->mutable_list();
      list->set_tuple(v[0] == '(');
      for (absl::string_view item : items) ReadValue(item, depth + 1, list->add_items());
      return;
    }
    if (IsIdentifier(v) && defined_.contains(v)) {
      out->set_node(std::string(v));
    } else {
      out->set_literal(std::string(v));
    }
  }

  void Append(size_t line, absl::string_view name, v1::Node node, bool with_source) {
    if (defined_.contains(name)) {
      Problem(line, "a node name defined twice (the second is dropped)", name);
      return;
    }
    node.set_name(std::string(name));
    if (node.op() != "placeholder") only_placeholders_ = false;
    if (with_source && source_) *node.mutable_source() = *source_;
    defined_.emplace(name, graph_->nodes_size());
    *graph_->add_nodes() = std::move(node);
    ++result_->nodes;
  }

  void Problem(size_t line, absl::string_view what, absl::string_view text) {
    ++result_->skipped_lines;
    if (result_->problems.size() >= kMaxFxProblems) return;
    std::string message = line == 0 ? std::string(what) : absl::StrCat("line ", line, ": ", what);
    if (!text.empty()) {
      absl::StrAppend(&message, ": ", absl::CHexEscape(text.substr(0, kExcerptBytes)),
                      text.size() > kExcerptBytes ? "..." : "");
    }
    result_->problems.push_back(std::move(message));
  }

  v1::Graph* graph_;
  FxParseResult* result_;
  const int first_node_;           // the graph's first node from this text
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
  absl::flat_hash_map<std::string, int> defined_;  // node name -> index in graph_->nodes
  std::optional<v1::SourceLoc> source_;            // of the nodes that follow
};

}  // namespace

FxParseResult ParseFxGraphText(absl::string_view text, v1::Graph* graph) {
  FxParseResult result;
  FxGraphReader(graph, &result).Run(text);
  return result;
}

}  // namespace cl

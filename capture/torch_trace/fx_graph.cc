#include "capture/torch_trace/fx_graph.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

// What absl::ascii_isspace accepts.
inline bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// absl::StripAsciiWhitespace, inlined: it runs several times on each part of each statement, and
// most parts have nothing to strip.
inline absl::string_view Strip(absl::string_view s) {
  size_t end = s.size();
  while (end > 0 && IsSpace(s[end - 1])) --end;
  size_t begin = 0;
  while (begin < end && IsSpace(s[begin])) ++begin;
  return absl::string_view(s.data() + begin, end - begin);
}

// Sets a proto string field from a view without building a temporary std::string first.
void Assign(std::string* field, absl::string_view value) { field->assign(value.data(), value.size()); }

bool IsOpen(char c) { return c == '(' || c == '[' || c == '{'; }
bool IsClose(char c) { return c == ')' || c == ']' || c == '}'; }
char CloserOf(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

// The characters that can change a scan's state; the scanning loops step over all others quickly.
enum CharClass : uint8_t { kPlain = 0, kQuote = 1, kOpen = 2, kClose = 4, kHash = 8 };
constexpr std::array<uint8_t, 256> kCharClass = [] {
  std::array<uint8_t, 256> classes{};
  for (const char c : {'\'', '"'}) classes[static_cast<uint8_t>(c)] = kQuote;
  for (const char c : {'(', '[', '{'}) classes[static_cast<uint8_t>(c)] = kOpen;
  for (const char c : {')', ']', '}'}) classes[static_cast<uint8_t>(c)] = kClose;
  classes['#'] = kHash;
  return classes;
}();
uint8_t ClassOf(char c) { return kCharClass[static_cast<uint8_t>(c)]; }

// The index of the quote closing the string literal that opens at `text[open]`, stepping over
// escaped characters; kNpos when the literal runs to the end of `text`.
size_t LiteralEnd(absl::string_view text, size_t open) {
  const char quote = text[open];
  size_t end = open + 1;
  while (end < text.size() && text[end] != quote) end += text[end] == '\\' ? 2 : 1;
  return end < text.size() ? end : kNpos;
}

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(s[0])) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

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

// ---- Top-level scans -----------------------------------------------------------------------
//
// Commas, `=` and operators count only at the top level of a text: outside every string literal
// and bracket pair. Two scanners answer the same two questions about a text:
//  - TopLevel(text, c, fn) calls `fn(i)` for each index of `text` that holds `c` and lies outside
//    every string literal and bracket pair (an opening bracket at that level is reported before it
//    opens), and returns the first index for which `fn` returns true, else kNpos. A closer with
//    nothing to close is itself at the top level; an unterminated string runs to the end.
//  - MatchingClose(text, open) is the index of the bracket closing the one at `open`, or kNpos
//    when it never closes or closes with the wrong kind. Brackets of any kind count for the depth.
// PlainScanner reads the text character by character each time. A statement is scanned many times
// (for `;`, `=`, `:`, operators, its call's arguments and their lists), so StatementIndex finds its
// string literals and bracket pairs once, and its scans step over them.

class PlainScanner {
 public:
  template <typename Fn>
  size_t TopLevel(absl::string_view text, char c, Fn fn) const {
    int depth = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      const uint8_t cls = ClassOf(text[i]);
      if (cls == kQuote) {
        if ((i = LiteralEnd(text, i)) == kNpos) return kNpos;
        continue;
      }
      if (depth == 0 && text[i] == c && fn(i)) return i;
      if (cls == kOpen) {
        ++depth;
      } else if (cls == kClose && depth > 0) {
        --depth;
      }
    }
    return kNpos;
  }

  size_t MatchingClose(absl::string_view text, size_t open) const {
    int depth = 0;
    for (size_t i = open; i < text.size(); ++i) {
      const uint8_t cls = ClassOf(text[i]);
      if (cls == kQuote) {
        if ((i = LiteralEnd(text, i)) == kNpos) return kNpos;
      } else if (cls == kOpen) {
        ++depth;
      } else if (cls == kClose && --depth == 0) {
        return text[i] == CloserOf(text[open]) ? i : kNpos;
      }
    }
    return kNpos;
  }
};

// The string literals and bracket pairs of one statement, found in a single pass, so that the
// scans of the statement's parts cost only their top-level characters.
//
// It answers exactly as PlainScanner does for any part of the statement that starts outside a
// string literal: from such a start the quote state evolves as in the whole statement, and a
// bracket's partner does not depend on where the scan started, because every kind of bracket
// counts for the depth (a closer the part cannot match is at the part's top level either way).
// Parts that start inside a literal, or are not inside the statement, are scanned plainly.
class StatementIndex {
 public:
  // Indexes `text`, which must outlive the queries (until the next Reset). With `to_comment`, it
  // stops at the first `#` outside a literal and indexes only the text before it. Returns the
  // length indexed, or kNpos for a text too long to index (4 GiB), which is then scanned plainly.
  size_t Reset(absl::string_view text, bool to_comment = false) {
    text_ = text;
    spans_.clear();
    open_.clear();
    indexed_ = text.size() < kNever;  // positions are 32-bit
    if (!indexed_) return kNpos;
    for (size_t i = 0; i < text.size(); ++i) {
      const uint8_t cls = ClassOf(text[i]);
      if (cls == kPlain) continue;
      if (cls == kHash) {
        if (!to_comment) continue;
        text_ = text.substr(0, i);
        return i;
      }
      if (cls == kQuote) {
        const size_t end = LiteralEnd(text, i);
        spans_.push_back({static_cast<uint32_t>(i), end == kNpos ? kNever : static_cast<uint32_t>(end),
                          static_cast<uint32_t>(spans_.size() + 1)});
        if (end == kNpos) break;  // the literal runs to the end
        i = end;
      } else if (cls == kOpen) {
        open_.push_back(static_cast<uint32_t>(spans_.size()));
        spans_.push_back({static_cast<uint32_t>(i), kNever, 0});
      } else if (!open_.empty()) {
        Span& span = spans_[open_.back()];
        open_.pop_back();
        span.end = static_cast<uint32_t>(i);
        span.next = static_cast<uint32_t>(spans_.size());
      }
    }
    return text.size();
  }

  // The brackets the indexed text leaves open.
  size_t open_brackets() const { return open_.size(); }

  // Shortens the indexed text to a prefix that holds all of its spans (the same text without
  // trailing space).
  void Narrow(absl::string_view prefix) { text_ = prefix; }

  template <typename Fn>
  size_t TopLevel(absl::string_view part, char c, Fn fn) const {
    size_t k = 0;
    if (!Covers(part, &k)) return PlainScanner().TopLevel(part, c, fn);
    const size_t base = static_cast<size_t>(part.data() - text_.data());
    const size_t end = base + part.size();
    size_t i = base;
    while (true) {
      // Everything before the next literal or bracket is at the top level.
      const size_t stop = k < spans_.size() && spans_[k].pos < end ? spans_[k].pos : end;
      for (; (i = Find(c, i, stop)) < stop; ++i) {
        if (fn(i - base)) return i - base;
      }
      if (stop == end) return kNpos;
      const Span& span = spans_[k];
      if (text_[span.pos] == c && IsOpen(c) && fn(span.pos - base)) return span.pos - base;
      if (span.end == kNever || span.end >= end) return kNpos;  // open to the part's end
      i = span.end + 1;
      k = span.next;
    }
  }

  size_t MatchingClose(absl::string_view part, size_t open) const {
    size_t k = 0;
    if (!Covers(part, &k)) return PlainScanner().MatchingClose(part, open);
    const size_t base = static_cast<size_t>(part.data() - text_.data());
    const size_t at = base + open;
    k = static_cast<size_t>(std::lower_bound(spans_.begin() + k, spans_.end(), at, PosLess) - spans_.begin());
    // Not an opening bracket outside the statement's literals (callers pass one): scan plainly.
    if (k == spans_.size() || spans_[k].pos != at || !IsOpen(text_[at])) {
      return PlainScanner().MatchingClose(part, open);
    }
    const uint32_t close = spans_[k].end;
    if (close == kNever || close >= base + part.size()) return kNpos;
    return text_[close] == CloserOf(text_[at]) ? close - base : kNpos;
  }

 private:
  static constexpr uint32_t kNever = std::numeric_limits<uint32_t>::max();

  // A string literal (from its opening to its closing quote) or a bracket pair.
  struct Span {
    uint32_t pos;   // the opening quote or bracket
    uint32_t end;   // the closing one; kNever when it never closes
    uint32_t next;  // the index in spans_ of the first span after `end`
  };
  static bool PosLess(const Span& span, size_t pos) { return span.pos < pos; }

  // The first `c` in text_[from, to), else `to`. Most runs are a few bytes: a loop beats memchr.
  size_t Find(char c, size_t from, size_t to) const {
    if (to - from >= 32) {
      const void* hit = std::memchr(text_.data() + from, c, to - from);
      return hit == nullptr ? to : static_cast<size_t>(static_cast<const char*>(hit) - text_.data());
    }
    while (from < to && text_[from] != c) ++from;
    return from;
  }

  // True when `part` lies in the indexed text and starts outside every string literal; sets `k`
  // to the first span at or after its start.
  bool Covers(absl::string_view part, size_t* k) const {
    if (!indexed_ || part.empty()) return false;
    const auto p = reinterpret_cast<uintptr_t>(part.data());
    const auto t = reinterpret_cast<uintptr_t>(text_.data());
    if (p < t || p + part.size() > t + text_.size()) return false;
    const size_t base = p - t;
    if (base == 0) {  // the whole statement, or its first part
      *k = 0;
      return true;
    }
    *k = static_cast<size_t>(std::lower_bound(spans_.begin(), spans_.end(), base, PosLess) - spans_.begin());
    // Literals hold no spans, so a literal around `base` is the span just before it.
    if (*k > 0) {
      const Span& before = spans_[*k - 1];
      if (!IsOpen(text_[before.pos]) && (before.end == kNever || before.end >= base)) return false;
    }
    return true;
  }

  absl::string_view text_;
  bool indexed_ = false;
  std::vector<Span> spans_;     // in order of position
  std::vector<uint32_t> open_;  // the brackets open during Reset, innermost last
};

// `text` cut at every top-level `sep` into `parts` (cleared first); always at least one part.
template <typename Scanner>
void SplitTopLevel(const Scanner& scan, absl::string_view text, char sep,
                   std::vector<absl::string_view>* parts) {
  parts->clear();
  size_t start = 0;
  scan.TopLevel(text, sep, [&](size_t i) {
    parts->push_back(text.substr(start, i - start));
    start = i + 1;
    return false;
  });
  parts->push_back(text.substr(start));
}

template <typename Scanner>
size_t FindTopLevel(const Scanner& scan, absl::string_view text, char c) {
  return scan.TopLevel(text, c, [](size_t) { return true; });
}

// The last top-level `open` bracket, when its pair ends `text` and something precedes it:
// the `(` of `callee(args)`, the `[` of `base[index]`.
template <typename Scanner>
size_t TrailingGroup(const Scanner& scan, absl::string_view text, char open) {
  if (text.empty() || text.back() != CloserOf(open)) return kNpos;
  size_t last = kNpos;
  scan.TopLevel(text, open, [&](size_t i) {
    last = i;
    return false;
  });
  if (last == kNpos || last == 0 || scan.MatchingClose(text, last) != text.size() - 1) return kNpos;
  return last;
}

// Membership in a set of characters, as a table: these run on every candidate character.
constexpr std::array<bool, 256> CharSet(absl::string_view chars) {
  std::array<bool, 256> set{};
  for (const char c : chars) set[static_cast<uint8_t>(c)] = true;
  return set;
}
constexpr std::array<bool, 256> kBeforeOtherAssign = CharSet("=!<>+-*/%&|^@:");  // `==`, `+=`, ...
constexpr std::array<bool, 256> kOperatorChars = CharSet("+-*/%<>=!&|^@~");

// The top-level plain `=` of an assignment or keyword argument (not `==`, `<=`, `+=`, ...).
template <typename Scanner>
size_t FindAssign(const Scanner& scan, absl::string_view text) {
  return scan.TopLevel(text, '=', [&](size_t i) {
    if (i + 1 < text.size() && text[i + 1] == '=') return false;
    return i == 0 || !kBeforeOtherAssign[static_cast<uint8_t>(text[i - 1])];
  });
}

bool IsOperatorChar(char c) { return kOperatorChars[static_cast<uint8_t>(c)]; }

// The first top-level operator written the way FX writes one, with a space on each side
// (`a + b`, `a >= b`, `a += b`): sets `token` and returns the index of the space before it.
template <typename Scanner>
size_t FindSpacedOperator(const Scanner& scan, absl::string_view text, absl::string_view* token) {
  return scan.TopLevel(text, ' ', [&](size_t i) {
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

// Appends the comma-separated dimensions of a shape or stride (`s0, 64`) to `dims`, sized once
// (a repeated field grows 1, 3, 7, ... otherwise). `scratch` is reused.
void AddDims(absl::string_view list, google::protobuf::RepeatedPtrField<std::string>* dims,
             std::vector<absl::string_view>* scratch) {
  if (Strip(list).empty()) return;
  SplitTopLevel(PlainScanner(), list, ',', scratch);
  dims->Reserve(dims->size() + static_cast<int>(scratch->size()));
  for (absl::string_view d : *scratch) Assign(dims->Add(), Strip(d));
}

// Appends the dimensions of a list without brackets or string literals: every comma separates.
void AddFlatDims(absl::string_view list, google::protobuf::RepeatedPtrField<std::string>* dims) {
  if (Strip(list).empty()) return;
  int commas = 0;
  for (const char c : list) commas += c == ',';
  dims->Reserve(dims->size() + commas + 1);
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || list[i] == ',') {
      Assign(dims->Add(), Strip(list.substr(start, i - start)));
      start = i + 1;
    }
  }
}

// Almost every annotation is a plain `f32[2, 16][16, 1]cpu`: a dtype, a shape and maybe a stride
// holding no brackets, literals or parentheses, and a device. Reads such an annotation (already
// stripped) exactly as the general reader in ParseMeta would, and returns false, having set
// nothing, for anything else.
bool ParsePlainMeta(absl::string_view ann, v1::TensorMeta* meta) {
  size_t brackets[4];  // the positions of the `[`, `]` (and `[`, `]` of the stride)
  size_t count = 0;
  for (size_t i = 0; i < ann.size(); ++i) {
    const uint8_t cls = ClassOf(ann[i]);
    if (cls == kPlain || cls == kHash) continue;
    if (cls == kQuote || count == 4 || ann[i] != (count % 2 == 0 ? '[' : ']')) return false;
    brackets[count++] = i;
  }
  if (count != 2 && !(count == 4 && brackets[2] == brackets[1] + 1)) return false;
  const absl::string_view dtype = ann.substr(0, brackets[0]);
  if (!IsIdentifier(dtype)) return false;
  Assign(meta->mutable_dtype(), dtype);
  AddFlatDims(ann.substr(brackets[0] + 1, brackets[1] - brackets[0] - 1), meta->mutable_shape());
  if (count == 4) {
    AddFlatDims(ann.substr(brackets[2] + 1, brackets[3] - brackets[2] - 1), meta->mutable_stride());
  }
  Assign(meta->mutable_device(), Strip(ann.substr(brackets[count - 1] + 1)));
  return true;
}

// The meta of FX's verbose annotations: "f32[s0, 64][64, 1]cpu", "f32[16, 256]" (no stride or
// device), "Sym(s0)" (a SymInt: dtype "Sym", sym_expr "s0", no shape), and for several outputs
// "(f32[2][1]cpu, i64[2][1]cpu)", of which the first is kept. Annotations are string literals of
// the statement, so they are scanned on their own.
bool ParseMeta(absl::string_view ann, v1::TensorMeta* meta, std::vector<absl::string_view>* scratch) {
  const PlainScanner scan;
  ann = Strip(ann);
  if (ParsePlainMeta(ann, meta)) return true;
  for (int i = 0; i < kMaxArgNesting && absl::StartsWith(ann, "("); ++i) {
    if (scan.MatchingClose(ann, 0) != ann.size() - 1) return false;
    const absl::string_view inner = ann.substr(1, ann.size() - 2);
    ann = Strip(inner.substr(0, FindTopLevel(scan, inner, ',')));  // the first output
  }
  if (ann.empty()) return true;  // "()": no outputs, nothing to record
  if (absl::StartsWith(ann, "Sym(")) {
    if (ann.back() != ')') return false;
    meta->set_dtype("Sym");
    Assign(meta->mutable_sym_expr(), Strip(ann.substr(4, ann.size() - 5)));
    return true;
  }
  const size_t shape_open = ann.find('[');
  if (shape_open == kNpos || shape_open == 0) return false;
  const absl::string_view dtype = ann.substr(0, shape_open);
  if (!IsIdentifier(dtype)) return false;
  const size_t shape_close = scan.MatchingClose(ann, shape_open);
  if (shape_close == kNpos) return false;
  Assign(meta->mutable_dtype(), dtype);
  AddDims(ann.substr(shape_open + 1, shape_close - shape_open - 1), meta->mutable_shape(), scratch);
  size_t rest = shape_close + 1;
  if (rest < ann.size() && ann[rest] == '[') {
    const size_t stride_close = scan.MatchingClose(ann, rest);
    if (stride_close == kNpos) return false;
    AddDims(ann.substr(rest + 1, stride_close - rest - 1), meta->mutable_stride(), scratch);
    rest = stride_close + 1;
  }
  Assign(meta->mutable_device(), Strip(ann.substr(rest)));
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

// At most kMaxSourceBytes of valid UTF-8 `s` (and the ellipsis when cut). Every node after a
// source comment gets a copy, so an uncapped comment would multiply the input's size.
std::string CapSourceField(absl::string_view s) { return ClipUtf8(s, kMaxSourceBytes); }

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
  bool indexed = false;     // the reader's StatementIndex holds `text` (a one-line statement)
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
  // The statements are indexed into `index` as they are cut: a one-line statement (almost all of
  // them) is then read in one pass.
  LineReader(absl::string_view text, StatementIndex* index) : rest_(text), index_(index) {}

  // The next logical line; false at the end. `line->text` is valid until the next call.
  bool Next(Line* line) {
    while (!rest_.empty()) {
      const Physical first = Take();
      if (first.body.empty()) continue;
      *line = Line{first.number, first.indent, first.body[0] == '#', false, false, first.body};
      if (line->comment) return true;
      // What Code() finds, found while indexing the line.
      int depth = 0;
      absl::string_view code;
      if (const size_t code_end = index_->Reset(first.body, /*to_comment=*/true); code_end == kNpos) {
        code = Code(first.body, &depth);
      } else {
        code = code_end == first.body.size()
                   ? first.body
                   : absl::StripTrailingAsciiWhitespace(first.body.substr(0, code_end));
        depth = static_cast<int>(std::min<size_t>(index_->open_brackets(), std::numeric_limits<int>::max()));
        line->indexed = depth == 0;
      }
      if (code.empty()) continue;
      line->text = code;
      if (depth == 0) {
        if (line->indexed) index_->Narrow(code);
        return true;
      }
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
    for (size_t i = 0; i < body.size(); ++i) {
      const uint8_t cls = ClassOf(body[i]);
      if (cls == kPlain) continue;
      if (cls == kQuote) {
        i = LiteralEnd(body, i);
        if (i == kNpos) return body;  // an unterminated literal ends with its line
      } else if (cls == kHash) {
        return absl::StripTrailingAsciiWhitespace(body.substr(0, i));
      } else if (cls == kOpen) {
        ++*depth;
      } else if (*depth > 0) {
        --*depth;
      }
    }
    return body;
  }

  absl::string_view rest_;
  StatementIndex* index_;
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
//
// Nodes are built in place at the end of the graph and removed again when the statement turns out
// unreadable; the names of the nodes defined so far are looked up through views of the nodes' own
// name strings, which stay put while the graph grows.
class FxGraphReader {
 public:
  FxGraphReader(v1::Graph* graph, FxParseResult* result)
      : graph_(graph), result_(result), first_node_(graph->nodes_size()) {
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

  static bool IsClassLine(absl::string_view s) {
    return absl::StartsWith(s, "class ") && absl::EndsWith(s, ":");
  }

  void OnLine(const Line& line) {
    if (!IsAscii(line.text) && !IsValidUtf8(line.text)) {
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
      if (const size_t eq = FindAssign(scan, p); eq != kNpos) p = Strip(p.substr(0, eq));  // a default
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
      if (IsQuoted(ann) && !ParseMeta(ann.substr(1, ann.size() - 2), &param.meta, &dims_)) {
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
      if (eq != kNpos && absl::StartsWith(Strip(stmt.substr(eq + 1)), "fx_pytree.tree_flatten_spec(")) {
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
    if (!ReadExpression(rhs, node)) {
      graph_->mutable_nodes()->RemoveLast();
      Problem(line.number, "an expression FX does not print", line.text);
      return;
    }
    if (IsQuoted(ann) && !ParseMeta(ann.substr(1, ann.size() - 2), node->mutable_meta(), &dims_)) {
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
      if (FindAssign(index_, p) != kNpos || colon == kNpos || !IsIdentifier(Strip(p.substr(0, colon))) ||
          !IsQuoted(Strip(p.substr(colon + 1)))) {
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
      if (!ParseMeta(ann.substr(1, ann.size() - 2), &meta, &dims_)) {
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

  // The right-hand side of a node statement, in the shapes FX's code generator writes.
  bool ReadExpression(absl::string_view rhs, v1::Node* node) {
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
      } else if (const size_t dot = callee.find('.');
                 dot != kNpos && dot == callee.rfind('.') && defined_.contains(callee.substr(0, dot))) {
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

  // `a += b;  iadd = a`: FX prints in-place operators (dynamo emits them) as a statement and then
  // names the node after it.
  void OnInplace(const Line& line, const std::vector<absl::string_view>& parts) {
    absl::string_view token;
    const size_t at = FindSpacedOperator(index_, parts[0], &token);
    v1::Node* node = graph_->add_nodes();
    SetCall(node, "call_function", absl::StrCat("operator.", InplaceOperatorName(token)));
    ReadValue(parts[0].substr(0, at), 0, node->add_args());
    ReadValue(parts[0].substr(at + token.size() + 2), 0, node->add_args());
    NameAfter(line, parts, node);
  }

  // `a[i] = v;  setitem = a`.
  void OnSetitem(const Line& line, const std::vector<absl::string_view>& parts, absl::string_view lhs,
                 size_t index, absl::string_view rhs) {
    v1::Node* node = graph_->add_nodes();
    SetCall(node, "call_function", "operator.setitem");
    ReadValue(lhs.substr(0, index), 0, node->add_args());
    ReadValue(lhs.substr(index + 1, lhs.size() - index - 2), 0, node->add_args());
    ReadValue(rhs, 0, node->add_args());
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
    if (IsQuoted(ann) && !ParseMeta(ann.substr(1, ann.size() - 2), node->mutable_meta(), &dims_)) {
      Problem(line.number, "an unreadable annotation", ann);
      node->clear_meta();
    }
    Append(line.number, name, /*with_source=*/true);
  }

  // `return (a, b)`, `return [a]`, `return a`, `return pytree.tree_unflatten([a, b], self._out_spec)`.
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
      ReadValue(value, 0, &returned);
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

  static void SetCall(v1::Node* node, absl::string_view op, absl::string_view target) {
    Assign(node->mutable_op(), op);
    Assign(node->mutable_target(), target);
  }

  // `a, [b, 2], key = 'mean'`: positional values and `key = value` keywords (FX spaces them;
  // `key=value` is read too).
  void ReadCallArgs(absl::string_view text, v1::Node* node) {
    std::vector<absl::string_view>& items = call_items_;
    SplitTopLevel(index_, text, ',', &items);
    if (Strip(items.back()).empty()) items.pop_back();  // `f()` or a trailing comma
    node->mutable_args()->Reserve(node->args_size() + static_cast<int>(items.size()));
    for (absl::string_view item : items) {
      if (const size_t eq = FindAssign(index_, item);
          eq != kNpos && IsIdentifier(Strip(item.substr(0, eq)))) {
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
  // Node name -> index in graph_->nodes; the keys view the nodes' names.
  absl::flat_hash_map<absl::string_view, int> defined_;
  std::optional<v1::SourceLoc> source_;  // of the nodes that follow
  // The statement being read, and scratch lists reused from one statement to the next.
  StatementIndex index_;
  std::vector<absl::string_view> parts_;
  std::vector<absl::string_view> call_items_;
  std::vector<absl::string_view> list_items_[kMaxArgNesting];
  std::vector<absl::string_view> dims_;
};

}  // namespace

FxParseResult ParseFxGraphText(absl::string_view text, v1::Graph* graph) {
  FxParseResult result;
  FxGraphReader(graph, &result).Run(text);
  return result;
}

}  // namespace cl

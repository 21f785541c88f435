// The top-level scans of the FX text parser (fx_graph.h).
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
//
// Header-only, so that the scans inline into the loops of the readers that call them, as they did
// when the parser was one file.
#ifndef CAPTURE_TORCH_TRACE_FX_SCAN_H_
#define CAPTURE_TORCH_TRACE_FX_SCAN_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/string_view.h"
#include "capture/torch_trace/fx_text.h"

namespace cl::fx {

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
        spans_.push_back({static_cast<uint32_t>(i),
                          end == kNpos ? kNever : static_cast<uint32_t>(end),
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
    k = static_cast<size_t>(std::lower_bound(spans_.begin() + k, spans_.end(), at, PosLess) -
                            spans_.begin());
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
      return hit == nullptr ? to
                            : static_cast<size_t>(static_cast<const char*>(hit) - text_.data());
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
    *k = static_cast<size_t>(std::lower_bound(spans_.begin(), spans_.end(), base, PosLess) -
                             spans_.begin());
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
inline constexpr std::array<bool, 256> kBeforeOtherAssign =
    CharSet("=!<>+-*/%&|^@:");  // `==`, `+=`, ...
inline constexpr std::array<bool, 256> kOperatorChars = CharSet("+-*/%<>=!&|^@~");

// The top-level plain `=` of an assignment or keyword argument (not `==`, `<=`, `+=`, ...).
template <typename Scanner>
size_t FindAssign(const Scanner& scan, absl::string_view text) {
  return scan.TopLevel(text, '=', [&](size_t i) {
    if (i + 1 < text.size() && text[i + 1] == '=') return false;
    return i == 0 || !kBeforeOtherAssign[static_cast<uint8_t>(text[i - 1])];
  });
}

inline bool IsOperatorChar(char c) { return kOperatorChars[static_cast<uint8_t>(c)]; }

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

}  // namespace cl::fx

#endif  // CAPTURE_TORCH_TRACE_FX_SCAN_H_

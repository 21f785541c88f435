#include "analyzers/recompile/first_match.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace cl {
namespace {

[[noreturn]] void BadPattern(absl::string_view pattern, absl::string_view error) {
  std::fprintf(stderr, "FirstMatch: pattern /%.*s/ does not compile: %.*s\n",
               static_cast<int>(pattern.size()), pattern.data(), static_cast<int>(error.size()),
               error.data());
  std::abort();
}

}  // namespace

FirstMatch::FirstMatch(const std::vector<Pattern>& patterns)
    : set_(RE2::DefaultOptions, RE2::UNANCHORED),
      size_(static_cast<int>(patterns.size())),
      lazy_(std::make_unique<Lazy[]>(patterns.size())) {
  for (int i = 0; i < size_; ++i) {
    const Pattern& p = lazy_[i].pattern = patterns[i];
    // A whole-text pattern in an unanchored set: anchored at both ends of the text ($ in RE2 is
    // the end of the text, not of a line).
    const std::string in_set = p.whole ? absl::StrCat("^(?:", p.regex, ")$") : p.regex;
    std::string error;
    if (set_.Add(in_set, &error) != i) BadPattern(p.regex, error);
  }
  if (!set_.Compile()) BadPattern("(the set)", "RE2::Set::Compile failed");
}

int FirstMatch::First(absl::string_view text) const {
  const re2::StringPiece piece(text.data(), text.size());
  std::vector<int> matched;
  RE2::Set::ErrorInfo error{RE2::Set::kNoError};
  if (set_.Match(piece, &matched, &error) || error.kind == RE2::Set::kNoError) {
    return matched.empty() ? -1 : *std::min_element(matched.begin(), matched.end());
  }
  // The set's DFA gave up on this text (out of its memory, which RE2 reports for texts that make
  // it build too many states): each pattern alone, in order, up to the first that matches.
  for (int i = 0; i < size_; ++i) {
    const RE2::Anchor anchor = lazy_[i].pattern.whole ? RE2::ANCHOR_BOTH : RE2::UNANCHORED;
    if (Regex(i).Match(piece, 0, piece.size(), anchor, nullptr, 0)) return i;
  }
  return -1;
}

const RE2& FirstMatch::Regex(int i) const {
  Lazy& lazy = lazy_[i];
  absl::call_once(lazy.once, [&] {
    lazy.re = std::make_unique<RE2>(lazy.pattern.regex);
    if (!lazy.re->ok()) BadPattern(lazy.pattern.regex, lazy.re->error());
  });
  return *lazy.re;
}

}  // namespace cl

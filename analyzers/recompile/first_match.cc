#include "analyzers/recompile/first_match.h"

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
      lazy_storage_(std::make_unique<Lazy[]>(patterns.size())) {
  for (size_t i = 0; i < patterns.size(); ++i) {
    Lazy& lazy = lazy_storage_[i];
    lazy.regex = patterns[i].regex;
    lazy.whole = patterns[i].whole;
    lazy_.push_back(&lazy);
    // A whole-text pattern in an unanchored set: anchored at both ends of the text ($ in RE2 is
    // the end of the text, not of a line).
    const std::string in_set =
        patterns[i].whole ? absl::StrCat("^(?:", lazy.regex, ")$") : lazy.regex;
    std::string error;
    if (set_.Add(in_set, &error) != static_cast<int>(i)) BadPattern(lazy.regex, error);
  }
  if (!set_.Compile()) BadPattern("(the set)", "RE2::Set::Compile failed");
}

int FirstMatch::First(absl::string_view text, int from) const {
  const re2::StringPiece piece(text.data(), text.size());
  std::vector<int> matched;
  RE2::Set::ErrorInfo error{RE2::Set::kNoError};
  if (set_.Match(piece, &matched, &error) || error.kind == RE2::Set::kNoError) {
    int first = -1;
    for (const int i : matched) {
      if (i >= from && (first < 0 || i < first)) first = i;
    }
    return first;
  }
  // The set's DFA gave up on this text (out of its memory, which RE2 reports for texts that make
  // it build too many states): each pattern alone, in order, up to the first that matches.
  for (int i = from; i < size(); ++i) {
    const RE2::Anchor anchor = lazy_[i]->whole ? RE2::ANCHOR_BOTH : RE2::UNANCHORED;
    if (Regex(i).Match(piece, 0, piece.size(), anchor, nullptr, 0)) return i;
  }
  return -1;
}

const RE2& FirstMatch::Regex(int i) const {
  Lazy& lazy = *lazy_[i];
  absl::call_once(lazy.once, [&] {
    lazy.re = std::make_unique<RE2>(lazy.regex);
    if (!lazy.re->ok()) BadPattern(lazy.regex, lazy.re->error());
  });
  return *lazy.re;
}

}  // namespace cl

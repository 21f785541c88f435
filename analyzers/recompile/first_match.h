// An ordered table of patterns where the first that matches a text wins (the graph-break
// categories and remedies, the recompile-reason rules), compiled as one RE2::Set.
//
// Built one RE2 at a time, such tables cost a log of a few KB with a graph break about a quarter
// of what its analysis took beyond starting the process: 33 patterns compiled for its first graph
// break (bench/README.md, "Rule tables compiled as one set"). The set is one compile and one pass
// over the text; a pattern's own RE2, for its captures, is compiled the first time it matches.
#ifndef ANALYZERS_RECOMPILE_FIRST_MATCH_H_
#define ANALYZERS_RECOMPILE_FIRST_MATCH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/strings/string_view.h"
#include "re2/re2.h"
#include "re2/set.h"

namespace cl {

class FirstMatch {
 public:
  struct Pattern {
    const char* regex;  // static: the table's own literal
    // Must match the whole text (RE2::ANCHOR_BOTH); else anywhere in it.
    bool whole = false;
  };

  // Patterns that do not compile are a programming error: the process aborts, naming the pattern.
  explicit FirstMatch(const std::vector<Pattern>& patterns);
  FirstMatch(const FirstMatch&) = delete;
  FirstMatch& operator=(const FirstMatch&) = delete;

  // The first pattern, in the table's order, that matches `text`; -1 if none.
  int First(absl::string_view text) const;

  // Pattern `i` alone, for its captures: compiled on first use (thread-safe).
  const RE2& Regex(int i) const;

  int size() const { return size_; }

 private:
  struct Lazy {
    Pattern pattern;
    absl::once_flag once;
    std::unique_ptr<RE2> re;
  };
  RE2::Set set_;
  int size_;
  std::unique_ptr<Lazy[]> lazy_;  // one per pattern, in order
};

}  // namespace cl

#endif  // ANALYZERS_RECOMPILE_FIRST_MATCH_H_

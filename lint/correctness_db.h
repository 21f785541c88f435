// The correctness DB: correctness.toml (schema: docs/correctness-db.md), parsed with toml++ and
// validated as it loads.
//
// Every error names the line: a TOML syntax error, an unknown key, an unknown detect.kind, a bad
// severity, category or scope, a confidence outside 0–1, an id that is not ^[a-z][a-z0-9_]*$ or
// repeats, a bad version specifier, a bad `re:` expression, an issue URL that is not http(s), and
// an error-severity pattern (or escalation rule) without an issue link. Patterns whose id is a
// built-in one start from the built-in parameters, message and remedy and override what the DB
// sets; new ids define patterns of their own on a built-in detector kind.
#ifndef LINT_CORRECTNESS_DB_H_
#define LINT_CORRECTNESS_DB_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lint/pattern.h"

namespace cl::lint {

class CorrectnessDb {
 public:
  // INVALID_ARGUMENT "correctness DB line N: ..." when `text` is not a valid DB.
  static absl::StatusOr<CorrectnessDb> Parse(absl::string_view text);

  int schema_version() const { return schema_version_; }
  const std::string& updated() const { return updated_; }
  // The DB's patterns, rated, in file order.
  const std::vector<PatternSpec>& patterns() const { return patterns_; }
  const PatternSpec* Find(absl::string_view id) const;

 private:
  friend class DbLoader;
  int schema_version_ = 0;
  std::string updated_;
  std::vector<PatternSpec> patterns_;
};

}  // namespace cl::lint

#endif  // LINT_CORRECTNESS_DB_H_

// torch version strings and PEP 440 specifiers, as far as version gating needs them.
//
// "2.6.0+debian", "2.5.0a0+git1234", "2.7.0.dev20250101", "2.4" parse; the local part (+...) is
// ignored and a pre-release (a/b/rc/dev) sorts before its release. Specifiers are comma-joined
// clauses with >=, <=, >, <, ==, != and ~=; `==2.1.*` matches the 2.1 series.
#ifndef LINT_TORCH_VERSION_H_
#define LINT_TORCH_VERSION_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cl::lint {

struct TorchVersion {
  std::vector<int> release;  // 2.6.0 → {2, 6, 0}
  bool pre = false;          // a/b/rc/dev

  static std::optional<TorchVersion> Parse(absl::string_view text);
};

// <0, 0, >0 like strcmp; missing release components count as 0.
int Compare(const TorchVersion& a, const TorchVersion& b);

class VersionSpecifier {
 public:
  // nullopt and `error` set when `text` is not a specifier.
  static std::optional<VersionSpecifier> Parse(absl::string_view text, std::string* error);
  bool Contains(const TorchVersion& v) const;

 private:
  struct Clause {
    std::string op;
    TorchVersion version;
    bool wildcard = false;  // ==2.1.* / !=2.1.*
  };
  std::vector<Clause> clauses_;
};

}  // namespace cl::lint

#endif  // LINT_TORCH_VERSION_H_

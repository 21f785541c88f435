// A lint pattern: an id, the built-in matcher (detector kind) that finds it, the matcher's
// parameters, and — when a correctness DB rates it — severity, remedy, versions and issue links.
//
// The built-in catalogue (catalogue.cc) gives every pattern the issue asks for with default
// parameters and no severity; a correctness DB (correctness_db.cc) overrides parameters, rates
// them, and may add patterns of its own that reuse a built-in kind.
#ifndef LINT_PATTERN_H_
#define LINT_PATTERN_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "re2/re2.h"

namespace cl::lint {

enum class DetectorKind {
  kInplaceOnAlias,
  kSubscriptAssignOverlap,
  kDataAttr,
  kStorageChangeOnView,
  kCustomOpMutation,
  kDataDependentControl,
  kSideEffect,
  kCallInRegion,
  kDecoratedInRegion,
  kGradMode,
  kModuleAttr,
  kGlobalRebind,
  kScalarArgs,
  kHookAfterCompile,
};

// The `detect.kind` spelling of each kind, and back.
absl::string_view DetectorKindName(DetectorKind kind);
std::optional<DetectorKind> ParseDetectorKind(absl::string_view name);
std::vector<std::string> DetectorKindNames();

enum class Scope { kCompiledRegion, kAnywhere, kOutsideCompiledRegion };
std::optional<Scope> ParseScope(absl::string_view name);

// Ordered: a greater severity is the more serious. kNone: not rated.
enum class Severity { kNone, kInfo, kWarning, kError };
std::optional<Severity> ParseSeverity(absl::string_view name);
// One step down (error → warning → info); info and none stay.
Severity Lower(Severity s);

// Names to match: exact strings, and `re:` regular expressions (RE2, partial match).
class NameMatcher {
 public:
  NameMatcher() = default;
  NameMatcher(std::initializer_list<const char*> names);
  // An error names the bad expression.
  static std::optional<NameMatcher> Parse(const std::vector<std::string>& names,
                                          std::string* error);

  bool Matches(absl::string_view name) const;
  bool empty() const { return exact_.empty() && regexes_.empty(); }

 private:
  bool Add(absl::string_view name, std::string* error);
  absl::flat_hash_set<std::string> exact_;
  std::vector<std::shared_ptr<const RE2>> regexes_;
};

struct DetectorParams {
  NameMatcher method_names;
  NameMatcher function_names;
  NameMatcher attr_names;
  NameMatcher view_producers;     // empty: the built-in list
  NameMatcher overlap_producers;  // empty: the built-in list
  NameMatcher exclude_methods;
  NameMatcher exclude_functions;
  bool require_tensor = false;
};

// `escalate_if`: a condition on the finding and the severity it gets when the condition holds.
struct SeverityRule {
  NameMatcher producer_in;  // the view op or callee that matched
  NameMatcher form_in;      // the detector's sub-form ("assign", "read", "global_container", ...)
  std::optional<bool> in_loop;
  std::string torch;  // a version specifier the captured torch must satisfy (">=2.1,<2.4")
  Severity severity = Severity::kNone;
};

struct IssueLink {
  std::string url;
  std::string status;
  std::string summary;
};

struct PatternSpec {
  std::string id;
  DetectorKind kind = DetectorKind::kCallInRegion;
  Scope scope = Scope::kCompiledRegion;
  DetectorParams params;
  std::string message;  // with {name}, {base}, {op} placeholders
  std::string remedy;   // the built-in remedy; a DB's replaces it
  double confidence = 0.5;

  // From a correctness DB (empty / kNone without one).
  bool rated = false;
  std::string title;
  std::string category;
  Severity severity = Severity::kNone;
  std::vector<SeverityRule> rules;
  std::string affected_versions;
  std::string fixed_in;
  std::vector<IssueLink> issues;
};

}  // namespace cl::lint

#endif  // LINT_PATTERN_H_

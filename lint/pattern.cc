#include "lint/pattern.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cl::lint {
namespace {

constexpr std::pair<DetectorKind, absl::string_view> kKinds[] = {
    {DetectorKind::kInplaceOnAlias, "inplace_on_alias"},
    {DetectorKind::kSubscriptAssignOverlap, "subscript_assign_overlap"},
    {DetectorKind::kDataAttr, "data_attr"},
    {DetectorKind::kStorageChangeOnView, "storage_change_on_view"},
    {DetectorKind::kCustomOpMutation, "custom_op_mutation"},
    {DetectorKind::kDataDependentControl, "data_dependent_control"},
    {DetectorKind::kSideEffect, "side_effect"},
    {DetectorKind::kCallInRegion, "call_in_region"},
    {DetectorKind::kDecoratedInRegion, "decorated_in_region"},
    {DetectorKind::kGradMode, "grad_mode"},
    {DetectorKind::kModuleAttr, "module_attr"},
    {DetectorKind::kGlobalRebind, "global_rebind"},
    {DetectorKind::kScalarArgs, "scalar_args"},
    {DetectorKind::kHookAfterCompile, "hook_after_compile"},
};

}  // namespace

absl::string_view DetectorKindName(DetectorKind kind) {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return name;
  }
  return "";
}

std::optional<DetectorKind> ParseDetectorKind(absl::string_view name) {
  for (const auto& [k, n] : kKinds) {
    if (n == name) return k;
  }
  return std::nullopt;
}

std::vector<std::string> DetectorKindNames() {
  std::vector<std::string> out;
  for (const auto& [k, name] : kKinds) out.emplace_back(name);
  return out;
}

std::optional<Scope> ParseScope(absl::string_view name) {
  if (name == "compiled_region") return Scope::kCompiledRegion;
  if (name == "anywhere") return Scope::kAnywhere;
  if (name == "outside_compiled_region") return Scope::kOutsideCompiledRegion;
  return std::nullopt;
}

std::optional<Severity> ParseSeverity(absl::string_view name) {
  if (name == "error") return Severity::kError;
  if (name == "warning") return Severity::kWarning;
  if (name == "info") return Severity::kInfo;
  return std::nullopt;
}

Severity Lower(Severity s) {
  switch (s) {
    case Severity::kError:
      return Severity::kWarning;
    case Severity::kWarning:
      return Severity::kInfo;
    default:
      return s;
  }
}

NameMatcher::NameMatcher(std::initializer_list<const char*> names) {
  std::string error;
  for (const char* n : names) Add(n, &error);  // built-in lists are valid by construction
}

bool NameMatcher::Add(absl::string_view name, std::string* error) {
  if (absl::ConsumePrefix(&name, "re:")) {
    auto re = std::make_shared<const RE2>(re2::StringPiece(name.data(), name.size()), RE2::Quiet);
    if (!re->ok()) {
      *error = absl::StrCat("bad regular expression \"", name, "\": ", re->error());
      return false;
    }
    regexes_.push_back(std::move(re));
    return true;
  }
  exact_.emplace(name);
  return true;
}

std::optional<NameMatcher> NameMatcher::Parse(const std::vector<std::string>& names,
                                              std::string* error) {
  NameMatcher m;
  for (const std::string& n : names) {
    if (!m.Add(n, error)) return std::nullopt;
  }
  return m;
}

bool NameMatcher::Matches(absl::string_view name) const {
  if (exact_.contains(name)) return true;
  for (const auto& re : regexes_) {
    if (RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *re)) return true;
  }
  return false;
}

}  // namespace cl::lint

#include "capture/schema.h"

#include <cctype>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cl {
namespace {

// "0.5." for 0.5.0: what every version this build reads starts with.
absl::string_view MinorPrefix() {
  const std::string& version = SchemaVersion();
  return absl::string_view(version).substr(0, version.rfind('.') + 1);
}

}  // namespace

absl::Status CheckSchema(absl::string_view version) {
  const std::string accepted = absl::StrCat(MinorPrefix(), "x");
  if (version.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema: missing; this build reads schema ", accepted));
  }
  // The minor prefix followed by a non-empty run of digits.
  absl::string_view patch = version;
  bool ok = absl::ConsumePrefix(&patch, MinorPrefix()) && !patch.empty();
  for (char c : patch) ok = ok && std::isdigit(static_cast<unsigned char>(c));
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat("schema: \"", absl::CHexEscape(version),
                                                   "\" is not supported; this build reads schema ",
                                                   accepted, " (writes ", SchemaVersion(), ")"));
  }
  return absl::OkStatus();
}

}  // namespace cl

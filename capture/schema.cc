#include "capture/schema.h"

#include <cctype>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"

namespace cl {

absl::Status CheckSchema(absl::string_view version) {
  if (version.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema: missing; this build reads schema ", kSchemaAccepted));
  }
  // "0.5." followed by a non-empty run of digits.
  absl::string_view patch = version;
  bool ok = absl::ConsumePrefix(&patch, "0.5.") && !patch.empty();
  for (char c : patch) ok = ok && std::isdigit(static_cast<unsigned char>(c));
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat("schema: \"", absl::CHexEscape(version),
                                                   "\" is not supported; this build reads schema ",
                                                   kSchemaAccepted, " (writes ", kSchemaVersion, ")"));
  }
  return absl::OkStatus();
}

}  // namespace cl

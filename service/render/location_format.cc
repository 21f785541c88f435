#include "service/render/location_format.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace cl {
namespace {

bool IsAbsolute(absl::string_view file) {
  if (file.empty()) return false;
  if (file[0] == '/' || file[0] == '\\') return true;
  // A Windows drive path ("C:\x.py", "C:/x.py") from a capture taken on Windows.
  return file.size() > 2 && absl::ascii_isalpha(file[0]) && file[1] == ':' &&
         (file[2] == '\\' || file[2] == '/');
}

std::string Lines(const v1::Location& location) {
  const uint32_t start = location.line_start();
  const uint32_t end = location.line_end();
  if (start != 0 && end > start) return absl::StrCat(":", start, "-", end);
  if (start != 0) return absl::StrCat(":", start);
  if (location.line() != 0) return absl::StrCat(":", location.line());
  return "";
}

}  // namespace

std::string FormatLocation(const v1::Location& location, LocationStyle style) {
  const std::string& file = location.file();
  const std::string lines = Lines(location);
  if (file.empty() && lines.empty()) return "—";
  if (file.empty() || IsAbsolute(file) || style == LocationStyle::kTerminal) {
    return absl::StrCat(file, lines);
  }
  return absl::StrCat("{repo}/", file, lines);
}

bool HasLocation(const v1::Location& location) {
  return !location.file().empty() || location.line() != 0 || location.line_start() != 0;
}

}  // namespace cl

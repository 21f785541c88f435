#include "client/command_line.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace cl {
namespace {

constexpr std::array<absl::string_view, 3> kListFlags = {"label", "path_map", "passes"};

void NormalizeName(std::string& arg) {
  if (!absl::StartsWith(arg, "--")) return;
  const size_t end = std::min(arg.find('='), arg.size());
  std::replace(arg.begin() + 2, arg.begin() + static_cast<std::ptrdiff_t>(end), '-', '_');
  if (absl::StartsWith(arg, "--no_"))
    arg.erase(4, 1);  // --no_sources -> --nosources (absl's bool negation)
}

}  // namespace

std::vector<std::string> NormalizeCommandLine(std::vector<std::string> args) {
  std::vector<std::string> out;
  std::array<std::vector<std::string>, kListFlags.size()> items;
  std::array<bool, kListFlags.size()> seen{};
  size_t i = 0;
  if (!args.empty()) out.push_back(std::move(args[i++]));
  for (; i < args.size(); ++i) {
    std::string& arg = args[i];
    if (arg == "--") break;
    NormalizeName(arg);
    bool listed = false;
    for (size_t f = 0; f < kListFlags.size() && !listed; ++f) {
      const std::string name = "--" + std::string(kListFlags[f]);
      std::string value;
      if (arg == name && i + 1 < args.size()) {
        value = std::move(args[++i]);
      } else if (absl::StartsWith(arg, name + "=")) {
        value = arg.substr(name.size() + 1);
      } else {
        continue;
      }
      listed = seen[f] = true;
      if (!value.empty()) items[f].push_back(std::move(value));
    }
    if (!listed) out.push_back(std::move(arg));
  }
  for (size_t f = 0; f < kListFlags.size(); ++f) {
    if (seen[f])
      out.push_back(absl::StrCat("--", kListFlags[f], "=", absl::StrJoin(items[f], ",")));
  }
  for (; i < args.size(); ++i) out.push_back(std::move(args[i]));  // `--` and what follows it
  return out;
}

}  // namespace cl

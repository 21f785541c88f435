#include "client/command_line.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace cl {
namespace {

constexpr std::array<absl::string_view, 5> kListFlags = {"label", "path_map", "passes", "fail_on",
                                                         "max_regression"};

void NormalizeName(std::string& arg) {
  if (!absl::StartsWith(arg, "--")) return;
  const size_t end = std::min(arg.find('='), arg.size());
  std::replace(arg.begin() + 2, arg.begin() + static_cast<std::ptrdiff_t>(end), '-', '_');
  // --no_sources -> --nosources (absl's bool negation), unless the flag's own name starts with
  // "no_" (--no-new-graph-breaks).
  const absl::string_view name = absl::string_view(arg).substr(2, end - 2);
  if (absl::StartsWith(name, "no_") && absl::FindCommandLineFlag(name) == nullptr) arg.erase(4, 1);
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

// Edit distance with a swap of two neighbours as one edit (optimal string alignment): "htlm" is
// one edit from "html".
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::string ClosestName(absl::string_view name, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(1, name.size() / 3);
  size_t best = limit + 1;
  std::string closest;
  bool tied = false;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(name, c);
    if (d < best) {
      best = d;
      closest = c;
      tied = false;
    } else if (d == best) {
      tied = true;
    }
  }
  return tied ? "" : closest;
}

namespace {

std::vector<std::string> AcceptedNames(absl::FunctionRef<bool(absl::string_view)> accept) {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (accept(name)) names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// What a flag's value must look like, for the message when it does not.
std::string WhatItTakes(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<absl::Duration>()) return "a duration such as 30s, 2m or 1h30m";
  if (flag.IsOfType<int>() || flag.IsOfType<int64_t>()) return "an integer";
  if (flag.IsOfType<bool>()) return "true or false";
  if (flag.IsOfType<double>()) return "a number";
  return "see cl-client help";
}

absl::Status UnknownFlag(absl::string_view written, absl::string_view name,
                         absl::FunctionRef<bool(absl::string_view)> accept) {
  std::string message = absl::StrCat("unknown flag ", written);
  if (const std::string close = ClosestName(name, AcceptedNames(accept)); !close.empty())
    absl::StrAppend(&message, "; did you mean --", close, "?");
  return absl::InvalidArgumentError(message);
}

}  // namespace

absl::StatusOr<ParsedCommandLine> ParseFlags(const std::vector<std::string>& args,
                                             absl::FunctionRef<bool(absl::string_view)> accept) {
  ParsedCommandLine out;
  size_t i = args.empty() ? 0 : 1;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      out.after_dashes = out.positional.size();
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      out.positional.push_back(arg);
      continue;
    }
    absl::string_view body = absl::StripPrefix(absl::StripPrefix(arg, "-"), "-");
    const size_t eq = body.find('=');
    const absl::string_view name = body.substr(0, eq);
    if (name == "h" || name == "help") {
      out.help = true;
      continue;
    }
    if (name == "version") {
      out.version = true;
      continue;
    }
    absl::CommandLineFlag* flag = accept(name) ? absl::FindCommandLineFlag(name) : nullptr;
    std::string value;
    if (flag == nullptr && eq == absl::string_view::npos && absl::StartsWith(name, "no")) {
      // --nosources: a bool flag set false.
      absl::CommandLineFlag* negated =
          accept(name.substr(2)) ? absl::FindCommandLineFlag(name.substr(2)) : nullptr;
      if (negated != nullptr && negated->IsOfType<bool>()) {
        flag = negated;
        value = "false";
      }
    }
    if (flag == nullptr) return UnknownFlag(arg.substr(0, arg.find('=')), name, accept);
    const std::string shown = absl::StrCat("--", flag->Name());
    if (value.empty()) {
      if (eq != absl::string_view::npos) {
        value = std::string(body.substr(eq + 1));
      } else if (flag->IsOfType<bool>()) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat(shown, " needs a value"));
      }
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat(shown, ": \"", value, "\" is not a valid value (", WhatItTakes(*flag), ")"));
    }
    out.flags.emplace_back(flag->Name());
  }
  for (; i < args.size(); ++i) out.positional.push_back(args[i]);
  return out;
}

}  // namespace cl

#include "lint/torch_version.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cl::lint {

std::optional<TorchVersion> TorchVersion::Parse(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  absl::ConsumePrefix(&text, "v");
  if (const size_t plus = text.find('+'); plus != absl::string_view::npos)
    text = text.substr(0, plus);
  TorchVersion v;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i) break;
    int n = 0;
    if (!absl::SimpleAtoi(text.substr(i, j - i), &n)) return std::nullopt;
    v.release.push_back(n);
    i = j;
    if (i < text.size() && text[i] == '.' && i + 1 < text.size() &&
        absl::ascii_isdigit(static_cast<unsigned char>(text[i + 1]))) {
      ++i;
      continue;
    }
    break;
  }
  if (v.release.empty()) return std::nullopt;
  absl::string_view rest = text.substr(i);
  absl::ConsumePrefix(&rest, ".");
  if (!rest.empty()) {
    const std::string lower = absl::AsciiStrToLower(rest);
    if (absl::StartsWith(lower, "a") || absl::StartsWith(lower, "b") ||
        absl::StartsWith(lower, "rc") || absl::StartsWith(lower, "dev") ||
        absl::StartsWith(lower, "alpha") || absl::StartsWith(lower, "beta")) {
      v.pre = true;
    } else if (!absl::StartsWith(lower, "post")) {
      return std::nullopt;
    }
  }
  return v;
}

int Compare(const TorchVersion& a, const TorchVersion& b) {
  const size_t n = std::max(a.release.size(), b.release.size());
  for (size_t i = 0; i < n; ++i) {
    const int x = i < a.release.size() ? a.release[i] : 0;
    const int y = i < b.release.size() ? b.release[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  if (a.pre != b.pre) return a.pre ? -1 : 1;
  return 0;
}

std::optional<VersionSpecifier> VersionSpecifier::Parse(absl::string_view text,
                                                        std::string* error) {
  VersionSpecifier spec;
  for (absl::string_view clause : absl::StrSplit(text, ',')) {
    clause = absl::StripAsciiWhitespace(clause);
    if (clause.empty()) continue;
    Clause c;
    for (absl::string_view op : {">=", "<=", "==", "!=", "~=", ">", "<"}) {
      if (absl::ConsumePrefix(&clause, op)) {
        c.op = std::string(op);
        break;
      }
    }
    if (c.op.empty()) {
      *error =
          absl::StrCat("\"", text, "\" is not a version specifier (a clause lacks >=, <, ==, ...)");
      return std::nullopt;
    }
    clause = absl::StripAsciiWhitespace(clause);
    if (absl::ConsumeSuffix(&clause, ".*")) {
      if (c.op != "==" && c.op != "!=") {
        *error = absl::StrCat("\"", text, "\": a .* version goes only with == or !=");
        return std::nullopt;
      }
      c.wildcard = true;
    }
    std::optional<TorchVersion> v = TorchVersion::Parse(clause);
    if (!v) {
      *error = absl::StrCat("\"", text, "\": \"", clause, "\" is not a version");
      return std::nullopt;
    }
    c.version = std::move(*v);
    spec.clauses_.push_back(std::move(c));
  }
  if (spec.clauses_.empty()) {
    *error = absl::StrCat("\"", text, "\" is an empty version specifier");
    return std::nullopt;
  }
  return spec;
}

bool VersionSpecifier::Contains(const TorchVersion& v) const {
  for (const Clause& c : clauses_) {
    if (c.wildcard) {
      bool prefix =
          v.release.size() >= c.version.release.size() &&
          std::equal(c.version.release.begin(), c.version.release.end(), v.release.begin());
      if ((c.op == "==") != prefix) return false;
      continue;
    }
    const int cmp = Compare(v, c.version);
    bool ok = true;
    if (c.op == ">=") ok = cmp >= 0;
    if (c.op == "<=") ok = cmp <= 0;
    if (c.op == ">") ok = cmp > 0;
    if (c.op == "<") ok = cmp < 0;
    if (c.op == "==") ok = cmp == 0;
    if (c.op == "!=") ok = cmp != 0;
    if (c.op == "~=") {
      // ~=2.1.3 means >=2.1.3, ==2.1.*
      TorchVersion upper = c.version;
      if (upper.release.size() > 1) upper.release.pop_back();
      ok = cmp >= 0 &&
           std::equal(upper.release.begin(), upper.release.end(), v.release.begin(),
                      v.release.begin() + std::min(v.release.size(), upper.release.size())) &&
           v.release.size() >= upper.release.size();
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace cl::lint

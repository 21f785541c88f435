#include "common/number_format.h"

#include <cmath>
#include <cstdlib>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cl {
namespace {

// "nan", "inf", "-inf"; empty for a finite value.
std::string NonFinite(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return "";
}

// "264" for a whole value, else one decimal: "1.5".
std::string WholeOrOneDecimal(double value) {
  const std::string one = absl::StrFormat("%.1f", value);
  return absl::EndsWith(one, ".0") ? one.substr(0, one.size() - 2) : one;
}

}  // namespace

std::string FormatPercent(double fraction) {
  if (std::string s = NonFinite(fraction); !s.empty()) return s;
  long percent = std::lround(fraction * 100);
  // A coverage of 99.7% shown as 100% would hide the node that did not match.
  if (percent >= 100 && fraction < 1) percent = 99;
  if (percent == 0 && fraction > 0) return "<1%";
  return absl::StrCat(percent, "%");
}

std::string FormatFixed(double value, int decimals) {
  if (std::string s = NonFinite(value); !s.empty()) return s;
  return absl::StrFormat("%.*f", decimals, value);
}

std::string FormatScientific(double value) {
  if (std::string s = NonFinite(value); !s.empty()) return s;
  // printf gives "5.033e+00"; the report writes "5.033e0" (and "1.234e-3").
  const std::string c_style = absl::StrFormat("%.3e", value);
  const size_t e = c_style.find('e');
  int exponent = 0;
  if (e == std::string::npos || !absl::SimpleAtoi(c_style.substr(e + 1), &exponent)) {
    return c_style;  // not reached with %e; keeps the value readable if a libc differs
  }
  return absl::StrCat(c_style.substr(0, e), "e", exponent);
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  // Move up while the value, as printed, would reach 1024.
  while (value >= 1023.95 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return absl::StrCat(WholeOrOneDecimal(value), " ", kUnits[unit]);
}

std::string FormatSi(double value, absl::string_view unit) {
  if (std::string s = NonFinite(value); !s.empty()) return absl::StrCat(s, " ", unit);
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  double scaled = value;
  size_t prefix = 0;
  while (std::abs(scaled) >= 999.5 && prefix + 1 < std::size(kPrefixes)) {
    scaled /= 1000;
    ++prefix;
  }
  return absl::StrCat(absl::StrFormat("%.3g", scaled), " ", kPrefixes[prefix], unit);
}

std::string FormatCount(uint64_t n, absl::string_view one, absl::string_view many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

}  // namespace cl

// How numbers read in the report, in HTML and text alike and in the passes' evidence strings. The
// formats are the seed's (seed/hero.html), so a report always reads the same whatever produced it:
//   FormatPercent(1.0)        "100%"     integer percent; never rounds up to 100% or down to 0%
//                                        when the value is not exactly 1 or 0 ("99%", "<1%")
//   FormatFixed(1.0, 2)       "1.00"     confidences, speedup bounds
//   FormatScientific(5.033)   "5.033e0"  4 significant digits, exponent without '+' or zeros
//   FormatBytes(270336)       "264 KiB"  binary units; one decimal only when not whole
//   FormatSi(3.1e12, "FLOP")  "3.1 TFLOP" 3 significant digits with an SI prefix
//   FormatCount(3, "compile", "compiles")  "3 compiles"  the noun that agrees with the count
//   Noun(1, "compile", "compiles")         "compile"     the noun alone, for a count set apart
// Non-finite values read "nan", "inf" or "-inf" everywhere.
#ifndef COMMON_NUMBER_FORMAT_H_
#define COMMON_NUMBER_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace cl {

std::string FormatPercent(double fraction);
std::string FormatFixed(double value, int decimals);
std::string FormatScientific(double value);
std::string FormatBytes(uint64_t bytes);
std::string FormatSi(double value, absl::string_view unit);
std::string FormatCount(uint64_t n, absl::string_view one, absl::string_view many);
inline absl::string_view Noun(uint64_t n, absl::string_view one, absl::string_view many) {
  return n == 1 ? one : many;
}

}  // namespace cl

#endif  // COMMON_NUMBER_FORMAT_H_

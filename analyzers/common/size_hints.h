// Symbolic sizes at torch's size hints. Under mark_dynamic or dynamic=True the post-grad graphs'
// shapes hold symbols ("s0", "16*s0"); torch logged, for each symbol it created, the value the
// size had then (create_symbol's `val`, Symbol.hint in the capture). The fusion and roofline
// passes evaluate sizes there, and say so, rather than compute a figure as if a symbol were 0.
#ifndef ANALYZERS_COMMON_SIZE_HINTS_H_
#define ANALYZERS_COMMON_SIZE_HINTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

class SizeHints {
 public:
  SizeHints() = default;
  // The hints of the symbols `compile` created (an unbacked symbol has none).
  explicit SizeHints(const v1::Compile& compile);

  void Set(absl::string_view symbol, int64_t hint) { hints_[std::string(symbol)] = hint; }

  // The value of a size as FX prints it ("64", "s0", "16*s0", "s0 + 1", "((u1//3))+5",
  // "Max(1, s0)": integers, symbols, + - * // % **, parentheses, Max, Min, Mod, FloorDiv), each
  // symbol at its hint. Nullopt for a symbol with no hint, any other spelling, an overflow, or a
  // division by zero. Each symbol read is added to `used`, when given, with its hint.
  std::optional<int64_t> Evaluate(absl::string_view size,
                                  std::map<std::string, int64_t>* used = nullptr) const;

 private:
  absl::flat_hash_map<std::string, int64_t> hints_;
};

// Each compile's SizeHints, indexed once per capture (a graph names its compile by id).
class SizeHintsByCompile {
 public:
  explicit SizeHintsByCompile(const v1::SessionCapture& capture);
  // The hints of compile `compile_id`; none for a compile that created no symbol.
  const SizeHints& For(absl::string_view compile_id) const;

 private:
  absl::flat_hash_map<std::string, SizeHints> by_id_;  // only compiles with symbols
  SizeHints none_;
};

// "s0 = 4, s1 = 16": the symbols of `used`, by name.
std::string FormatSizeHints(const std::map<std::string, int64_t>& used);

}  // namespace cl

#endif  // ANALYZERS_COMMON_SIZE_HINTS_H_

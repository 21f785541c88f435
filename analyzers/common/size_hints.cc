#include "analyzers/common/size_hints.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cl {
namespace {

// Sizes come from untrusted captures: nesting deeper than this is refused, not recursed into.
constexpr int kMaxDepth = 32;

// Python's floor division and modulo (the result takes the divisor's sign).
std::optional<int64_t> FloorDiv(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::optional<int64_t> FloorMod(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// A recursive-descent reader of the size grammar, one expression per instance:
//   sum     := product (("+" | "-") product)*
//   product := unary (("*" | "//" | "%") unary)*
//   unary   := "-" unary | power
//   power   := atom ("**" unary)?
//   atom    := integer | symbol | function "(" sum ("," sum)* ")" | "(" sum ")"
class Reader {
 public:
  Reader(absl::string_view text, const absl::flat_hash_map<std::string, int64_t>& hints,
         std::map<std::string, int64_t>* used)
      : text_(text), hints_(hints), used_(used) {}

  std::optional<int64_t> Read() {
    std::optional<int64_t> value = Sum(0);
    SkipSpace();
    if (pos_ != text_.size()) return std::nullopt;
    return value;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Take(absl::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  std::optional<int64_t> Sum(int depth) {
    std::optional<int64_t> value = Product(depth);
    while (value) {
      int64_t rhs = 0;
      if (Take("+")) {
        std::optional<int64_t> r = Product(depth);
        if (!r || __builtin_add_overflow(*value, *r, &rhs)) return std::nullopt;
      } else if (Take("-")) {
        std::optional<int64_t> r = Product(depth);
        if (!r || __builtin_sub_overflow(*value, *r, &rhs)) return std::nullopt;
      } else {
        break;
      }
      value = rhs;
    }
    return value;
  }

  std::optional<int64_t> Product(int depth) {
    std::optional<int64_t> value = Unary(depth);
    while (value) {
      if (Peek() == '*' && text_.substr(pos_, 2) != "**") {
        ++pos_;
        std::optional<int64_t> r = Unary(depth);
        int64_t product = 0;
        if (!r || __builtin_mul_overflow(*value, *r, &product)) return std::nullopt;
        value = product;
      } else if (Take("//")) {
        std::optional<int64_t> r = Unary(depth);
        value = r ? FloorDiv(*value, *r) : std::nullopt;
      } else if (Take("%")) {
        std::optional<int64_t> r = Unary(depth);
        value = r ? FloorMod(*value, *r) : std::nullopt;
      } else {
        break;
      }
    }
    return value;
  }

  std::optional<int64_t> Unary(int depth) {
    if (++depth > kMaxDepth) return std::nullopt;
    if (Take("-")) {
      std::optional<int64_t> v = Unary(depth);
      if (!v || *v == INT64_MIN) return std::nullopt;
      return -*v;
    }
    std::optional<int64_t> base = Atom(depth);
    if (!base || !Take("**")) return base;
    std::optional<int64_t> exponent = Unary(depth);
    if (!exponent || *exponent < 0) return std::nullopt;
    if (*base == 0 || *base == 1) return *exponent == 0 ? 1 : *base;
    if (*base == -1) return *exponent % 2 == 0 ? 1 : -1;
    int64_t result = 1;  // |base| >= 2 overflows within 63 steps
    for (int64_t i = 0; i < *exponent; ++i) {
      if (__builtin_mul_overflow(result, *base, &result)) return std::nullopt;
    }
    return result;
  }

  std::optional<int64_t> Atom(int depth) {
    const char c = Peek();
    if (c == '(') {
      ++pos_;
      std::optional<int64_t> v = Sum(depth);
      return v && Take(")") ? v : std::nullopt;
    }
    const size_t start = pos_;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      int64_t v = 0;
      if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), &v)) return std::nullopt;
      return v;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') return std::nullopt;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    const absl::string_view name = text_.substr(start, pos_ - start);
    if (Peek() == '(') return Call(name, depth);
    auto it = hints_.find(name);
    if (it == hints_.end()) return std::nullopt;
    if (used_ != nullptr) used_->emplace(it->first, it->second);
    return it->second;
  }

  // Max(a, b, ...), Min(...), Mod(a, b), FloorDiv(a, b): sympy's spellings in FX's sizes.
  std::optional<int64_t> Call(absl::string_view name, int depth) {
    if (name != "Max" && name != "Min" && name != "Mod" && name != "FloorDiv") return std::nullopt;
    ++pos_;  // "("
    std::optional<int64_t> first = Sum(depth);
    std::optional<int64_t> result = first;
    int args = 1;
    while (result && Take(",")) {
      std::optional<int64_t> next = Sum(depth);
      if (!next) return std::nullopt;
      ++args;
      if (name == "Max") result = std::max(*result, *next);
      if (name == "Min") result = std::min(*result, *next);
      if (name == "Mod") result = args == 2 ? FloorMod(*result, *next) : std::nullopt;
      if (name == "FloorDiv") result = args == 2 ? FloorDiv(*result, *next) : std::nullopt;
    }
    if (!result || !Take(")")) return std::nullopt;
    if ((name == "Mod" || name == "FloorDiv") && args != 2) return std::nullopt;
    return result;
  }

  absl::string_view text_;
  size_t pos_ = 0;
  const absl::flat_hash_map<std::string, int64_t>& hints_;
  std::map<std::string, int64_t>* used_;
};

}  // namespace

SizeHints::SizeHints(const v1::Compile& compile) {
  for (const v1::Symbol& symbol : compile.symbols()) {
    int64_t hint = 0;
    if (!symbol.unbacked() && absl::SimpleAtoi(symbol.hint(), &hint)) Set(symbol.name(), hint);
  }
}

SizeHintsByCompile::SizeHintsByCompile(const v1::SessionCapture& capture) {
  for (const v1::Compile& compile : capture.compiles()) {
    if (!compile.symbols().empty()) by_id_.try_emplace(compile.id(), compile);
  }
}

const SizeHints& SizeHintsByCompile::For(absl::string_view compile_id) const {
  auto it = by_id_.find(compile_id);
  return it == by_id_.end() ? none_ : it->second;
}

std::optional<int64_t> SizeHints::Evaluate(absl::string_view size,
                                           std::map<std::string, int64_t>* used) const {
  int64_t value = 0;
  if (absl::SimpleAtoi(size, &value)) return value;  // the common case: a number
  if (hints_.empty()) return std::nullopt;
  std::map<std::string, int64_t> read;
  std::optional<int64_t> result = Reader(size, hints_, &read).Read();
  if (result && used != nullptr) used->insert(read.begin(), read.end());
  return result;
}

std::string FormatSizeHints(const std::map<std::string, int64_t>& used) {
  return absl::StrJoin(used, ", ", [](std::string* out, const auto& entry) {
    absl::StrAppend(out, entry.first, " = ", entry.second);
  });
}

}  // namespace cl

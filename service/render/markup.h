// Markup: a piece of HTML that is trusted because it is a string literal in this program's own
// source (or a constant generated from one of its files at build time, like the style sheet).
// Its constructor is consteval and takes only a character array constant, so a run-time string,
// which is where capture data lives, cannot become a Markup: it does not compile.
#ifndef SERVICE_RENDER_MARKUP_H_
#define SERVICE_RENDER_MARKUP_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace cl {

class Markup {
 public:
  template <std::size_t N>
  consteval Markup(const char (&literal)[N])  // NOLINT(google-explicit-constructor): literals
      : text_(literal, N - 1) {}

  constexpr absl::string_view view() const { return text_; }

 private:
  absl::string_view text_;
};

}  // namespace cl

#endif  // SERVICE_RENDER_MARKUP_H_

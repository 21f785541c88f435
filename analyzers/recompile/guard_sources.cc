#include "analyzers/recompile/guard_sources.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "capture/guarded_sources.h"

namespace cl {
namespace {

// Reads a subscript "['k']", "[\"k\"]" or "[0]" at the start of `s`: its key, and consumes it.
bool ConsumeSubscript(absl::string_view* s, std::string* key) {
  if (s->empty() || s->front() != '[') return false;
  if (s->size() >= 2 && ((*s)[1] == '\'' || (*s)[1] == '"')) {
    const char quote = (*s)[1];
    const size_t close = s->find(quote, 2);
    if (close == absl::string_view::npos || close + 1 >= s->size() || (*s)[close + 1] != ']')
      return false;
    *key = std::string(s->substr(2, close - 2));
    s->remove_prefix(close + 2);
    return true;
  }
  size_t i = 1;
  while (i < s->size() && absl::ascii_isdigit(static_cast<unsigned char>((*s)[i]))) ++i;
  if (i == 1 || i >= s->size() || (*s)[i] != ']') return false;
  *key = std::string(s->substr(1, i - 1));
  s->remove_prefix(i + 1);
  return true;
}

// The GLOBAL_STATE guard's fields, as compile_lens.track names them.
bool IsGlobalStateKey(absl::string_view key) {
  return key == "torch.grad_mode" || absl::StartsWith(key, "torch.autocast.") ||
         key == "torch.deterministic_algorithms" || key == "torch.default_dtype" ||
         key == "torch.torch_function_enabled";
}

}  // namespace

std::string StateKeyOfGuardSource(absl::string_view source) {
  std::string out;
  absl::string_view rest = source;
  std::string key;
  // The root: a frame local or a global.
  for (const auto& [prefix, mapped] :
       {std::pair<absl::string_view, absl::string_view>{"L", "inputs."}, {"G", "globals."}}) {
    absl::string_view probe = rest;
    if (!absl::ConsumePrefix(&probe, prefix) || !ConsumeSubscript(&probe, &key)) continue;
    out = prefix == "L" && key == "self" ? std::string("model") : absl::StrCat(mapped, key);
    rest = probe;
    break;
  }
  while (!rest.empty()) {
    bool matched = false;
    for (absl::string_view container :
         {"._modules", "._parameters", "._buffers", ".__dict__", ""}) {
      absl::string_view probe = rest;
      if (!absl::ConsumePrefix(&probe, container) || !ConsumeSubscript(&probe, &key)) continue;
      absl::StrAppend(&out, ".", key);
      rest = probe;
      matched = true;
      break;
    }
    if (matched) continue;
    out.push_back(rest.front());
    rest.remove_prefix(1);
  }
  return out;
}

GuardedKeys::GuardedKeys(const compile_lens::v1::Frame* frame,
                         const compile_lens::v1::Compile& compile) {
  known_ = GuardedSourceCount(compile) > 0;
  for (absl::string_view source : GuardedSources(frame, compile)) {
    if (source == "GLOBAL_STATE")
      global_state_ = true;
    else
      keys_.insert(StateKeyOfGuardSource(source));
  }
}

bool GuardedKeys::Guards(absl::string_view key) const {
  return keys_.contains(key) || (global_state_ && IsGlobalStateKey(key));
}

}  // namespace cl

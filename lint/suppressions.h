// `# compile-lens: ignore[id,...]` on a line suppresses those patterns' findings on that line;
// `# compile-lens: ignore-file[id,...]` anywhere in a file suppresses them in the whole file.
// `*` stands for every pattern. Only comments count: the marker must follow a `#` on its line.
#ifndef LINT_SUPPRESSIONS_H_
#define LINT_SUPPRESSIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"

namespace cl::lint {

class Suppressions {
 public:
  static Suppressions Scan(absl::string_view source);

  bool Suppressed(absl::string_view pattern, uint32_t line) const;
  bool empty() const { return file_.empty() && lines_.empty(); }

 private:
  absl::flat_hash_set<std::string> file_;
  absl::flat_hash_map<uint32_t, std::vector<std::string>> lines_;
};

}  // namespace cl::lint

#endif  // LINT_SUPPRESSIONS_H_

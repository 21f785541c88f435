// cl-client's command line: flag names with dashes, list flags given more than once, and reading
// the flags with errors a user can act on.
#ifndef CLIENT_COMMAND_LINE_H_
#define CLIENT_COMMAND_LINE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cl {

// `args` (argv, program name first) as abseil's parser takes them:
// - a flag may be written with dashes (--no-sources, --path-map) as well as underscores;
// - a list flag (--label, --path_map, --passes) given more than once keeps every occurrence's
//   items (abseil would keep only the last): `--label a=1 --label b=2` is `--label=a=1,b=2`.
// Nothing after `--` is touched.
std::vector<std::string> NormalizeCommandLine(std::vector<std::string> args);

struct ParsedCommandLine {
  std::vector<std::string> positional;  // the command and its operands (no program name)
  // Where in `positional` the words after `--` begin (`cl-client run -- CMD ARGS`), if one was
  // given.
  std::optional<size_t> after_dashes;
  std::vector<std::string> flags;  // the names of the flags given, in order
  bool help = false;               // -h, --help, -help
  bool version = false;            // --version
};

// Reads normalized `args` (program name first) into the program's abseil flags, as abseil's
// ParseCommandLine does (`--name=value`, `--name value`, `-name`, `--name` and `--noname` for a
// bool, `--` ends the flags), except that only the flags `accept` says yes to exist, and every
// mistake is an InvalidArgument a user can act on: an unknown flag names the closest known one
// ("unknown flag --htlm; did you mean --html?"), a missing value and a value that does not parse
// name the flag. Flags are set as they are read; on an error some may already be set.
absl::StatusOr<ParsedCommandLine> ParseFlags(const std::vector<std::string>& args,
                                             absl::FunctionRef<bool(absl::string_view)> accept);

// The candidate closest to `name` by edit distance, when one is close enough to be a typo (at most
// a third of the name's length, at least 1) and no other is as close; else empty.
std::string ClosestName(absl::string_view name, const std::vector<std::string>& candidates);

}  // namespace cl

#endif  // CLIENT_COMMAND_LINE_H_

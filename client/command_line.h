// cl-client's command line before abseil parses it: flag names with dashes, and list flags given
// more than once.
#ifndef CLIENT_COMMAND_LINE_H_
#define CLIENT_COMMAND_LINE_H_

#include <string>
#include <vector>

namespace cl {

// `args` (argv, program name first) as abseil's parser takes them:
// - a flag may be written with dashes (--no-sources, --path-map) as well as underscores;
// - a list flag (--label, --path_map, --passes) given more than once keeps every occurrence's
//   items (abseil would keep only the last): `--label a=1 --label b=2` is `--label=a=1,b=2`.
// Nothing after `--` is touched.
std::vector<std::string> NormalizeCommandLine(std::vector<std::string> args);

}  // namespace cl

#endif  // CLIENT_COMMAND_LINE_H_

// How a recompile cluster's observed values read, the same on the page, the terminal and in
// Markdown.
#ifndef SERVICE_RENDER_RECOMPILE_FORMAT_H_
#define SERVICE_RENDER_RECOMPILE_FORMAT_H_

#include <string>

#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// "8→16, 16→32" (transitions), "== 8, 16" (the values guarded on, when torch printed no actual
// one; a symbolic guard's relations as they are, "2 <= x[0]"), "changed" for global state (torch
// names the state, never its values), "another object" for an identity guard (torch prints only
// ids), else "".
std::string ObservedValues(const v1::RecompileCluster& cluster);

}  // namespace cl

#endif  // SERVICE_RENDER_RECOMPILE_FORMAT_H_

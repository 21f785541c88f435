// The report as SARIF 2.1.0 (cl-client --sarif), for GitHub code scanning and other CI viewers:
// one rule per lint pattern, graph-break category, recompile category and compile-failure type
// the report holds, and one result per finding at its user file and line.
//
// Levels: a lint finding's from the correctness DB (error, warning, note for info; warning when
// unrated); a failed compile is an error; a graph break and a recompile cluster are warnings. A
// finding with no file cannot be shown on a line and is left out (the run's properties count them).
// Relative paths are under %SRCROOT% (the session's project root, when the report names one).
#ifndef SERVICE_RENDER_SARIF_H_
#define SERVICE_RENDER_SARIF_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// `tool_version`: the driver's version ("0.5.0").
absl::StatusOr<std::string> RenderSarif(const v1::AnalysisReport& report,
                                        absl::string_view tool_version);

}  // namespace cl

#endif  // SERVICE_RENDER_SARIF_H_

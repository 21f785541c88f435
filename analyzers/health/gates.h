// Gates: what makes a session fail a CI check (cl-client check, or a training job's upload whose
// request carries AnalyzeOptions.gates). Each gate reads the report (its health section filled)
// and gives one result line naming the number and its threshold.
//
// A gate that cannot be decided fails rather than passes silently (a regression gate with no base,
// graph breaks when the recompile pass did not run, lint severities with no correctness DB), except
// the run-time checks a plain TORCH_TRACE log cannot hold (divergence, stale cache): those pass
// with "not checked: <why>", since failing every log without a capture package would make the
// gate useless there.
#ifndef ANALYZERS_HEALTH_GATES_H_
#define ANALYZERS_HEALTH_GATES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/report.pb.h"
#include "compile_lens/v1/service.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// INVALID_ARGUMENT naming what is wrong: an unknown fail_on word, lint severity or metric name, a
// limit that is negative or not finite.
absl::Status ValidateGates(const v1::Gates& gates);

// Whether any gate is set.
bool HasGates(const v1::Gates& gates);

// Fills report->health().gates and failed_gates from `gates` (validated). `has_base`: the report
// compares against a base.
void ApplyGates(const v1::Gates& gates, bool has_base, v1::AnalysisReport* report);

// The flag forms: "--max-regression compile_time=10%,guards=0.2" (a percentage or a fraction) and
// "--fail-on failures,divergence"; each adds to `gates`.
absl::Status ParseRegressionFlag(absl::string_view spec, v1::Gates* gates);
absl::Status ParseFailOnFlag(absl::string_view spec, v1::Gates* gates);

// A gate file (TOML), the same gates under their flag names with '_' for '-':
//   max_graph_breaks = 2
//   no_new_graph_breaks = true
//   max_recompiles = 4
//   fail_on = ["failures", "divergence"]
//   fail_on_lint = "error"
//   [max_regression]
//   compile_time = "10%"
//   guards = 0.2
// An unknown key, a wrong type or a bad value is an error naming the file and line.
absl::StatusOr<v1::Gates> ParseGatesFile(absl::string_view toml, absl::string_view path);

// `over`'s gates replace `into`'s where set (the command line over the gate file).
void MergeGates(const v1::Gates& over, v1::Gates* into);

}  // namespace cl

#endif  // ANALYZERS_HEALTH_GATES_H_

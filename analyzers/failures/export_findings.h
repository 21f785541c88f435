// What torch.export could not prove: the draft-export issues of a capture (export_issues), read
// as the user's code.
//
// torch.export.draft_export traces with the example inputs' real values at hand. Where a symbolic
// question has no answer from shapes alone (`Eq(u2, 1)` for `x[:n]`, n = budget.item()) it takes
// the answer the real values give and the exported program asserts it at run time; where an
// operator has no fake kernel it runs the real one. A plain torch.export would have refused both.
// Each finding is one user line and kind (one operator, for a fake kernel): the decisions taken
// there, in the user's names where the log lets them be known (the line's locals, or the line that
// made the data-dependent symbol: `n = budget.item()`), each with the `torch._check(...)` that
// states it, and what to do.
#ifndef ANALYZERS_FAILURES_EXPORT_FINDINGS_H_
#define ANALYZERS_FAILURES_EXPORT_FINDINGS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

// Adds a finding per user line and kind to section->export_findings, in log order.
void AddExportFindings(const compile_lens::v1::SessionCapture& capture,
                       compile_lens::v1::FailuresSection* section);

// The Python assertion torch's decision stands for: `expr` (sympy's text) was `result`.
// "Eq(n, 1)", "False" → "n != 1"; "u2 < 0", "False" → "u2 >= 0"; "n > 0", "True" → "n > 0"; a
// value that is not a truth value is an equality ("n // 2", "3" → "n // 2 == 3").
std::string ExportAssertion(absl::string_view expr, absl::string_view result);

}  // namespace cl

#endif  // ANALYZERS_FAILURES_EXPORT_FINDINGS_H_

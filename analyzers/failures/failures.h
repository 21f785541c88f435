// The failures pass: every compile torch gave up on, and every attempt it restarted.
//
// A failed compile is easy to miss: torch (with suppress_errors, or a backend that raises) runs
// the frame eagerly and the job goes on, slower, with nothing compiled; the log holds a
// compilation_metrics record with fail_type and fail_reason, and often the traceback
// (`artifact: dynamo_error`). This pass lists each failure with where it happened, what torch
// said, the traceback and what to do about that kind of failure, and each restart with its
// reasons (a restart that was a graph break says so: analyzers/common/restarts.h).
#ifndef ANALYZERS_FAILURES_FAILURES_H_
#define ANALYZERS_FAILURES_FAILURES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analyzers/pass.h"

namespace cl {

// What to do about a failure of torch's exception class `fail_type` ("BackendCompilerFailed"),
// given its reason and whether torch.export traced it (IsExportCompile); empty when nothing
// better than the traceback is known.
std::string FailureRemedy(absl::string_view fail_type, absl::string_view reason,
                          bool exported = false);

class FailuresPass : public Pass {
 public:
  absl::string_view Name() const override { return "failures"; }
  absl::string_view Section() const override { return "failures"; }
  // SKIPPED when the capture holds no compile and no export issue; OK otherwise, with no rows for a
  // clean session.
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override;
};

}  // namespace cl

#endif  // ANALYZERS_FAILURES_FAILURES_H_

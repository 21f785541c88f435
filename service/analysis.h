// One analysis request, end to end: the engine's report plus the renderings the options ask for.
// cl-server's reactor and cl-client's in-process mode both call this, so a session gets the same
// report whichever way it is analyzed.
#ifndef SERVICE_ANALYSIS_H_
#define SERVICE_ANALYSIS_H_

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "capture/stream/capture_assembler.h"
#include "compile_lens/v1/service.pb.h"
#include "service/engine.h"

namespace cl {

// What one analysis echoes back and reads at most, in words, from the limits themselves: the
// report's strings (kMaxReportStringBytes) and the lint pass's files (lint::ParseLimits,
// lint::LintOptions). cl-server's --help and `cl-client help analyze` print it.
std::string AnalysisLimitsText();

// The most a site returned in AnalyzeResponse.site may weigh (AnalyzeOptions.render_site): past
// it the response carries `site_error` instead, and the client is told to render the site itself
// from the capture (cl-client --html-dir, without --raw). Half the client's response cap.
inline constexpr uint64_t kMaxSiteBytes = 256ull << 20;

absl::StatusOr<v1::AnalyzeResponse> RunAnalysis(const Engine& engine, CaptureRefs captures,
                                                const v1::AnalyzeOptions& options,
                                                const std::atomic<bool>* cancelled);

inline absl::StatusOr<v1::AnalyzeResponse> RunAnalysis(const Engine& engine,
                                                       const AssembledCaptures& captures,
                                                       const v1::AnalyzeOptions& options,
                                                       const std::atomic<bool>* cancelled) {
  return RunAnalysis(engine, RefsOf(captures), options, cancelled);
}

}  // namespace cl

#endif  // SERVICE_ANALYSIS_H_

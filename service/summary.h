// The report's two plain sections, read straight off the capture: session metadata and the raw
// artifact counts. They are not passes: nothing in them is inferred.
#ifndef SERVICE_SUMMARY_H_
#define SERVICE_SUMMARY_H_

#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

void FillMetadata(const v1::SessionCapture& head, const v1::SessionCapture* base,
                  v1::AnalysisReport* report);

// recompilations: compiles that came with recompile reasons; compiled_graphs: frames that compiled
// to a graph at least once (a frame recompiled three times is still one compiled graph);
// graph_breaks: every graph break recorded; iterations: recorded calls of compiled frames.
void FillRaw(const v1::SessionCapture& head, v1::AnalysisReport* report);

}  // namespace cl

#endif  // SERVICE_SUMMARY_H_

// The report's plain parts: session metadata and the raw artifact counts, read straight off the
// capture, and the verdict, read off the sections the passes wrote. They are not passes.
#ifndef SERVICE_SUMMARY_H_
#define SERVICE_SUMMARY_H_

#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

void FillMetadata(const v1::SessionCapture& head, const v1::SessionCapture* base,
                  v1::AnalysisReport* report);

// recompilations: compiles that came with recompile reasons; compiled_graphs: compiles that
// succeeded (each produced a graph: a frame recompiled three times compiled four); graph_breaks:
// every graph break recorded, and every restart that was one (analyzers/common/restarts.h);
// iterations: recorded calls of compiled frames.
void FillRaw(const v1::SessionCapture& head, v1::AnalysisReport* report);

// The verdict above the sections: what went wrong in this session, most costly first (failed
// compiles, recompile-limit hits and storms, frames skipped by graph breaks, divergence, stale
// caches, graph breaks, lint errors), each naming the section that shows it; and, on a quiet
// rank of a multi-rank session, the rank where the trouble is. Empty items and `clean`: nothing
// went wrong that the passes that ran can see. Reads only `report`'s sections, so it runs last.
void FillVerdict(v1::AnalysisReport* report);

}  // namespace cl

#endif  // SERVICE_SUMMARY_H_

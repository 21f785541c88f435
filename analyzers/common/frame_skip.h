// A compile whose graph break made torch skip its whole frame, read from what the compile left.
//
// Torch skips a frame, and runs it eagerly on every call, when a graph break falls where it cannot
// resume: inside a for/while loop (torch 2.6 says so only at INFO level, outside the trace), or a
// break it cannot resume from at all. The trace shows it by what is missing: the compile has a
// graph-break record and compilation metrics whose guard_count and graph_op_count are null, and no
// graph or guards of its own (no cache entry). docs/torch-semantics.md §2.1.
#ifndef ANALYZERS_COMMON_FRAME_SKIP_H_
#define ANALYZERS_COMMON_FRAME_SKIP_H_

#include "compile_lens/v1/capture.pb.h"

namespace cl {

// True for a compile that broke and compiled nothing, as above. False where the log has no
// compilation metrics for it, or metrics without those two fields: nothing says either way.
bool CompiledNothing(const compile_lens::v1::Compile& compile);

}  // namespace cl

#endif  // ANALYZERS_COMMON_FRAME_SKIP_H_

// The roofline pass: per kernel, flops, bytes, arithmetic intensity, the attainable rate under
// the GPU's memory and compute roofs, the achieved rate when a time is known, and which roof
// bounds it (docs/design.md §5.7, docs/torch-semantics.md §7).
//
// The GPU is the session's (session.gpu, which cl-client's --gpu overrides in the capture, as the
// metadata section shows it), looked up in analyzers/roofline/gpu_specs.h; an unknown name leaves
// the section OK with a note listing the known ones,
// and kernels without roofs. Kernels come from the capture when they carry flops and bytes (their
// dtype, and whether they are matmul-like, from the post-grad nodes they name; FP32 when none);
// when none does (Inductor records them only with benchmark_kernel / profile_bandwidth), they are
// estimated analytically from the post-grad graphs Inductor lowered for each frame's first compile
// (LoweredGraphsPerFrame in analyzers/common/post_grad_graph.h; analyzers/roofline/op_cost.h) and
// marked `estimated`; a library call with no estimate (a size with no hint, or no formula in
// op_cost.h) is named in the note instead of shown on the chart. Inductor's estimated runtimes
// (kernels[].estimated_us), when the capture has them, give library calls a time: the i-th
// `extern_kernels.<op>` of a graph is its i-th <op> node. A kernel whose achieved rate beats the
// roof its dtype gives has the wrong roof, so it gets none (no attainable rate, no bound) and the
// note names it: achieved never exceeds attainable.
#ifndef ANALYZERS_ROOFLINE_ROOFLINE_H_
#define ANALYZERS_ROOFLINE_ROOFLINE_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analyzers/pass.h"

namespace cl {

class RooflinePass : public Pass {
 public:
  absl::string_view Name() const override { return "roofline"; }
  absl::string_view Section() const override { return "roofline"; }
  // SKIPPED when no kernel carries features and there is no post-grad graph to estimate from.
  absl::Status Run(const PassInput& in, v1::AnalysisReport* out) const override;
};

}  // namespace cl

#endif  // ANALYZERS_ROOFLINE_ROOFLINE_H_

// The GPU spec table the roofline reads: dense peak throughput per precision and memory bandwidth
// for the GPUs compile-lens knows (docs/torch-semantics.md §7.1, each row with its source in
// gpu_specs.cc).
//
// Lookup is by the names users and torch write: the table's own names ("A100-SXM-80GB"), torch's
// `torch.cuda.get_device_name()` strings ("NVIDIA H100 80GB HBM3") and short aliases ("h100"),
// compared case-insensitively with spaces, dashes and underscores ignored.
#ifndef ANALYZERS_ROOFLINE_GPU_SPECS_H_
#define ANALYZERS_ROOFLINE_GPU_SPECS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cl {

// Dense peaks in FLOP/s (zero: the GPU has no such unit) and bandwidth in bytes/s.
struct GpuSpec {
  const char* name;
  double fp32;  // CUDA-core FP32, also what pointwise and reduction kernels run on
  double tf32;
  double bf16;
  double fp16;
  double fp8;
  double bandwidth;
};

// The spec for `name`, or null when the table does not know it.
const GpuSpec* FindGpuSpec(absl::string_view name);

// Every spec, in table order (for the "known GPUs" note and for tests).
const std::vector<GpuSpec>& GpuSpecs();

// The peak a kernel of `dtype` (torch spelling: "f32", "bf16", ...) can reach on `spec`: the
// tensor-core peak of that precision for matmul-like work, FP32 otherwise. An fp32 matmul uses
// the FP32 peak: torch's default float32_matmul_precision is "highest" (no TF32). A precision
// the GPU lacks (bf16 on V100) falls back to FP32.
double PeakFlops(const GpuSpec& spec, absl::string_view dtype, bool matmul);

// The ridge point (FLOP per byte) at that peak.
inline double RidgePoint(double peak_flops, const GpuSpec& spec) {
  return peak_flops / spec.bandwidth;
}

}  // namespace cl

#endif  // ANALYZERS_ROOFLINE_GPU_SPECS_H_

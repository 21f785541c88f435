#include "analyzers/roofline/gpu_specs.h"

#include <cctype>
#include <string>

namespace cl {
namespace {

constexpr double kT = 1e12;  // TFLOP/s
constexpr double kG = 1e9;   // GB/s

struct Alias {
  const char* alias;
  const char* name;
};

// Dense peaks: datasheets print the 2:4-sparsity tensor figures; those were halved
// (docs/torch-semantics.md §7.1). Columns: FP32, TF32, BF16, FP16, FP8, bandwidth.
const std::vector<GpuSpec>& Table() {
  static const auto* const kTable = new std::vector<GpuSpec>{
      // NVIDIA A100 datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf), SXM4 80 GB.
      {"A100-SXM-80GB", 19.5 * kT, 156 * kT, 312 * kT, 312 * kT, 0, 2039 * kG},
      // The same datasheet, SXM4 40 GB (1,555 GB/s), PCIe 40 GB (1,555 GB/s) and PCIe 80 GB
      // (1,935 GB/s): the same compute, another memory.
      {"A100-SXM-40GB", 19.5 * kT, 156 * kT, 312 * kT, 312 * kT, 0, 1555 * kG},
      {"A100-PCIe-40GB", 19.5 * kT, 156 * kT, 312 * kT, 312 * kT, 0, 1555 * kG},
      {"A100-PCIe-80GB", 19.5 * kT, 156 * kT, 312 * kT, 312 * kT, 0, 1935 * kG},
      // NVIDIA H100 datasheet, SXM5 (sparse 989 / 1979 / 3958 halved).
      {"H100-SXM-80GB", 66.9 * kT, 494.7 * kT, 989.4 * kT, 989.4 * kT, 1978.9 * kT, 3350 * kG},
      // NVIDIA H100 datasheet, PCIe (sparse 756 / 1513 / 3026 halved).
      {"H100-PCIe-80GB", 51.2 * kT, 378 * kT, 756 * kT, 756 * kT, 1513 * kT, 2000 * kG},
      // NVIDIA H200 datasheet: the H100 SXM's compute, 4.8 TB/s HBM3e.
      {"H200-SXM-141GB", 66.9 * kT, 494.7 * kT, 989.4 * kT, 989.4 * kT, 1978.9 * kT, 4800 * kG},
      // NVIDIA L4 datasheet (sparse TF32 120, FP16 242, FP8 485 halved).
      {"L4", 30.3 * kT, 60 * kT, 121 * kT, 121 * kT, 242.5 * kT, 300 * kG},
      // NVIDIA L40S datasheet (sparse 366 / 733 / 1466 halved).
      {"L40S", 91.6 * kT, 183 * kT, 362 * kT, 362 * kT, 733 * kT, 864 * kG},
      // Low confidence: AWS-only SKU without a datasheet; baseten.co's A10 vs A10G comparison
      // (24 GB, 600 GB/s, weaker tensor throughput than the A10's 31.2 / 62.5 / 125).
      {"A10G", 31.2 * kT, 35 * kT, 70 * kT, 70 * kT, 0, 600 * kG},
      // NVIDIA V100 datasheet, SXM2 32 GB and 16 GB (the same figures): FP16 tensor cores only,
      // no TF32 / BF16.
      {"V100-SXM2-32GB", 15.7 * kT, 0, 0, 125 * kT, 0, 900 * kG},
      {"V100-SXM2-16GB", 15.7 * kT, 0, 0, 125 * kT, 0, 900 * kG},
      // AMD Instinct MI300X datasheet (sparse 2614.9 / 5229.8 halved); the same as the MI300X
      // entry of torch/_inductor/analysis/device_info.py.
      {"MI300X", 163.4 * kT, 653.7 * kT, 1307.4 * kT, 1307.4 * kT, 2614.9 * kT, 5300 * kG},
  };
  return *kTable;
}

// torch.cuda.get_device_name() strings and short names users type.
constexpr Alias kAliases[] = {
    {"NVIDIA A100-SXM4-80GB", "A100-SXM-80GB"},
    {"A100-SXM4-80GB", "A100-SXM-80GB"},
    {"A100", "A100-SXM-80GB"},
    {"A100-SXM", "A100-SXM-80GB"},
    {"NVIDIA A100-SXM4-40GB", "A100-SXM-40GB"},
    {"A100-SXM4-40GB", "A100-SXM-40GB"},
    {"NVIDIA A100-PCIE-40GB", "A100-PCIe-40GB"},
    {"A100-PCIe", "A100-PCIe-40GB"},
    {"NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"},
    {"NVIDIA A100-PCIE-80GB", "A100-PCIe-80GB"},
    {"NVIDIA H100 80GB HBM3", "H100-SXM-80GB"},
    {"NVIDIA H100", "H100-SXM-80GB"},
    {"H100", "H100-SXM-80GB"},
    {"H100-SXM", "H100-SXM-80GB"},
    {"H100-SXM5-80GB", "H100-SXM-80GB"},
    {"NVIDIA H100 PCIe", "H100-PCIe-80GB"},
    {"H100-PCIe", "H100-PCIe-80GB"},
    {"NVIDIA H200", "H200-SXM-141GB"},
    {"H200", "H200-SXM-141GB"},
    {"NVIDIA L4", "L4"},
    {"NVIDIA L40S", "L40S"},
    {"NVIDIA A10G", "A10G"},
    {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},
    {"Tesla V100-SXM2-16GB", "V100-SXM2-16GB"},
    {"V100", "V100-SXM2-32GB"},
    {"AMD Instinct MI300X", "MI300X"},
};

// "NVIDIA H100 80GB HBM3" → "nvidiah10080gbhbm3": how the names compare.
std::string Key(absl::string_view name) {
  std::string key;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return key;
}

const GpuSpec* ByName(absl::string_view name) {
  const std::string key = Key(name);
  for (const GpuSpec& spec : Table()) {
    if (Key(spec.name) == key) return &spec;
  }
  return nullptr;
}

}  // namespace

const std::vector<GpuSpec>& GpuSpecs() { return Table(); }

const GpuSpec* FindGpuSpec(absl::string_view name) {
  if (const GpuSpec* spec = ByName(name)) return spec;
  const std::string key = Key(name);
  for (const Alias& alias : kAliases) {
    if (Key(alias.alias) == key) return ByName(alias.name);
  }
  return nullptr;
}

double PeakFlops(const GpuSpec& spec, absl::string_view dtype, bool matmul) {
  double peak = 0;
  if (matmul) {
    if (dtype == "bf16") peak = spec.bf16;
    if (dtype == "f16") peak = spec.fp16;
    if (dtype == "f8e4m3fn" || dtype == "f8e5m2" || dtype == "f8e4m3fnuz" ||
        dtype == "f8e5m2fnuz") {
      peak = spec.fp8;
    }
  }
  return peak > 0 ? peak : spec.fp32;
}

}  // namespace cl

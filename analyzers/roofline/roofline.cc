#include "analyzers/roofline/roofline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzers/common/named_list.h"
#include "analyzers/common/post_grad_graph.h"
#include "analyzers/common/size_hints.h"
#include "analyzers/lowered_facts.h"
#include "analyzers/roofline/gpu_specs.h"
#include "analyzers/roofline/op_cost.h"
#include "common/number_format.h"

namespace cl {
namespace {

std::string KnownGpus() {
  std::vector<std::string> names;
  for (const GpuSpec& spec : GpuSpecs()) names.push_back(spec.name);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) absl::StrAppend(&out, i > 0 ? ", " : "", names[i]);
  return out;
}

// Fills intensity, attainable, achieved and bound from flops, bytes and time_us. False when the
// kernel ran faster than the roof of its dtype (FP32 when it has none): a roof below the
// measurement is the wrong roof (TF32 or tensor cores the dtype does not show, or miscounted
// flops/bytes), so it gets no attainable rate and no bound.
bool Classify(const GpuSpec* spec, bool matmul, v1::RooflineKernel* k) {
  if (k->bytes() > 0) k->set_intensity(k->flops() / k->bytes());
  if (k->time_us() > 0) k->set_achieved(k->flops() / (k->time_us() * 1e-6));
  if (spec == nullptr || k->bytes() <= 0) return true;
  const double peak = PeakFlops(*spec, k->dtype().empty() ? "f32" : k->dtype(), matmul);
  const double attainable = std::min(peak, k->intensity() * spec->bandwidth);
  if (k->achieved() > attainable) return false;
  k->set_attainable(attainable);
  k->set_bound(k->intensity() < RidgePoint(peak, *spec) ? v1::RooflineKernel::MEMORY
                                                        : v1::RooflineKernel::COMPUTE);
  return true;
}

// What a captured kernel computes, from the post-grad nodes it names: a library call among them
// makes it matmul-like in that call's dtype; otherwise it runs on CUDA cores in its first node's
// dtype. No dtype when the capture names no nodes.
struct CapturedKind {
  std::string dtype;
  bool matmul = false;
};

CapturedKind KindOf(const PostGradGraph* graph, const v1::Kernel& kernel) {
  CapturedKind kind;
  if (graph == nullptr) return kind;
  for (const std::string& name : kernel.source_nodes()) {
    const v1::Node* node = graph->Find(name);
    if (node == nullptr) continue;
    if (IsLibraryCall(*node)) return {LibraryCallDtype(*graph, *node), true};
    if (kind.dtype.empty()) kind.dtype = node->meta().dtype();
  }
  return kind;
}

// Inductor's runtime estimates per graph: "mm" → the estimated µs of each extern_kernels.mm
// call, in order.
using RuntimeEstimates = std::map<std::string, std::vector<double>>;

std::map<std::string, RuntimeEstimates> EstimatesByGraph(const v1::SessionCapture& capture) {
  std::map<std::string, RuntimeEstimates> out;
  for (const v1::Kernel& kernel : capture.kernels()) {
    if (kernel.estimated_us() <= 0 || !absl::StartsWith(kernel.name(), "extern_kernels.")) continue;
    const std::string op(kernel.name().substr(sizeof("extern_kernels.") - 1));
    out[kernel.graph_id()][op].push_back(kernel.estimated_us());
  }
  return out;
}

// "aten.addmm.default" → "addmm", the name Inductor's extern kernel call carries.
std::string ShortOp(const std::string& target) {
  const size_t first = target.find('.');
  const size_t second = target.find('.', first + 1);
  if (first == std::string::npos) return target;
  return target.substr(first + 1,
                       second == std::string::npos ? std::string::npos : second - first - 1);
}

}  // namespace

absl::Status RooflinePass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  v1::RooflineSection* section = out->mutable_roofline();
  // A session that names no GPU (a CPU run) is modelled for the default one, and says so: what
  // the kernels would be bound by on the GPU most teams ship to.
  static constexpr char kDefaultGpu[] = "H100-SXM-80GB";
  const bool assumed = in.head.session().gpu().empty();
  const std::string gpu = assumed ? kDefaultGpu : in.head.session().gpu();
  const GpuSpec* spec = FindGpuSpec(gpu);
  section->set_gpu(gpu);
  section->set_gpu_assumed(assumed);

  std::vector<std::string> notes;
  if (assumed) {
    notes.push_back(absl::StrCat("The session names no GPU: modelled for ", kDefaultGpu,
                                 ", the default; pass --gpu NAME for another. Known: ", KnownGpus(),
                                 "."));
  } else if (spec == nullptr) {
    notes.push_back(absl::StrCat("GPU \"", gpu, "\" is not in the spec table, so there are no ",
                                 "roofs; known: ", KnownGpus(), "."));
  }

  uint64_t runtime_only = 0;
  double runtime_only_us = 0;
  std::string gemm_dtype;
  std::vector<std::string> above_roof;  // kernels faster than the roof of their dtype
  std::vector<std::string> not_finite;  // kernels whose figures are not finite numbers
  // Captured kernels carry no dtype; the graph nodes they name do (each graph read on first use).
  absl::flat_hash_map<absl::string_view, const v1::Graph*> graph_protos;
  for (const v1::Graph& graph : in.head.graphs()) graph_protos.try_emplace(graph.id(), &graph);
  absl::flat_hash_map<const v1::Graph*, std::unique_ptr<PostGradGraph>> read;
  auto graph_of = [&](const v1::Kernel& kernel) -> const PostGradGraph* {
    auto it = graph_protos.find(kernel.graph_id());
    if (it == graph_protos.end() || kernel.source_nodes().empty()) return nullptr;
    std::unique_ptr<PostGradGraph>& graph = read[it->second];
    if (graph == nullptr) graph = std::make_unique<PostGradGraph>(*it->second);
    return graph.get();
  };
  for (const v1::Kernel& kernel : in.head.kernels()) {
    // A figure that is not a finite, positive number (a capture may say Infinity, or 1 FLOP over
    // 5e-324 bytes, an infinite intensity) places no kernel on a roofline: named, not plotted.
    const double intensity = kernel.bytes() > 0 ? kernel.flops() / kernel.bytes() : 0;
    if ((kernel.flops() != 0 || kernel.bytes() != 0) &&
        (!std::isfinite(kernel.flops()) || !std::isfinite(kernel.bytes()) ||
         !std::isfinite(intensity) || !std::isfinite(kernel.measured_us()) ||
         kernel.measured_us() < 0)) {
      not_finite.push_back(kernel.name());
      continue;
    }
    if (kernel.flops() > 0 && kernel.bytes() > 0) {
      v1::RooflineKernel* k = section->add_kernels();
      k->set_name(kernel.name());
      k->set_flops(kernel.flops());
      k->set_bytes(kernel.bytes());
      if (kernel.measured_us() > 0) {
        k->set_time_us(kernel.measured_us());
        k->set_time_source(v1::RooflineKernel::MEASURED);
      }
      // Without a dtype, the FP32 roof: the conservative one, unless the kernel beat it.
      const CapturedKind kind = KindOf(graph_of(kernel), kernel);
      k->set_dtype(kind.dtype);
      if (kind.matmul && gemm_dtype.empty()) gemm_dtype = kind.dtype;
      if (!Classify(spec, kind.matmul, k)) above_roof.push_back(k->name());
    } else if (kernel.estimated_us() > 0 && std::isfinite(kernel.estimated_us())) {
      ++runtime_only;
      runtime_only_us += kernel.estimated_us();
    }
  }

  const std::vector<const v1::Graph*> graphs = LoweredGraphsPerFrame(in.head);
  std::vector<std::string> not_estimated;  // library calls with no cost
  if (section->kernels().empty()) {
    const auto estimates = EstimatesByGraph(in.head);
    std::optional<SizeHintsByCompile> hints;  // for the graphs with no facts kept, read here
    std::set<std::string> hints_used;         // each graph's "s0 = 4", for the note
    for (const v1::Graph* graph_proto : graphs) {
      if (in.Cancelled()) return absl::CancelledError("roofline pass cancelled");
      const LoweredGraphFacts* kept = LoweredFactsOf(in, *graph_proto);
      std::vector<KernelCost> computed;
      if (kept == nullptr) {
        if (!hints) hints.emplace(in.head);
        computed =
            EstimateKernels(PostGradGraph(*graph_proto, hints->For(graph_proto->compile_id())));
      }
      auto runtimes = estimates.find(graph_proto->id());
      std::map<std::string, size_t> next;  // per op, the next extern call to pair with
      for (const KernelCost& cost : kept != nullptr ? kept->kernels : computed) {
        // The i-th extern call is the i-th node of its op, costed or not.
        std::optional<double> time_us;
        if (cost.matmul && runtimes != estimates.end()) {
          const std::string op = ShortOp(cost.op);
          auto list = runtimes->second.find(op);
          const size_t i = next[op]++;
          if (list != runtimes->second.end() && i < list->second.size()) time_us = list->second[i];
        }
        if (!cost.cost_known) {
          not_estimated.push_back(cost.name);
          continue;
        }
        v1::RooflineKernel* k = section->add_kernels();
        k->set_name(cost.name);
        k->set_op(cost.op);
        k->set_dtype(cost.dtype);
        k->set_flops(cost.flops);
        k->set_bytes(cost.bytes);
        k->set_estimated(true);
        if (!cost.size_hints.empty()) {
          k->set_size_hints(cost.size_hints);
          hints_used.insert(cost.size_hints);
        }
        if (cost.matmul && gemm_dtype.empty()) gemm_dtype = cost.dtype;
        if (time_us) {
          k->set_time_us(*time_us);
          k->set_time_source(v1::RooflineKernel::ESTIMATED);
        }
        if (!Classify(spec, cost.matmul, k)) above_roof.push_back(k->name());
      }
    }
    if (!section->kernels().empty()) {
      notes.push_back(absl::StrCat(
          "Estimated from ", FormatCount(graphs.size(), "post-grad graph", "post-grad graphs"),
          ", those Inductor lowered for each frame's "
          "first compile: library calls ",
          "(mm, addmm, bmm, conv, sdpa) by their shapes, each run of pointwise and reduction ops ",
          "between them as one fused kernel by its bytes."));
      if (!hints_used.empty()) {
        notes.push_back(absl::StrCat(
            "Symbolic sizes are evaluated at the size hints torch logged when it created each "
            "symbol (",
            absl::StrJoin(hints_used, "; "),
            "), the sizes of the call that compiled; the figures of other sizes the same code "
            "serves differ."));
      }
      const bool timed = std::any_of(section->kernels().begin(), section->kernels().end(),
                                     [](const v1::RooflineKernel& k) { return k.time_us() > 0; });
      if (timed) {
        notes.push_back("Achieved rates use Inductor's estimated runtimes, not measurements.");
      }
    }
    if (!not_estimated.empty()) {
      notes.push_back(absl::StrCat(
          FormatCount(not_estimated.size(), "kernel", "kernels"),
          not_estimated.size() == 1 ? " has" : " have",
          " no estimate (a size with no value in the log, such as an unbacked "
          "symbol; a library op with no formula here; or a call Inductor runs as it "
          "is: a custom op, a higher-order op such as `cond`, an op Inductor falls back on "
          "such as an FFT, linear algebra, 3-D pooling or an op on complex numbers), so ",
          not_estimated.size() == 1 ? "it is" : "they are",
          " not on the chart: ", NamedList(not_estimated), "."));
    }
  }
  if (!not_finite.empty()) {
    notes.push_back(absl::StrCat(FormatCount(not_finite.size(), "kernel", "kernels"),
                                 " of the capture carry flops, bytes or a time that is not a "
                                 "finite number (or whose intensity overflows), so ",
                                 not_finite.size() == 1 ? "it is" : "they are",
                                 " left out: ", NamedList(not_finite), "."));
  }
  if (!above_roof.empty()) {
    notes.push_back(absl::StrCat(
        FormatCount(above_roof.size(), "kernel", "kernels"),
        " ran faster than the roof of their dtype (FP32 where the ",
        "capture gives none) allows — TF32, tensor cores or miscounted flops/bytes — so they have ",
        "no attainable rate or bound: ", NamedList(above_roof), "."));
  }
  if (runtime_only > 0) {
    notes.push_back(
        absl::StrFormat("%s only Inductor's runtime estimates (%.1f µs in all), no flops/bytes.",
                        absl::StrCat(FormatCount(runtime_only, "kernel", "kernels"),
                                     runtime_only == 1 ? " carries" : " carry"),
                        runtime_only_us));
  }
  if (section->kernels().empty() && graphs.empty()) {
    section->set_status(v1::SKIPPED);
    section->set_reason(absl::StrCat(
        not_finite.empty() ? "no kernel carried flops/bytes to plot"
                           : absl::StrCat("no kernel carried finite flops/bytes to plot (",
                                          FormatCount(not_finite.size(), "kernel", "kernels"),
                                          " left out, named in the note)"),
        ", and nothing to estimate them from: ", NoLoweredGraphReason(in.head)));
    for (const std::string& note : notes) {
      absl::StrAppend(section->mutable_note(), section->note().empty() ? "" : " ", note);
    }
    return absl::OkStatus();
  }
  if (spec != nullptr) {
    const double peak = PeakFlops(*spec, gemm_dtype.empty() ? "f32" : gemm_dtype, true);
    section->set_peak_flops(peak);
    section->set_bandwidth(spec->bandwidth);
    section->set_ridge_point(RidgePoint(peak, *spec));
  }
  for (const std::string& note : notes) {
    absl::StrAppend(section->mutable_note(), section->note().empty() ? "" : " ", note);
  }
  section->set_status(v1::OK);
  return absl::OkStatus();
}

}  // namespace cl

// The roofline pass, its GPU spec table and the analytic op costs, checked by hand
// (docs/torch-semantics.md §7).
#include "analyzers/roofline/roofline.h"

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analyzers/common/post_grad_graph.h"
#include "analyzers/roofline/gpu_specs.h"
#include "analyzers/roofline/op_cost.h"
#include "capture/torch_trace/importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/report_words.h"
#include "tests/testing/captures.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/import_fixture.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The pass on `capture` with its session's GPU set to `gpu`, as cl-client --gpu sets it.
v1::AnalysisReport RunWithGpu(v1::SessionCapture capture, const std::string& gpu) {
  capture.mutable_session()->set_gpu(gpu);
  return testing::RunPassOk(RooflinePass(), capture);
}

// --- The spec table ------------------------------------------------------------------------

TEST(GpuSpecsTest, RidgePointsOfEveryGpu) {
  // peak / bandwidth, from the table of §7.1 (its "ridge pt" columns, rounded there); the A100
  // 40 GB SXM and 80 GB PCIe and the 16-GB V100, which it lacks, from the same datasheets.
  struct Row {
    const char* name;
    double ridge_tensor;  // bf16, or fp16 for the V100
    double ridge_fp32;
  };
  const Row rows[] = {{"A100-SXM-80GB", 153.0, 9.56},   {"A100-PCIe-40GB", 200.6, 12.54},
                      {"H100-SXM-80GB", 295.3, 19.97},  {"H100-PCIe-80GB", 378.0, 25.6},
                      {"H200-SXM-141GB", 206.1, 13.94}, {"L4", 403.3, 101.0},
                      {"L40S", 419.0, 106.02},          {"A10G", 116.7, 52.0},
                      {"V100-SXM2-32GB", 138.9, 17.44}, {"MI300X", 246.7, 30.83},
                      {"A100-SXM-40GB", 200.6, 12.54},  {"A100-PCIe-80GB", 161.2, 10.08},
                      {"V100-SXM2-16GB", 138.9, 17.44}};
  ASSERT_EQ(GpuSpecs().size(), std::size(rows));
  for (const Row& row : rows) {
    const GpuSpec* spec = FindGpuSpec(row.name);
    ASSERT_NE(spec, nullptr) << row.name;
    const char* dtype = absl::StartsWith(row.name, "V100") ? "f16" : "bf16";
    EXPECT_NEAR(RidgePoint(PeakFlops(*spec, dtype, true), *spec), row.ridge_tensor, 0.1)
        << row.name;
    EXPECT_NEAR(RidgePoint(PeakFlops(*spec, "f32", false), *spec), row.ridge_fp32, 0.01)
        << row.name;
  }
}

TEST(GpuSpecsTest, TorchDeviceNamesAndAliases) {
  EXPECT_STREQ(FindGpuSpec("NVIDIA H100 80GB HBM3")->name, "H100-SXM-80GB");
  EXPECT_STREQ(FindGpuSpec("NVIDIA A100-SXM4-80GB")->name, "A100-SXM-80GB");
  EXPECT_STREQ(FindGpuSpec("a100_sxm_80gb")->name, "A100-SXM-80GB");
  EXPECT_STREQ(FindGpuSpec("AMD Instinct MI300X")->name, "MI300X");
  // What torch.cuda.get_device_name() says on the other A100s, an H100 and a 16-GB V100.
  EXPECT_STREQ(FindGpuSpec("NVIDIA A100-SXM4-40GB")->name, "A100-SXM-40GB");
  EXPECT_STREQ(FindGpuSpec("NVIDIA A100 80GB PCIe")->name, "A100-PCIe-80GB");
  EXPECT_STREQ(FindGpuSpec("NVIDIA H100")->name, "H100-SXM-80GB");
  EXPECT_STREQ(FindGpuSpec("Tesla V100-SXM2-16GB")->name, "V100-SXM2-16GB");
  EXPECT_EQ(FindGpuSpec("RTX-9999"), nullptr);
  // bf16 on a V100 (no bf16 units) and fp8 on an A100 fall back to FP32.
  EXPECT_EQ(PeakFlops(*FindGpuSpec("V100"), "bf16", true), 15.7e12);
  EXPECT_EQ(PeakFlops(*FindGpuSpec("A100"), "f8e4m3fn", true), 19.5e12);
  EXPECT_EQ(PeakFlops(*FindGpuSpec("H100"), "f8e4m3fn", true), 1978.9e12);
}

// --- Analytic costs ------------------------------------------------------------------------

class OpCostTest : public ::testing::Test {
 protected:
  v1::Node* Add(const std::string& name, const std::string& target, const char* dtype,
                std::initializer_list<const char*> shape, std::initializer_list<const char*> args) {
    v1::Node* node = graph_.add_nodes();
    node->set_name(name);
    node->set_op(target.empty() ? "placeholder" : "call_function");
    node->set_target(target.empty() ? name : target);
    node->mutable_meta()->set_dtype(dtype);
    for (const char* d : shape) node->mutable_meta()->add_shape(d);
    for (const char* a : args) {
      if (a[0] == '#') {
        node->add_args()->set_literal(a + 1);
      } else {
        node->add_args()->set_node(a);
      }
    }
    return node;
  }
  KernelCost Cost(const std::string& name) {
    const PostGradGraph g(graph_);
    std::optional<KernelCost> cost = LibraryOpCost(g, *g.Find(name));
    EXPECT_TRUE(cost.has_value()) << name;
    return cost.value_or(KernelCost());
  }
  v1::Graph graph_;
};

TEST_F(OpCostTest, MmAddmmBmm) {
  Add("a", "", "f32", {"16", "64"}, {});
  Add("w", "", "f32", {"64", "256"}, {});
  Add("bias", "", "f32", {"256"}, {});
  Add("mm", "aten.mm.default", "f32", {"16", "256"}, {"a", "w"});
  Add("addmm", "aten.addmm.default", "f32", {"16", "256"}, {"bias", "a", "w"});
  Add("q", "", "bf16", {"8", "16", "32"}, {});
  Add("k", "", "bf16", {"8", "32", "16"}, {});
  Add("bmm", "aten.bmm.default", "bf16", {"8", "16", "16"}, {"q", "k"});
  // mm: 2·16·256·64 FLOPs; (16·64 + 64·256 + 16·256)·4 bytes.
  EXPECT_EQ(Cost("mm").flops, 524288);
  EXPECT_EQ(Cost("mm").bytes, 86016);
  // addmm: the same, plus the 256-element bias.
  EXPECT_EQ(Cost("addmm").flops, 524288);
  EXPECT_EQ(Cost("addmm").bytes, 87040);
  // bmm: 2·8·16·16·32; 8·(16·32 + 32·16 + 16·16)·2.
  EXPECT_EQ(Cost("bmm").flops, 131072);
  EXPECT_EQ(Cost("bmm").bytes, 20480);
  EXPECT_TRUE(Cost("bmm").matmul);
}

TEST_F(OpCostTest, ConvolutionAndSdpa) {
  Add("x", "", "f32", {"2", "3", "32", "32"}, {});
  Add("w", "", "f32", {"8", "3", "3", "3"}, {});
  Add("conv", "aten.convolution.default", "f32", {"2", "8", "30", "30"}, {"x", "w"});
  // 2·numel(y)·(Cin/g)·kh·kw = 2·14400·27; (6144 + 216 + 14400)·4.
  EXPECT_EQ(Cost("conv").flops, 777600);
  EXPECT_EQ(Cost("conv").bytes, 83040);
  Add("q", "", "bf16", {"2", "4", "128", "64"}, {});
  Add("k", "", "bf16", {"2", "4", "128", "64"}, {});
  Add("v", "", "bf16", {"2", "4", "128", "64"}, {});
  Add("sdpa", "aten._scaled_dot_product_flash_attention.default", "", {}, {"q", "k", "v"});
  // 2·b·h·Sq·Sk·(d + dv) = 2·1024·128·128; (Q + K + V + O)·2 + b·h·Sq·4.
  EXPECT_EQ(Cost("sdpa").flops, 33554432);
  EXPECT_EQ(Cost("sdpa").bytes, 528384);
  EXPECT_EQ(Cost("sdpa").dtype, "bf16");
}

TEST_F(OpCostTest, TransposedConvolution) {
  // conv_transpose2d: the weight is [Cin, Cout/g, kh, kw]; every input point meets the filter.
  Add("x", "", "f32", {"2", "8", "16", "16"}, {});
  Add("w", "", "f32", {"8", "4", "3", "3"}, {});
  Add("convt", "aten.convolution.default", "f32", {"2", "4", "18", "18"},
      {"x", "w", "#None", "#[1, 1]", "#[0, 0]", "#[1, 1]", "#True", "#[0, 0]", "#1"});
  // torch.utils.flop_counter: 2·N·prod(x spatial)·numel(w) = 2·2·256·288; (4096 + 288 + 2592)·4.
  EXPECT_EQ(Cost("convt").flops, 294912);
  EXPECT_EQ(Cost("convt").bytes, 27904);
  // The same call with transposed=False reads the weight as [Cout, Cin/g, kh, kw].
  Add("conv", "aten.convolution.default", "f32", {"2", "4", "18", "18"},
      {"x", "w", "#None", "#[1, 1]", "#[0, 0]", "#[1, 1]", "#False", "#[0, 0]", "#1"});
  EXPECT_EQ(Cost("conv").flops, 2.0 * 2 * 4 * 18 * 18 * 288 / 8);
  // A symbolic output leaves its bytes unknown: no cost, though the flops come from the input.
  Add("convt_sym", "aten.convolution.default", "f32", {"2", "4", "s0", "s0"},
      {"x", "w", "#None", "#[1, 1]", "#[0, 0]", "#[1, 1]", "#True", "#[0, 0]", "#1"});
  const PostGradGraph g(graph_);
  EXPECT_FALSE(LibraryOpCost(g, *g.Find("convt_sym")).has_value());
}

TEST_F(OpCostTest, SdpaAndConvolutionBackward) {
  Add("q", "", "bf16", {"2", "4", "128", "64"}, {});
  Add("k", "", "bf16", {"2", "4", "128", "64"}, {});
  Add("v", "", "bf16", {"2", "4", "128", "64"}, {});
  Add("out", "", "bf16", {"2", "4", "128", "64"}, {});
  Add("dout", "", "bf16", {"2", "4", "128", "64"}, {});
  Add("lse", "", "f32", {"2", "4", "128"}, {});
  Add("sdpa_bw", "aten._scaled_dot_product_flash_attention_backward.default", "bf16",
      {"2", "4", "128", "64"}, {"dout", "q", "k", "v", "out", "lse"});
  // flop_counter's five bmms: 2·b·h·Sq·Sk·(3·d + 2·dv) = 2·8·128·128·320.
  EXPECT_EQ(Cost("sdpa_bw").flops, 83886080);
  // Reads dO, Q, K, V, O and the logsumexp; writes dQ, dK, dV: (2·dO + 2·(Q + K + V))·2 + 1024·4.
  EXPECT_EQ(Cost("sdpa_bw").bytes, 1052672);
  EXPECT_EQ(Cost("sdpa_bw").dtype, "bf16");

  Add("x", "", "f32", {"2", "3", "32", "32"}, {});
  Add("w", "", "f32", {"8", "3", "3", "3"}, {});
  Add("dy", "", "f32", {"2", "8", "30", "30"}, {});
  for (const char* name : {"conv_bw", "conv_bw_input"}) {
    v1::Node* node =
        Add(name, "aten.convolution_backward.default", "f32", {"2", "3", "32", "32"},
            {"dy", "x", "w", "#[8]", "#[1, 1]", "#[0, 0]", "#[1, 1]", "#False", "#[0, 0]", "#1"});
    v1::ArgList* mask = node->add_args()->mutable_list();  // output_mask
    for (const bool on : {true, std::string(name) == "conv_bw", std::string(name) == "conv_bw"}) {
      mask->add_items()->set_literal(on ? "True" : "False");
    }
  }
  // grad_input and grad_weight each cost the forward's 2·14400·27 (ConvolutionAndSdpa);
  // reads dy, w, x (14400 + 216 + 6144), writes dx, dw, db (6144 + 216 + 8), 4 B each.
  EXPECT_EQ(Cost("conv_bw").flops, 2 * 777600);
  EXPECT_EQ(Cost("conv_bw").bytes, 108512);
  EXPECT_EQ(Cost("conv_bw_input").flops, 777600);
  EXPECT_EQ(Cost("conv_bw_input").bytes, (14400 + 216 + 6144) * 4);  // reads dy, w; writes dx
}

TEST_F(OpCostTest, LibraryCallWithoutAFormulaIsNoPointwiseWork) {
  Add("a", "", "f8e4m3fn", {"16", "64"}, {});
  Add("b", "", "f8e4m3fn", {"64", "256"}, {});
  Add("neg", "aten.neg.default", "f8e4m3fn", {"16", "64"}, {"a"});
  Add("scaled_mm", "aten._scaled_mm.default", "bf16", {"16", "256"}, {"neg", "b"});
  Add("relu", "aten.relu.default", "bf16", {"16", "256"}, {"scaled_mm"});
  const PostGradGraph g(graph_);
  const std::vector<KernelCost> kernels = EstimateKernels(g);
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[1].name, "scaled_mm");
  EXPECT_EQ(kernels[1].op, "aten._scaled_mm.default");
  EXPECT_EQ(kernels[1].flops, 0);
  EXPECT_FALSE(kernels[1].cost_known);
}

TEST_F(OpCostTest, PointwiseRunIsOneKernelByItsBytes) {
  Add("a", "", "f32", {"16", "64"}, {});
  Add("w", "", "f32", {"64", "256"}, {});
  Add("mm", "aten.mm.default", "f32", {"16", "256"}, {"a", "w"});
  Add("relu", "aten.relu.default", "f32", {"16", "256"}, {"mm"});
  Add("view", "aten.view.default", "f32", {"4096"}, {"relu"});
  Add("mul", "aten.mul.Tensor", "f32", {"4096"}, {"view"});
  graph_.add_nodes()->set_op("output");
  graph_.mutable_nodes(graph_.nodes_size() - 1)->add_args()->set_node("mul");
  const PostGradGraph g(graph_);
  const std::vector<KernelCost> kernels = EstimateKernels(g);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[1].name, "fused: relu … mul");
  // Reads mm (4096·4), writes mul (4096·4); the relu output stays in registers.
  EXPECT_EQ(kernels[1].bytes, 32768);
  EXPECT_EQ(kernels[1].flops, 8192);
}

TEST_F(OpCostTest, ALatticeOfViewsInARunIsWalkedOnce) {
  Add("a", "", "f32", {"16", "64"}, {});
  Add("relu", "aten.relu.default", "f32", {"16", "64"}, {"a"});
  // Views that name two nodes each (a list argument can, in an untrusted capture): v_i and u_i
  // both read v_{i-1} and u_{i-1}, 2^60 paths from relu to the sum, none leaving the run.
  std::string v = "relu", u = "relu";
  for (int i = 1; i <= 60; ++i) {
    const std::string nv = "v_" + std::to_string(i), nu = "u_" + std::to_string(i);
    Add(nv, "aten.view.default", "f32", {"16", "64"}, {v.c_str(), u.c_str()});
    Add(nu, "aten.view.default", "f32", {"16", "64"}, {u.c_str(), v.c_str()});
    v = nv;
    u = nu;
  }
  Add("sum", "aten.sum.default", "f32", {}, {v.c_str()});
  graph_.add_nodes()->set_op("output");
  graph_.mutable_nodes(graph_.nodes_size() - 1)->add_args()->set_node("sum");
  const PostGradGraph g(graph_);
  const std::vector<KernelCost> kernels = EstimateKernels(g);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].name, "fused: relu … sum");
  // Reads a (1024·4), writes the sum (4); relu only reaches the sum inside the kernel.
  EXPECT_EQ(kernels[0].bytes, 4100);
  EXPECT_EQ(kernels[0].flops, 1025);
}

// A fused kernel is in the dtype of what it writes: a run that starts from an index (i64, an
// iota or a comparison's input) and writes f32 is an f32 kernel.
TEST_F(OpCostTest, AFusedKernelTakesItsDtypeFromItsOutput) {
  Add("idx", "", "i64", {"16", "64"}, {});
  Add("x", "", "f32", {"16", "64"}, {});
  Add("shift", "aten.add.Tensor", "i64", {"16", "64"}, {"idx"});
  Add("as_f", "prims.convert_element_type.default", "f32", {"16", "64"}, {"shift"});
  Add("mul", "aten.mul.Tensor", "f32", {"16", "64"}, {"as_f", "x"});
  graph_.add_nodes()->set_op("output");
  graph_.mutable_nodes(graph_.nodes_size() - 1)->add_args()->set_node("mul");
  const PostGradGraph g(graph_);
  const std::vector<KernelCost> kernels = EstimateKernels(g);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].name, "fused: shift … mul");
  EXPECT_EQ(kernels[0].dtype, "f32");
}

TEST_F(OpCostTest, LibraryCallWithASymbolicShapeEndsTheRunAndIsNotEstimated) {
  Add("a", "", "f32", {"s0", "64"}, {});
  Add("x", "", "f32", {"16", "64"}, {});
  Add("w", "", "f32", {"64", "256"}, {});
  Add("neg", "aten.neg.default", "f32", {"64", "256"}, {"w"});
  Add("mm", "aten.mm.default", "f32", {"s0", "256"}, {"a", "neg"});
  Add("mm_1", "aten.mm.default", "f32", {"16", "256"}, {"x", "neg"});
  Add("relu", "aten.relu.default", "f32", {"16", "256"}, {"mm_1"});
  const PostGradGraph g(graph_);
  const std::vector<KernelCost> kernels = EstimateKernels(g);
  ASSERT_EQ(kernels.size(), 4u);
  EXPECT_EQ(kernels[0].name, "neg");  // the run ends at the GEMM, which is not pointwise work
  EXPECT_EQ(kernels[1].name, "mm");
  EXPECT_EQ(kernels[1].op, "aten.mm.default");
  EXPECT_EQ(kernels[1].flops, 0);
  EXPECT_FALSE(kernels[1].cost_known);
  EXPECT_EQ(kernels[2].name, "mm_1");
  EXPECT_TRUE(kernels[2].cost_known);

  // The pass leaves the GEMM off the chart and says so; it still counts as the graph's first
  // extern_kernels.mm, so mm_1 pairs with the second runtime estimate.
  v1::SessionCapture capture;
  capture.mutable_session()->set_gpu("A100-SXM-80GB");
  capture.add_compiles()->set_id("0/0");
  v1::Graph* graph = capture.add_graphs();
  *graph = graph_;
  graph->set_id("0/0/inductor_post_grad_graph");
  graph->set_compile_id("0/0");
  graph->set_stage(v1::Graph::POST_GRAD);
  for (const double us : {5.0, 7.0}) {
    v1::Kernel* k = capture.add_kernels();
    k->set_name("extern_kernels.mm");
    k->set_graph_id("0/0/inductor_post_grad_graph");
    k->set_estimated_us(us);
  }
  const v1::RooflineSection s = testing::RunPassOk(RooflinePass(), capture).roofline();
  ASSERT_EQ(s.kernels_size(), 3);
  EXPECT_EQ(s.kernels(0).name(), "neg");
  EXPECT_EQ(s.kernels(1).name(), "mm_1");
  EXPECT_EQ(s.kernels(1).time_us(), 7);
  EXPECT_THAT(s.note(), HasSubstr("1 kernel has no estimate (a size with no value in the log, "
                                  "such as an unbacked symbol; a library op with no formula "
                                  "here; or a call Inductor runs as it is: a custom op, a "
                                  "higher-order op such as `cond`, an op Inductor falls back "
                                  "on such as an FFT, linear algebra, 3-D pooling or an op on "
                                  "complex numbers), so it is not on the chart: mm."));
}

// torch.cond's post-grad graph (torch 2.6): the predicate's reduction, then the cond call, whose
// branches are subgraphs; and a torch.library custom op between two pointwise ops. Neither is
// pointwise work Inductor fuses: each ends the run before it and has no estimate.
TEST_F(OpCostTest, HigherOrderAndCustomOpsEndTheRunAndAreNotEstimated) {
  Add("x", "", "f32", {"4", "16"}, {});
  Add("sum_1", "aten.sum.default", "f32", {}, {"x"});
  Add("gt", "aten.gt.Scalar", "b8", {}, {"sum_1"});
  Add("cond", "higher_order.cond", "", {}, {"gt"});
  Add("getitem", "getitem", "f32", {"4", "16"}, {"cond"});
  Add("neg", "aten.neg.default", "f32", {"4", "16"}, {"getitem"});
  Add("clip", "mylib.scaled_clip.default", "f32", {"4", "16"}, {"neg"});
  Add("relu", "aten.relu.default", "f32", {"4", "16"}, {"clip"});
  Add("mul", "operator.mul", "", {}, {"relu"});  // a Python function, not an op
  // PT2E quantization's (de)quantize ops, which Inductor lowers into its fused kernels.
  Add("q", "quantized_decomposed.quantize_per_tensor.default", "u8", {"4", "16"}, {"relu"});
  const std::vector<KernelCost> kernels = EstimateKernels(PostGradGraph(graph_));
  std::vector<std::string> names;
  for (const KernelCost& k : kernels) names.push_back(k.name);
  EXPECT_THAT(names, ElementsAre("fused: sum_1 … gt", "cond", "neg", "clip", "fused: relu … q"));
  EXPECT_FALSE(kernels[1].cost_known);
  EXPECT_EQ(kernels[1].op, "higher_order.cond");
  EXPECT_FALSE(kernels[1].matmul);
  EXPECT_TRUE(kernels[2].cost_known);
  EXPECT_FALSE(kernels[3].cost_known);
  EXPECT_EQ(kernels[3].dtype, "f32");
}

// A spectral filter and a whitening step (a torch 2.6 sandbox scene's post-grad graph, trimmed):
// the FFTs and the eigendecomposition are aten ops Inductor falls back on, each a kernel of its own
// with no estimate, not the ends of a fused run; sort and topk likewise; and so is the product of
// complex spectra between the FFTs, since Inductor generates no code for complex tensors.
TEST_F(OpCostTest, OpsInductorFallsBackOnEndTheRun) {
  Add("x", "", "f32", {"64", "32"}, {});
  Add("fft", "aten._fft_r2c.default", "c64", {"64", "17"}, {"x"});
  Add("zero", "aten.mul.Tensor", "c64", {"64", "17"}, {"fft"});
  Add("ifft", "aten._fft_c2r.default", "f32", {"64", "32"}, {"zero"});
  Add("div", "aten.div.Tensor", "f32", {"64", "32"}, {"ifft"});
  Add("eigh", "aten._linalg_eigh.default", "f32", {"32", "32"}, {"div"});
  Add("sort", "aten.sort.default", "f32", {"64", "32"}, {"div"});
  Add("neg", "aten.neg.default", "f32", {"64", "32"}, {"sort"});
  const std::vector<KernelCost> kernels = EstimateKernels(PostGradGraph(graph_));
  std::vector<std::string> names;
  for (const KernelCost& k : kernels) names.push_back(k.name);
  EXPECT_THAT(names, ElementsAre("fft", "zero", "ifft", "div", "eigh", "sort", "neg"));
  for (int i : {0, 1, 2, 4, 5}) EXPECT_FALSE(kernels[i].cost_known) << names[i];
  EXPECT_TRUE(kernels[3].cost_known);
  EXPECT_TRUE(kernels[6].cost_known);
}

// The fallbacks torch 2.6 makes of every call, not only the FFTs (a sandbox scene's post-grad
// graphs, trimmed): a spatial transformer's grid_sampler_2d_backward and an adaptive pool's
// backward end the fused run around them; a video model's 3-D max pool is a kernel of its own, not
// the end of the ReLU's run; and in Llama's complex-number RoPE, view_as_complex and view_as_real
// are views while the complex product between them is aten's kernel. A 2-D adaptive pool's forward,
// which Inductor lowers for small kernels, stays in its run.
TEST_F(OpCostTest, EveryOpInductorAlwaysFallsBackOnIsAKernelOfItsOwn) {
  Add("g", "", "f32", {"4", "8", "32", "32"}, {});
  Add("le", "aten.le.Scalar", "b8", {"4", "8", "32", "32"}, {"g"});
  Add("where", "aten.where.self", "f32", {"4", "8", "32", "32"}, {"le", "g"});
  Add("pool_bw", "aten._adaptive_avg_pool2d_backward.default", "f32", {"4", "8", "32", "32"},
      {"where"});
  Add("grid_bw", "aten.grid_sampler_2d_backward.default", "f32", {"4", "3", "16", "16"},
      {"pool_bw"});
  Add("mul", "aten.mul.Tensor", "f32", {"4", "3", "16", "16"}, {"grid_bw"});
  Add("v", "", "f32", {"2", "4", "8", "16", "16"}, {});
  Add("relu", "aten.relu.default", "f32", {"2", "4", "8", "16", "16"}, {"v"});
  Add("pool3d", "aten.max_pool3d_with_indices.default", "f32", {"2", "4", "4", "8", "8"}, {"relu"});
  Add("pool2d", "aten._adaptive_avg_pool2d.default", "f32", {"2", "4", "7", "7"}, {"relu"});
  Add("q", "", "f32", {"2", "16", "4", "16"}, {});
  Add("qc", "aten.view_as_complex.default", "c64", {"2", "16", "4", "8"}, {"q"});
  Add("rot", "aten.mul.Tensor", "c64", {"2", "16", "4", "8"}, {"qc"});
  Add("real", "aten.view_as_real.default", "f32", {"2", "16", "4", "8", "2"}, {"rot"});
  Add("neg", "aten.neg.default", "f32", {"2", "16", "4", "8", "2"}, {"real"});
  const std::vector<KernelCost> kernels = EstimateKernels(PostGradGraph(graph_));
  std::vector<std::string> names;
  for (const KernelCost& k : kernels) names.push_back(k.name);
  // (the ReLU's run starts at the mul before it, as runs follow graph order; a view alone is
  // no kernel)
  EXPECT_THAT(names, ElementsAre("fused: le … where", "pool_bw", "grid_bw", "fused: mul … relu",
                                 "pool3d", "pool2d", "rot", "neg"));
  for (const KernelCost& k : kernels) {
    const bool fallback =
        k.name == "pool_bw" || k.name == "grid_bw" || k.name == "pool3d" || k.name == "rot";
    EXPECT_EQ(k.cost_known, !fallback) << k.name;
  }
}

// --- The pass ------------------------------------------------------------------------------

TEST(RooflinePassTest, KernelsOnEachSideOfTheRidge) {
  v1::SessionCapture capture;
  capture.mutable_session()->set_gpu("A100-SXM-80GB");
  v1::Kernel* memory = capture.add_kernels();
  memory->set_name("triton_poi_fused_add_0");
  memory->set_flops(1e9);
  memory->set_bytes(1e9);  // 1 FLOP/B < the FP32 ridge, 9.56
  memory->set_measured_us(1000);
  v1::Kernel* compute = capture.add_kernels();
  compute->set_name("triton_tem_fused_mm_1");
  compute->set_flops(1e12);
  compute->set_bytes(1e9);  // 1000 FLOP/B
  const v1::AnalysisReport report = testing::RunPassOk(RooflinePass(), capture);
  const v1::RooflineSection& s = report.roofline();
  ASSERT_EQ(s.status(), v1::OK);
  ASSERT_EQ(s.kernels_size(), 2);
  EXPECT_EQ(Word(s.kernels(0).bound()), "memory");
  EXPECT_DOUBLE_EQ(s.kernels(0).intensity(), 1);
  EXPECT_DOUBLE_EQ(s.kernels(0).attainable(), 2039e9);
  EXPECT_DOUBLE_EQ(s.kernels(0).achieved(), 1e12);  // 1e9 FLOP in 1 ms
  EXPECT_EQ(Word(s.kernels(0).time_source()), "measured");
  EXPECT_FALSE(s.kernels(0).estimated());
  EXPECT_EQ(Word(s.kernels(1).bound()), "compute");
  EXPECT_DOUBLE_EQ(s.kernels(1).attainable(), 19.5e12);
  EXPECT_EQ(s.kernels(1).achieved(), 0);  // no time
}

// Kernels whose figures are not finite are left out, and a section left with nothing to plot says
// that they were (not that no kernel carried figures).
TEST(RooflinePassTest, KernelsWhoseFiguresAreNotFiniteAreLeftOutAndTheSkipSaysSo) {
  v1::SessionCapture capture;
  capture.mutable_session()->set_gpu("A100-SXM-80GB");
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [flops, bytes] : std::vector<std::pair<double, double>>{
           {1, 5e-324}, {1e308, 1e-300}, {inf, 1}, {std::nan(""), 1}}) {
    v1::Kernel* k = capture.add_kernels();
    k->set_name(absl::StrCat("triton_poi_", capture.kernels_size()));
    k->set_flops(flops);
    k->set_bytes(bytes);
  }
  const v1::RooflineSection s = testing::RunPassOk(RooflinePass(), capture).roofline();
  EXPECT_EQ(s.status(), v1::SKIPPED);
  EXPECT_EQ(s.kernels_size(), 0);
  EXPECT_THAT(s.reason(), HasSubstr("no kernel carried finite flops/bytes to plot (4 kernels left "
                                    "out, named in the note)"));
  EXPECT_THAT(s.note(), HasSubstr("so they are left out: triton_poi_1, triton_poi_2, triton_poi_3 "
                                  "and 1 more."));
}

// A bf16 4096³ mm measured at 1 ms on an A100: 137 TFLOP/s, far above the FP32 roof (19.5).
v1::SessionCapture MeasuredBf16Mm() {
  v1::SessionCapture capture;
  capture.mutable_session()->set_gpu("A100-SXM-80GB");
  v1::Kernel* k = capture.add_kernels();
  k->set_name("triton_tem_fused_mm_0");
  k->set_flops(2.0 * 4096 * 4096 * 4096);
  k->set_bytes(3.0 * 4096 * 4096 * 2);
  k->set_measured_us(1000);
  return capture;
}

TEST(RooflinePassTest, CapturedKernelTakesItsDtypeFromItsSourceNodes) {
  v1::SessionCapture capture = MeasuredBf16Mm();
  capture.add_compiles()->set_id("0/0");
  v1::Graph* graph = capture.add_graphs();
  graph->set_id("0/0/inductor_post_grad_graph");
  graph->set_compile_id("0/0");
  graph->set_stage(v1::Graph::POST_GRAD);
  for (const char* name : {"a", "b", "mm"}) {
    v1::Node* node = graph->add_nodes();
    node->set_name(name);
    node->set_op(std::string(name) == "mm" ? "call_function" : "placeholder");
    node->set_target(std::string(name) == "mm" ? "aten.mm.default" : name);
    node->mutable_meta()->set_dtype("bf16");
    for (int i = 0; i < 2; ++i) node->mutable_meta()->add_shape("4096");
  }
  graph->mutable_nodes(2)->add_args()->set_node("a");
  graph->mutable_nodes(2)->add_args()->set_node("b");
  capture.mutable_kernels(0)->set_graph_id("0/0/inductor_post_grad_graph");
  capture.mutable_kernels(0)->add_source_nodes("mm");
  const v1::RooflineSection s = testing::RunPassOk(RooflinePass(), capture).roofline();
  ASSERT_EQ(s.kernels_size(), 1);
  const v1::RooflineKernel& k = s.kernels(0);
  EXPECT_EQ(k.dtype(), "bf16");
  EXPECT_DOUBLE_EQ(k.achieved(), 2.0 * 4096 * 4096 * 4096 / 1e-3);
  EXPECT_DOUBLE_EQ(k.attainable(), 312e12);  // the bf16 tensor-core roof
  EXPECT_LE(k.achieved(), k.attainable());
  EXPECT_EQ(Word(k.bound()), "compute");
  EXPECT_DOUBLE_EQ(s.peak_flops(), 312e12);
}

TEST(RooflinePassTest, KernelFasterThanItsRoofGetsNoRoof) {
  // No source nodes, so no dtype: the FP32 roof would sit below the measurement.
  const v1::RooflineSection s = testing::RunPassOk(RooflinePass(), MeasuredBf16Mm()).roofline();
  ASSERT_EQ(s.kernels_size(), 1);
  const v1::RooflineKernel& k = s.kernels(0);
  EXPECT_GT(k.achieved(), 100e12);
  EXPECT_EQ(k.attainable(), 0);
  EXPECT_EQ(k.bound(), v1::RooflineKernel::BOUND_UNKNOWN);
  EXPECT_GT(k.intensity(), 0);
  EXPECT_THAT(s.note(), HasSubstr("1 kernel ran faster than the roof of their dtype"));
  EXPECT_THAT(s.note(), HasSubstr(": triton_tem_fused_mm_0."));
}

TEST(RooflinePassTest, HeroHasNoFeaturesSoEstimatesFromThePostGradGraph) {
  const v1::AnalysisReport report =
      testing::RunPassOk(RooflinePass(), testing::LoadHero("head.cls.json"));
  const v1::RooflineSection& s = report.roofline();
  ASSERT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.gpu(), "A100-SXM-80GB");
  EXPECT_THAT(s.note(), HasSubstr("Estimated from 1 post-grad graph"));
  EXPECT_DOUBLE_EQ(s.peak_flops(), 19.5e12);  // fp32 GEMMs: no TF32 by default
  EXPECT_DOUBLE_EQ(s.bandwidth(), 2039e9);
  ASSERT_GE(s.kernels_size(), 6);
  for (const v1::RooflineKernel& k : s.kernels()) EXPECT_TRUE(k.estimated()) << k.name();
  // The first GEMM: addmm(resid [16,256], x [16,64], W1ᵀ [64,256]).
  const v1::RooflineKernel& gemm = s.kernels(0);
  EXPECT_EQ(gemm.op(), "aten.addmm.default");
  EXPECT_EQ(gemm.flops(), 2.0 * 16 * 256 * 64);
  EXPECT_EQ(gemm.bytes(), (16 * 64 + 64 * 256 + 16 * 256 + 16 * 256) * 4.0);
  EXPECT_EQ(Word(gemm.bound()), "memory");
}

TEST(RooflinePassTest, TheSessionsGpuGivesTheRoofsAndAnUnknownOneIsSaid) {
  const v1::SessionCapture hero = testing::LoadHero("head.cls.json");
  const v1::RooflineSection h100 = RunWithGpu(hero, "H100").roofline();
  EXPECT_EQ(h100.gpu(), "H100");
  EXPECT_DOUBLE_EQ(h100.bandwidth(), 3350e9);
  const v1::RooflineSection unknown = RunWithGpu(hero, "RTX-9999").roofline();
  EXPECT_EQ(unknown.status(), v1::OK);
  EXPECT_THAT(unknown.note(), HasSubstr("\"RTX-9999\" is not in the spec table"));
  EXPECT_THAT(unknown.note(), HasSubstr("H100-SXM-80GB"));
  EXPECT_EQ(unknown.peak_flops(), 0);
  ASSERT_GT(unknown.kernels_size(), 0);
  EXPECT_EQ(unknown.kernels(0).bound(), v1::RooflineKernel::BOUND_UNKNOWN);
  EXPECT_GT(unknown.kernels(0).intensity(), 0);
}

// A CPU session names no GPU: the roofline is modelled for the default one (roofs, bounds, the
// chart) and says so, with the names --gpu knows.
TEST(RooflinePassTest, NoGpuNamedIsModelledForTheDefaultAndSaysSo) {
  v1::SessionCapture hero = testing::LoadHero("head.cls.json");
  hero.mutable_session()->clear_gpu();
  const v1::RooflineSection s = testing::RunPassOk(RooflinePass(), hero).roofline();
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_TRUE(s.gpu_assumed());
  EXPECT_EQ(s.gpu(), "H100-SXM-80GB");
  EXPECT_THAT(s.note(), HasSubstr("The session names no GPU: modelled for H100-SXM-80GB"));
  EXPECT_THAT(
      s.note(),
      HasSubstr("A100-SXM-80GB, A100-SXM-40GB, A100-PCIe-40GB, A100-PCIe-80GB, H100-SXM-80GB"));
  EXPECT_GT(s.peak_flops(), 0);
  ASSERT_GT(s.kernels_size(), 0);
  EXPECT_NE(s.kernels(0).bound(), v1::RooflineKernel::BOUND_UNKNOWN);
  hero.mutable_session()->set_gpu("A100-SXM-80GB");
  EXPECT_FALSE(testing::RunPassOk(RooflinePass(), hero).roofline().gpu_assumed());
}

TEST(RooflinePassTest, InductorRuntimeEstimatesGiveLibraryCallsATime) {
  v1::SessionCapture hero = testing::LoadHero("head.cls.json");
  v1::Kernel* k = hero.add_kernels();
  k->set_name("extern_kernels.addmm");
  k->set_graph_id("0/0/inductor_post_grad_graph");
  k->set_estimated_us(2);
  const v1::RooflineSection s = testing::RunPassOk(RooflinePass(), hero).roofline();
  ASSERT_GT(s.kernels_size(), 0);
  EXPECT_EQ(Word(s.kernels(0).time_source()), "estimated");
  EXPECT_DOUBLE_EQ(s.kernels(0).achieved(), 2.0 * 16 * 256 * 64 / 2e-6);
  EXPECT_THAT(s.note(), HasSubstr("1 kernel carries only Inductor's runtime estimates"));
}

TEST(RooflinePassTest, MultiRankRuntimeFixture) {
  const std::string log = testing::FixturePath(
      "torch_trace/tlparse-corpus/tlparse/multi_rank_runtime/dedicated_log_torch_trace_rank_0.log");
  absl::StatusOr<v1::SessionCapture> capture = ImportTraceFile(log, ImportOptions());
  ASSERT_TRUE(capture.ok()) << capture.status();
  ASSERT_GT(capture->kernels_size(), 0);
  const v1::RooflineSection s = RunWithGpu(*capture, "H100").roofline();
  EXPECT_THAT(s.note(), HasSubstr("carry only Inductor's runtime estimates"));
  // Its kernels carry no flops/bytes; the first compile's after_post_grad_graph gives them, and
  // its extern_kernels.mm runtime estimates (6885.8 µs each) give the two mm a time.
  ASSERT_EQ(s.status(), v1::OK);
  ASSERT_EQ(s.kernels_size(), 4);
  const v1::RooflineKernel& mm = s.kernels(0);
  EXPECT_EQ(mm.op(), "aten.mm.default");
  EXPECT_EQ(mm.dtype(), "f16");
  EXPECT_EQ(mm.flops(), 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(Word(mm.time_source()), "estimated");
  EXPECT_NEAR(mm.time_us(), 6885.84, 0.01);
  EXPECT_NEAR(mm.achieved(), mm.flops() / (mm.time_us() * 1e-6), 1);
  EXPECT_EQ(Word(mm.bound()), "compute");  // 341 FLOP/B > the H100's fp16 ridge, 295
}

// fixtures/torch_trace/torch-2.6/cond_gate: a torch.cond gate. Its predicate (sum, gt) is one fused
// kernel; the cond call, whose branches are subgraphs, is listed without an estimate rather than
// folded into that run.
TEST(RooflinePassTest, ACondCallIsNotPointwiseWork) {
  const v1::RooflineSection s =
      testing::RunPassOk(RooflinePass(),
                         testing::ImportFixtureLog("torch_trace/torch-2.6/cond_gate/trace.log"))
          .roofline();
  ASSERT_EQ(s.status(), v1::OK);
  std::vector<std::string> names;
  for (const v1::RooflineKernel& k : s.kernels()) names.push_back(k.name());
  EXPECT_THAT(names, ElementsAre("fused: sum_1 … gt"));
  EXPECT_THAT(s.note(), HasSubstr("so it is not on the chart: cond."));
}

// fixtures/torch_trace/torch-2.6/aot_eager: backend="aot_eager" logs no post-grad graph and no
// kernel; the skip says which backend ran rather than only what is missing.
TEST(RooflinePassTest, AnotherBackendIsWhyNothingIsPlotted) {
  const v1::AnalysisReport report = testing::RunPassOk(
      RooflinePass(), testing::ImportFixtureLog("torch_trace/torch-2.6/aot_eager/trace.log"));
  EXPECT_EQ(report.roofline().status(), v1::SKIPPED);
  EXPECT_THAT(report.roofline().reason(),
              HasSubstr("a backend other than Inductor compiled the graphs"));
}

// fixtures/torch_trace/torch-2.6/prenorm_swiglu-dynamic: post-grad sizes are s0, compiled for a
// batch of 4. At the hint the kernels cost what the static compile's (prenorm_swiglu-static, batch
// 4) do, and say that they are evaluated at s0 = 4.
TEST(RooflinePassTest, SymbolicSizesAreCostedAtTheirHints) {
  const auto totals = [](const v1::RooflineSection& s) {
    std::map<std::string, std::pair<double, double>> by_op;  // op -> (flops, bytes)
    for (const v1::RooflineKernel& k : s.kernels()) {
      by_op[k.op()].first += k.flops();
      by_op[k.op()].second += k.bytes();
    }
    return by_op;
  };
  const v1::RooflineSection dynamic =
      testing::RunPassOk(
          RooflinePass(),
          testing::ImportFixtureLog("torch_trace/torch-2.6/prenorm_swiglu-dynamic/trace.log"))
          .roofline();
  const v1::RooflineSection fixed =
      testing::RunPassOk(
          RooflinePass(),
          testing::ImportFixtureLog("torch_trace/torch-2.6/prenorm_swiglu-static/trace.log"))
          .roofline();
  ASSERT_EQ(dynamic.status(), v1::OK);
  EXPECT_EQ(totals(dynamic), totals(fixed));
  size_t at_hint = 0;
  for (const v1::RooflineKernel& k : dynamic.kernels()) {
    EXPECT_GT(k.bytes(), 0) << k.name();
    EXPECT_THAT(k.size_hints(), ::testing::AnyOf("", "s0 = 4")) << k.name();
    at_hint += k.size_hints().empty() ? 0 : 1;
  }
  EXPECT_GT(at_hint, dynamic.kernels_size() / 2);
  for (const v1::RooflineKernel& k : fixed.kernels()) EXPECT_EQ(k.size_hints(), "") << k.name();
  EXPECT_THAT(dynamic.note(), HasSubstr("evaluated at the size hints torch logged when it created "
                                        "each symbol (s0 = 4)"));
  EXPECT_THAT(dynamic.note(), ::testing::Not(HasSubstr("no estimate")));
}

// Without the hints the sizes have no value: no kernel gets a figure computed as if s0 were 0
// (fused runs once showed 0.00 FLOP/B); each is listed as not estimated.
TEST(RooflinePassTest, SizesWithoutAHintGiveNoFigureRatherThanAZeroOne) {
  v1::SessionCapture capture =
      testing::ImportFixtureLog("torch_trace/torch-2.6/prenorm_swiglu-dynamic/trace.log");
  for (v1::Compile& compile : *capture.mutable_compiles()) compile.clear_symbols();
  const v1::RooflineSection s = testing::RunPassOk(RooflinePass(), capture).roofline();
  for (const v1::RooflineKernel& k : s.kernels()) {
    EXPECT_GT(k.bytes(), 0) << k.name();
  }
  EXPECT_THAT(s.note(), HasSubstr("no estimate (a size with no value in the log"));
}

}  // namespace
}  // namespace cl

#include "tests/service/render/hero_report.h"

namespace cl::testing {
namespace {

namespace v1 = ::compile_lens::v1;

constexpr char kHeroFile[] = "examples/hero_scene.py";

void SetLine(v1::Location* location, int line) {
  location->set_file(kHeroFile);
  location->set_line(line);
}

}  // namespace

v1::AnalysisReport HeroReport() {
  v1::AnalysisReport report;

  v1::Metadata* metadata = report.mutable_metadata();
  metadata->set_schema("0.5.0");
  metadata->set_session_id("00000000-0000-4000-8000-00000000he50");
  metadata->set_torch_version("2.12.0");
  metadata->set_started_at("2026-01-01T00:00:00Z");
  metadata->set_gpu("A100-SXM-80GB");
  metadata->set_has_base(true);

  v1::IrDiffSection* ir_diff = report.mutable_ir_diff();
  ir_diff->set_status(v1::OK);
  ir_diff->set_match_coverage(1.0);
  ir_diff->set_anchor_uniqueness(1.0);
  v1::NodeChange* sub = ir_diff->add_modified();
  sub->set_node("sub");
  sub->set_op("aten.sub.Tensor");
  sub->set_change("operands reordered");
  SetLine(sub->mutable_location(), 89);
  sub->set_confidence(1.0);

  v1::RecompileSection* recompile = report.mutable_recompile();
  recompile->set_status(v1::OK);
  recompile->set_total(3);
  recompile->set_categories(1);
  recompile->mutable_frame()->set_name("forward");
  SetLine(recompile->mutable_frame()->mutable_location(), 86);
  recompile->mutable_frame()->set_recompiles(3);
  *recompile->add_frames() = recompile->frame();
  v1::RecompileCluster* cluster = recompile->add_clusters();
  cluster->set_category(v1::RecompileCategory::SIZE);
  cluster->set_count(3);
  cluster->set_variable("x");
  cluster->set_axis("x[0]");
  for (const char* t : {"16→32", "16→64", "16→128"}) cluster->add_transitions(t);
  cluster->set_frame("forward");
  SetLine(cluster->mutable_location(), 86);
  v1::Suggestion* suggestion = recompile->add_suggestions();
  suggestion->set_text(
      "`x` dim 0 keeps changing size — mark it dynamic to stop the recompiles: "
      "`torch._dynamo.mark_dynamic(x, 0)` (or compile with `dynamic=True`).");
  suggestion->set_evidence("size cluster on x[0] — 3 recompiles (values 16→32, 16→64, 16→128)");
  suggestion->set_category(v1::RecompileCategory::SIZE);

  report.mutable_cache_stability()->set_status(v1::OK);

  v1::DivergenceSection* divergence = report.mutable_divergence();
  divergence->set_status(v1::OK);
  divergence->set_first_divergent_layer("blocks.0.norm");
  divergence->set_max_abs_diff(5.033);
  divergence->set_layers_compared(2);
  divergence->mutable_cause()->set_kind(v1::BisectCulprit::PASS);
  divergence->mutable_cause()->set_name("post_grad_custom_post_pass");

  v1::LintSection* lint = report.mutable_lint();
  lint->set_status(v1::OK);
  lint->set_escalated(false);
  v1::LintFinding* finding = lint->add_findings();
  finding->set_pattern("in_place_op_on_alias");
  SetLine(finding->mutable_location(), 96);
  finding->set_trigger("—");
  finding->set_confidence("ast_match");

  v1::FusionSection* fusion = report.mutable_fusion();
  fusion->set_status(v1::OK);
  v1::FusionOpportunity* opportunity = fusion->add_opportunities();
  opportunity->set_pattern("GEMM → +resid → RMSNorm → GEMM");
  opportunity->set_count(3);
  opportunity->mutable_location()->set_file(kHeroFile);
  opportunity->mutable_location()->set_line_start(69);
  opportunity->mutable_location()->set_line_end(72);
  opportunity->mutable_shape()->set_m(16);
  opportunity->mutable_shape()->set_n(256);
  opportunity->mutable_shape()->set_k0(64);
  opportunity->mutable_shape()->set_k1(64);
  // fp32: GEMM1 84 KiB + add 48 + norm 48 + GEMM2 84 unfused; fusing drops two round trips.
  opportunity->set_hbm_bytes_before(270336);
  opportunity->set_hbm_bytes_after(188416);
  opportunity->set_speedup_bound(1.43);
  opportunity->set_change(
      "fold per-row 1/rms into the second GEMM epilogue — so the normalized activation never "
      "round-trips HBM between the norm and the second GEMM.");
  opportunity->set_how(
      "suggest-only — implement with a fused epilogue kernel (a Triton or CUTLASS epilogue), or "
      "check whether `torch.compile`'s max-autotune already performs it. This tool reads the "
      "graph; it never rewrites it or runs a kernel.");

  report.mutable_roofline()->set_status(v1::OK);
  report.mutable_roofline()->set_gpu("A100-SXM-80GB");

  v1::RawSection* raw = report.mutable_raw();
  raw->set_schema("0.5.0");
  raw->set_recompilations(3);
  raw->set_compiled_graphs(1);
  raw->set_graph_breaks(0);
  raw->set_iterations(3);
  return report;
}

}  // namespace cl::testing

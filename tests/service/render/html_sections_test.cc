// The page's sections beyond the hero: SKIPPED and ERROR statuses, an empty report, and the
// variants the hero does not show (no findings, several findings, escalated lint, kernels,
// cache-limit hits, graph breaks, diagnostics, long tables).
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/render/html.h"
#include "tests/service/render/hero_report.h"
#include "tests/service/render/page_text.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// The markup of one section, from its <details> to its </details>.
std::string Section(const std::string& page, const std::string& id) {
  const size_t start = page.find("<details open id=\"" + id + "\">");
  if (start == std::string::npos) return "";
  return page.substr(start, page.find("</details>", start) - start);
}

std::string SectionText(const v1::AnalysisReport& report, const std::string& id) {
  return testing::VisibleText(Section(RenderHtml(report), id));
}

TEST(HtmlSectionsTest, SkippedSectionShowsItsReasonMuted) {
  v1::AnalysisReport report = testing::HeroReport();
  report.mutable_ir_diff()->Clear();
  report.mutable_ir_diff()->set_status(v1::SKIPPED);
  report.mutable_ir_diff()->set_reason("no base capture");
  EXPECT_THAT(Section(RenderHtml(report), "ir-diff"),
              HasSubstr("<p class=\"muted\">Skipped: no base capture</p>"));
}

TEST(HtmlSectionsTest, FailedSectionSaysSoVisiblyAndTheRestStands) {
  v1::AnalysisReport report = testing::HeroReport();
  report.mutable_divergence()->set_status(v1::ERROR);
  report.mutable_divergence()->set_reason("bisect record names no step");
  const std::string page = RenderHtml(report);
  EXPECT_THAT(Section(page, "divergence"),
              HasSubstr("<p class=\"warn\">This pass failed: bisect record names no step</p>"));
  EXPECT_THAT(Section(page, "divergence"), Not(HasSubstr("<table>")));
  EXPECT_THAT(Section(page, "recompile"), HasSubstr("16→32, 16→64, 16→128"));
}

// The header's count of failures says which were torch.export's, as the verdict does.
TEST(HtmlSectionsTest, TheHeaderCountsFailedExportsApart) {
  v1::AnalysisReport report;
  v1::FailuresSection* failures = report.mutable_failures();
  failures->set_status(v1::OK);
  failures->add_failed()->set_exported(true);
  failures->add_failed()->set_exported(true);
  const auto header = [&] {
    const std::string page = RenderHtml(report);
    return page.substr(0, page.find("</header>"));
  };
  EXPECT_THAT(header(), HasSubstr("<strong>2 exports failed</strong>"));
  failures->add_failed();
  EXPECT_THAT(header(), HasSubstr("<strong>1 compile and 2 exports failed</strong>"));
}

TEST(HtmlSectionsTest, EmptyReportRendersEverySection) {
  const std::string page = RenderHtml(v1::AnalysisReport());
  for (const char* id : {"metadata", "ir-diff", "recompile", "cache-stability", "divergence",
                         "lint", "fusion", "roofline", "raw"}) {
    EXPECT_THAT(page, HasSubstr(absl::StrCat("<details open id=\"", id, "\">"))) << id;
  }
  EXPECT_THAT(page, Not(HasSubstr("id=\"diagnostics\"")));
  EXPECT_THAT(SectionText(v1::AnalysisReport(), "lint"),
              HasSubstr("No result: this pass did not run."));
  EXPECT_THAT(testing::SectionTexts(page)["header"], "compile-lens session report torch unknown");
  EXPECT_TRUE(testing::IsValidUtf8(page));
}

TEST(HtmlSectionsTest, DiagnosticsComeAfterRawOnlyWhenThereAreAny) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::Diagnostic* d = report.add_diagnostics();
  d->set_severity(v1::Diagnostic::WARNING);
  d->set_where("trace.log:1234");
  d->set_message("bad md5 on a payload line");
  const std::string page = RenderHtml(report);
  EXPECT_LT(page.find("id=\"raw\""), page.find("id=\"diagnostics\""));
  EXPECT_THAT(SectionText(report, "diagnostics"),
              HasSubstr("WARNING trace.log:1234 bad md5 on a payload line"));
}

TEST(HtmlSectionsTest, NoFindingsReadAsGoodNews) {
  v1::AnalysisReport report;
  for (auto* s : std::initializer_list<google::protobuf::Message*>{
           report.mutable_ir_diff(), report.mutable_recompile(), report.mutable_cache_stability(),
           report.mutable_divergence(), report.mutable_lint(), report.mutable_fusion()}) {
    s->GetReflection()->SetEnumValue(s, s->GetDescriptor()->FindFieldByName("status"), v1::OK);
  }
  const std::string page = RenderHtml(report);
  EXPECT_THAT(Section(page, "ir-diff"),
              HasSubstr("class=\"good\">The compiled graph is unchanged"));
  EXPECT_THAT(Section(page, "recompile"), HasSubstr("class=\"good\">No recompilations."));
  EXPECT_THAT(Section(page, "cache-stability"), HasSubstr("class=\"good\">No silently-stale"));
  EXPECT_THAT(Section(page, "divergence"), HasSubstr("class=\"good\">The compiled model matches"));
  EXPECT_THAT(Section(page, "lint"), HasSubstr("class=\"good\">No known-risky pattern"));
  EXPECT_THAT(Section(page, "fusion"), HasSubstr("class=\"good\">No unfused algebraic chain"));
}

TEST(HtmlSectionsTest, RecompileShowsCacheLimitHitsAndGraphBreaks) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::CacheLimitHit* hit = report.mutable_recompile()->add_cache_limit_hits();
  hit->set_frame("forward");
  hit->mutable_location()->set_file("examples/hero_scene.py");
  hit->mutable_location()->set_line(86);
  hit->set_limit("recompile_limit");
  hit->set_value(8);
  hit->set_evidence("8 cache entries for forward");
  v1::GraphBreakSummary* brk = report.mutable_recompile()->add_graph_breaks();
  brk->set_reason("Unsupported: call_function print");
  brk->set_category(v1::GraphBreakCategory::UNSUPPORTED_CALL);
  brk->set_count(2);
  brk->set_frame("step");
  brk->mutable_location()->set_file("/abs/train.py");
  brk->mutable_location()->set_line(12);
  brk->set_remedy("move the print out of the compiled region");
  brk->set_frame_skipped(true);
  brk->set_source_line("print(f\"step {i}\")");
  const std::string text = SectionText(report, "recompile");
  EXPECT_THAT(text, HasSubstr("Cache-size limit hits (1) frame where limit value evidence forward "
                              "{repo}/examples/hero_scene.py:86 recompile_limit 8 8 cache entries "
                              "for forward"));
  EXPECT_THAT(text,
              HasSubstr("2 graph breaks in 1 group reason category count where remedy Unsupported: "
                        "call_function print (the whole frame ran eager) unsupported_call "
                        "2 step /abs/train.py:12 print(f\"step {i}\") move the print out of "
                        "the compiled region"));
  // The remedy breaks anywhere as the reason and the place do: a remedy quoting a long config name
  // (`torch._dynamo.config.capture_dynamic_output_shape_ops`) kept its column wide and squeezed
  // the reason to a few letters a line on a sandbox MoE scene.
  EXPECT_THAT(Section(RenderHtml(report), "recompile"),
              HasSubstr("<td class=\"paths\">move the print out of the compiled region</td>"));
}

// Two modules' `forward` both recompiled: the cluster table has a frame column, each row says
// where its frame is, and the headline counts the frames instead of naming one.
TEST(HtmlSectionsTest, ClustersOfSeveralFramesSayWhichFrame) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::RecompileSection* r = report.mutable_recompile();
  r->clear_clusters();
  r->clear_frames();
  for (uint32_t line : {13u, 5u}) {
    v1::RecompileFrame* f = r->add_frames();
    f->set_name("forward");
    f->set_recompiles(1);
    f->mutable_location()->set_file("cnn.py");
    f->mutable_location()->set_line(line);
    v1::RecompileCluster* c = r->add_clusters();
    c->set_category(v1::RecompileCategory::SIZE);
    c->set_count(1);
    c->set_axis("x[0]");
    c->add_transitions("2→4");
    c->set_frame("forward");
    *c->mutable_location() = f->location();
  }
  *r->mutable_frame() = r->frames(0);
  r->set_total(2);
  const std::string text = SectionText(report, "recompile");
  EXPECT_THAT(text, HasSubstr("Recompiling 2 frames; most: forward (1) at {repo}/cnn.py:13 ."));
  EXPECT_THAT(text, HasSubstr("frame category count axis observed values forward {repo}/cnn.py:13 "
                              "size 1 x[0] 2→4 forward {repo}/cnn.py:5 size 1 x[0] 2→4"));
}

// An expected cluster (an input torch made dynamic once) is marked in its row, and the headline
// says how many of the recompiles it accounts for.
TEST(HtmlSectionsTest, ExpectedRecompilesAreMarkedAndCounted) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::RecompileSection* r = report.mutable_recompile();
  r->mutable_clusters(0)->set_count(2);
  v1::RecompileCluster* expected = r->add_clusters();
  expected->set_category(v1::RecompileCategory::VALUE);
  expected->set_count(1);
  expected->set_axis("lr");
  expected->add_guarded_values("0.001");
  expected->set_expected(true);
  EXPECT_THAT(SectionText(report, "recompile"),
              AllOf(HasSubstr("1 of them is expected: torch's normal behaviour for what changed"),
                    HasSubstr("size 2 x[0]"), HasSubstr("value 1 (expected) lr == 0.001")));

  // Torch names a global state that changed, never its values: the row says it changed.
  v1::RecompileCluster* state = r->add_clusters();
  state->set_category(v1::RecompileCategory::GLOBAL_STATE);
  state->set_count(1);
  state->set_axis("default_dtype");
  EXPECT_THAT(SectionText(report, "recompile"), HasSubstr("global_state 1 default_dtype changed"));
  r->mutable_clusters()->RemoveLast();
  v1::RecompileCluster* object = r->add_clusters();
  object->set_category(v1::RecompileCategory::IDENTITY);
  object->set_count(1);
  object->set_axis("token_type_ids");
  EXPECT_THAT(SectionText(report, "recompile"),
              HasSubstr("identity 1 token_type_ids another object"));
  r->mutable_clusters()->RemoveLast();
  // A symbolic guard's value is its relation, shown as it is rather than as a value held.
  v1::RecompileCluster* relation = r->add_clusters();
  relation->set_category(v1::RecompileCategory::SYMBOLIC_SHAPE);
  relation->set_count(1);
  relation->set_axis("step");
  relation->add_guarded_values("((1 + step) % 4) != 0");
  EXPECT_THAT(SectionText(report, "recompile"),
              HasSubstr("symbolic_shape 1 step ((1 + step) % 4) != 0"));
  r->mutable_clusters()->RemoveLast();

  r->mutable_clusters(0)->set_expected(true);
  r->mutable_clusters(0)->set_count(2);
  EXPECT_THAT(SectionText(report, "recompile"), HasSubstr("All are expected: "));
  const v1::AnalysisReport hero = testing::HeroReport();
  EXPECT_THAT(SectionText(hero, "recompile"), Not(HasSubstr("expected")));
}

TEST(HtmlSectionsTest, EscalatedLintShowsSeverityAndLinks) {
  v1::AnalysisReport report = testing::HeroReport();
  report.mutable_lint()->set_escalated(true);
  v1::LintFinding* finding = report.mutable_lint()->mutable_findings(0);
  finding->set_severity(v1::LintFinding::ERROR);
  finding->add_links("https://github.com/pytorch/pytorch/issues/1");
  const std::string section = Section(RenderHtml(report), "lint");
  EXPECT_THAT(section, HasSubstr("<th>severity</th><th>links</th>"));
  EXPECT_THAT(section, HasSubstr("<td>error</td><td><a rel=\"noreferrer\" "
                                 "href=\"https://github.com/pytorch/pytorch/issues/1\">"));
  EXPECT_THAT(section, Not(HasSubstr("not yet escalated")));
}

// A lint row shows what matched and what the detector says of it, not only the pattern's id.
TEST(HtmlSectionsTest, LintRowsShowTheSnippetAndTheMessage) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::LintFinding* finding = report.mutable_lint()->mutable_findings(0);
  finding->set_snippet("z.mul_(0.5)");
  finding->set_message("`y` is read again at line 97");
  const std::string section = Section(RenderHtml(report), "lint");
  EXPECT_THAT(section, HasSubstr("<br><code>z.mul_(0.5)</code>"));
  EXPECT_THAT(section, HasSubstr("<br><span class=\"muted\">`y` is read again at line 97</span>"));
}

TEST(HtmlSectionsTest, RooflineKernelsAndEstimates) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::RooflineKernel* k = report.mutable_roofline()->add_kernels();
  k->set_name("mm_1");
  k->set_flops(2.0 * 16 * 256 * 64);
  k->set_bytes(4.0 * (16 * 64 + 64 * 256 + 16 * 256));
  k->set_intensity(k->flops() / k->bytes());
  k->set_attainable(19.5e12);
  k->set_bound(v1::RooflineKernel::MEMORY);
  k->set_estimated(true);
  // Only estimates: the lead says what the rows are, and never that there are none.
  std::string text = SectionText(report, "roofline");
  EXPECT_THAT(text, ::testing::StartsWith("Roofline (Tool 5) Estimated from the graph: no kernel "
                                          "carried measured flops/bytes, modelled for"));
  EXPECT_THAT(text, Not(HasSubstr("No kernel carried")));
  EXPECT_THAT(text,
              HasSubstr("mm_1 (estimate) 524 kFLOP 84 KiB 6.10 FLOP/B — 19.5 TFLOP/s memory"));
  // Evaluated at torch's size hints (a mark_dynamic graph): the row says where.
  k->set_size_hints("s0 = 4");
  EXPECT_THAT(SectionText(report, "roofline"),
              HasSubstr("mm_1 (estimate at s0 = 4) 524 kFLOP 84 KiB"));
  k->set_size_hints("");
  k->set_estimated(false);
  k->set_achieved(1.25e12);
  text = SectionText(report, "roofline");
  EXPECT_THAT(text, Not(HasSubstr("No kernel carried")));
  EXPECT_THAT(text, HasSubstr("GPU A100-SXM-80GB"));
  EXPECT_THAT(text,
              HasSubstr("mm_1 524 kFLOP 84 KiB 6.10 FLOP/B 1.25 TFLOP/s 19.5 TFLOP/s memory"));
}

TEST(HtmlSectionsTest, SeveralFusionOpportunitiesEachGetTheirAdvice) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::FusionOpportunity* second = report.mutable_fusion()->add_opportunities();
  *second = report.fusion().opportunities(0);
  second->set_pattern("GEMM → GELU");
  second->set_count(1);
  second->set_hbm_bytes_after(second->hbm_bytes_before() + 1024);
  second->set_change("apply `gelu` in the GEMM epilogue");
  const std::string section = Section(RenderHtml(report), "fusion");
  EXPECT_THAT(section, HasSubstr("<td>GEMM → GELU</td>"));  // no ×1
  EXPECT_THAT(section, HasSubstr("↑&lt;1% (264 KiB → 265 KiB)"));
  EXPECT_THAT(section, HasSubstr("<h3>GEMM → GELU at <code>{repo}/examples/hero_scene.py:69-72"
                                 "</code></h3>\n<p><strong>What to change:</strong> apply "
                                 "<code>gelu</code> in the GEMM epilogue</p>"));
}

// A chain matched on symbolic sizes says the hints its shape and bytes are evaluated at.
TEST(HtmlSectionsTest, FusionShapesAtSizeHintsSaySo) {
  v1::AnalysisReport report = testing::HeroReport();
  report.mutable_fusion()->mutable_opportunities(0)->set_size_hints("s0 = 4, s1 = 16");
  EXPECT_THAT(SectionText(report, "fusion"), HasSubstr("16×256×64×64 at s0 = 4, s1 = 16 ↓30%"));
  EXPECT_THAT(SectionText(testing::HeroReport(), "fusion"), HasSubstr("16×256×64×64 ↓30%"));
}

// A chain without a first or a last GEMM has no K0 or K1 (0): it reads "—", not "0".
TEST(HtmlSectionsTest, AFusionShapeMarksTheKItDoesNotHave) {
  v1::AnalysisReport report = testing::HeroReport();
  report.mutable_fusion()->mutable_opportunities(0)->mutable_shape()->set_k1(0);
  EXPECT_THAT(SectionText(report, "fusion"), HasSubstr("16×256×64×— ↓30%"));
  report.mutable_fusion()->mutable_opportunities(0)->mutable_shape()->set_k0(0);
  EXPECT_THAT(SectionText(report, "fusion"), HasSubstr("16×256×—×— ↓30%"));
}

TEST(HtmlSectionsTest, CacheStabilityFindingsAreListed) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::CacheStabilityFinding* f = report.mutable_cache_stability()->add_findings();
  f->set_state_key("G['scale']");
  f->set_iteration(2);
  f->set_compile_id("0/0");
  f->set_evidence("scale changed 1.0→2.0 after iteration 1; output diverged 3.1e-1");
  f->set_before("1.0");
  f->set_after("2.0");
  // A finding without a verdict (an older report) reads as the stale finding it was.
  EXPECT_THAT(SectionText(report, "cache-stability"), HasSubstr("1 silently-stale-cache finding"));
  EXPECT_THAT(SectionText(report, "cache-stability"),
              HasSubstr("stale G['scale'] 1.0 → 2.0 2 0/0 scale changed 1.0→2.0"));
  EXPECT_THAT(Section(RenderHtml(report), "cache-stability"),
              HasSubstr("<th>verdict</th><th>state</th><th>before → after</th>"));
}

TEST(HtmlSectionsTest, CacheStabilitySaysStaleAndSuspiciousApart) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::CacheStabilitySection* s = report.mutable_cache_stability();
  v1::CacheStabilityFinding* stale = s->add_findings();
  stale->set_verdict(v1::CacheStabilityFinding::STALE);
  stale->set_state_key("model.inner._forward_hooks");
  stale->set_iteration(3);
  stale->set_compile_id("0/0");
  stale->set_before("0 hook(s)");
  stale->set_after("1 hook(s): <lambda>");
  v1::CacheStabilityFinding* suspicious = s->add_findings();
  suspicious->set_verdict(v1::CacheStabilityFinding::SUSPICIOUS);
  suspicious->set_state_key("torch.backends.cudnn.allow_tf32");
  suspicious->set_iteration(5);
  suspicious->set_compile_id("0/1");
  suspicious->set_after("False");  // no `before`: the key appeared
  s->set_iterations(6);
  s->set_eager_checks(4);
  s->set_benign_changes(1);
  const std::string text = SectionText(report, "cache-stability");
  EXPECT_THAT(text, HasSubstr("1 silently-stale-cache finding"));
  EXPECT_THAT(text, HasSubstr("1 suspicious state change"));
  EXPECT_THAT(text,
              HasSubstr("stale model.inner._forward_hooks 0 hook(s) → 1 hook(s): <lambda> 3 0/0"));
  EXPECT_THAT(text, HasSubstr("suspicious torch.backends.cudnn.allow_tf32 — → False 5 0/1"));
  EXPECT_THAT(text, HasSubstr("6 iterations tracked, 4 with an eager check; 1 state change "
                              "followed by a recompile"));
}

TEST(HtmlSectionsTest, CacheStabilityWithoutFindingsListsTheNoisyKeys) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::CacheStabilitySection* s = report.mutable_cache_stability();
  s->add_noisy_keys("model.w._version");
  s->add_noisy_keys("rng.cpu");
  const std::string section = Section(RenderHtml(report), "cache-stability");
  EXPECT_THAT(section,
              HasSubstr("<p class=\"good\">No silently-stale-cache findings — recompilation "
                        "tracked the state changes.</p>"));
  EXPECT_THAT(section,
              HasSubstr("<p class=\"muted\">Changed as expected, left out of the "
                        "comparison: <code>model.w._version</code>, <code>rng.cpu</code>"));
  // No iterations recorded (the hero): no "tracked" line.
  EXPECT_THAT(section, Not(HasSubstr("tracked, ")));
}

TEST(HtmlSectionsTest, DivergenceNamesEveryCulpritKind) {
  const std::pair<v1::BisectCulprit::Kind, const char*> kinds[] = {
      {v1::BisectCulprit::BACKEND, "backend: "},
      {v1::BisectCulprit::SUBSYSTEM, "subsystem: "},
      {v1::BisectCulprit::PASS, "pass: "},
      {v1::BisectCulprit::DECOMPOSITION, "decomposition: "},
      {v1::BisectCulprit::LOWERING, "lowering: "},
      {v1::BisectCulprit::CONFIG, "config: "},
      {v1::BisectCulprit::TRACING, "tracing: "}};
  for (const auto& [kind, prefix] : kinds) {
    v1::AnalysisReport report = testing::HeroReport();
    report.mutable_divergence()->mutable_cause()->set_kind(kind);
    report.mutable_divergence()->mutable_cause()->set_name("aten.x");
    EXPECT_THAT(Section(RenderHtml(report), "divergence"),
                HasSubstr(absl::StrCat("<td>", prefix, "<code>aten.x</code></td>")))
        << prefix;
  }
}

TEST(HtmlSectionsTest, DivergenceShowsIsolatedAccumulatedAndTolerance) {
  v1::AnalysisReport report = testing::HeroReport();
  const std::string seed_table = Section(RenderHtml(report), "divergence");
  v1::DivergenceSection* d = report.mutable_divergence();
  d->set_accumulated_max_abs_diff(5.1);
  d->set_tolerance(1e-4);
  d->set_severity(v1::DivergenceSection::ERROR);
  const std::string section = Section(RenderHtml(report), "divergence");
  // The seed's table stays as it is; the figures follow it.
  EXPECT_THAT(section, HasSubstr(seed_table.substr(0, seed_table.find("</table>"))));
  EXPECT_THAT(section, HasSubstr("</table>\n<p class=\"muted\">isolated 5.033e0 (eager input into "
                                 "the compiled layer) · accumulated 5.100e0"));
  EXPECT_THAT(section, HasSubstr("tolerance 1.000e-4</p>"));
  EXPECT_THAT(section, Not(HasSubstr("not a bug")));
  EXPECT_THAT(Section(RenderHtml(testing::HeroReport()), "divergence"), Not(HasSubstr("isolated")));
}

TEST(HtmlSectionsTest, BenignDivergenceSaysItIsNotABug) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::DivergenceSection* d = report.mutable_divergence();
  d->mutable_cause()->set_kind(v1::BisectCulprit::CONFIG);
  d->mutable_cause()->set_name("fallback_random");
  d->set_severity(v1::DivergenceSection::INFO);
  EXPECT_THAT(SectionText(report, "divergence"), HasSubstr("RNG parity, not a bug"));
  d->mutable_cause()->set_name("emulate_precision_casts");
  d->set_severity(v1::DivergenceSection::LOW);
  EXPECT_THAT(SectionText(report, "divergence"), HasSubstr("Expected rounding, not a bug"));
}

TEST(HtmlSectionsTest, LongTablesAreCutAndCounted) {
  v1::AnalysisReport report = testing::HeroReport();
  for (int i = 0; i < 600; ++i)
    report.mutable_ir_diff()->add_added()->set_node(absl::StrCat("n", i));
  const std::string section = Section(RenderHtml(report), "ir-diff");
  EXPECT_THAT(section, HasSubstr("<h3>added (600)</h3>"));
  EXPECT_THAT(section, HasSubstr("<code>n499</code>"));
  EXPECT_THAT(section, Not(HasSubstr("<code>n500</code>")));
  EXPECT_THAT(section, HasSubstr("… and 100 more rows in the JSON report."));
}

TEST(HtmlSectionsTest, MetadataShowsTheSessionFactsThatWereRecorded) {
  v1::AnalysisReport report = testing::HeroReport();
  report.mutable_metadata()->set_python_version("3.11.2");
  report.mutable_metadata()->set_host("trainer-7");
  report.mutable_metadata()->set_rank(3);
  report.mutable_metadata()->set_world_size(8);
  (*report.mutable_metadata()->mutable_labels())["model"] = "hero";
  (*report.mutable_metadata()->mutable_labels())["cluster"] = "a100-east";
  EXPECT_EQ(SectionText(report, "metadata"),
            "Session metadata torch 2.12.0 session id 00000000-0000-4000-8000-00000000he50 python "
            "3.11.2 host trainer-7 rank 3 of 8 label cluster a100-east label model hero");
}

}  // namespace
}  // namespace cl

// The terminal summary: the hero's lines (golden), colour only when asked, every section's
// status, and hostile strings that can neither colour the terminal nor forge a line.
#include "service/render/text.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/render/hero_report.h"
#include "tests/service/render/hostile_report.h"
#include "tests/service/render/page_text.h"
#include "tests/testing/golden.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(TextTest, HeroMatchesGoldenFile) {
  testing::ExpectMatchesGolden("render/hero.txt",
                               RenderText(testing::HeroReport(), /*color=*/false));
}

TEST(TextTest, HeroHasTheKeyFactsOfEachSection) {
  const std::string text = RenderText(testing::HeroReport(), /*color=*/false);
  EXPECT_THAT(text, HasSubstr("recompile: 3 recompilations in forward "
                              "(examples/hero_scene.py:86); size x[0]: 16→32, 16→64, 16→128\n"
                              "  suggestion: `x` dim 0 keeps changing size"));
  EXPECT_THAT(text, HasSubstr("divergence: blocks.0.norm diverges first (max abs diff 5.033e0, 2 "
                              "layers compared); cause: pass post_grad_custom_post_pass\n"));
  EXPECT_THAT(text, HasSubstr("sub (aten.sub.Tensor): operands reordered at "
                              "examples/hero_scene.py:89, confidence 1.00\n"));
  EXPECT_THAT(text, HasSubstr("GEMM → +resid → RMSNorm → GEMM ×3 at "
                              "examples/hero_scene.py:69-72: HBM 264 KiB → 184 KiB, ≤ 1.43×\n"));
}

// Figures evaluated at torch's size hints (a mark_dynamic graph) say so, in fusion and roofline.
TEST(TextTest, FiguresAtSizeHintsSaySo) {
  v1::AnalysisReport report = testing::HeroReport();
  report.mutable_fusion()->mutable_opportunities(0)->set_size_hints("s0 = 4");
  v1::RooflineKernel* k = report.mutable_roofline()->add_kernels();
  k->set_name("mm_1");
  k->set_intensity(6.1);
  k->set_bound(v1::RooflineKernel::MEMORY);
  k->set_estimated(true);
  k->set_size_hints("s0 = 4");
  report.mutable_roofline()->mutable_kernels()->SwapElements(0,
                                                             report.roofline().kernels_size() - 1);
  const std::string text = RenderText(report, /*color=*/false);
  EXPECT_THAT(text, HasSubstr("GEMM → +resid → RMSNorm → GEMM ×3 at examples/hero_scene.py:69-72 "
                              "(sizes at s0 = 4): HBM 264 KiB → 184 KiB"));
  EXPECT_THAT(text, HasSubstr("  mm_1: 6.10 FLOP/B, memory-bound (estimate at s0 = 4)\n"));
}

TEST(TextTest, ColourOnlyWhenAsked) {
  EXPECT_THAT(RenderText(testing::HeroReport(), /*color=*/false), Not(HasSubstr("\x1b")));
  const std::string coloured = RenderText(testing::HeroReport(), /*color=*/true);
  EXPECT_THAT(coloured, HasSubstr("\x1b[1mrecompile\x1b[0m: \x1b[33m3 recompilations\x1b[0m"));
  EXPECT_THAT(coloured, HasSubstr("\x1b[32mno silently-stale-cache findings\x1b[0m"));
}

TEST(TextTest, SkippedAndFailedSectionsSaySo) {
  v1::AnalysisReport report = testing::HeroReport();
  report.mutable_ir_diff()->Clear();
  report.mutable_ir_diff()->set_status(v1::SKIPPED);
  report.mutable_ir_diff()->set_reason("no base capture");
  report.mutable_lint()->set_status(v1::ERROR);
  report.mutable_lint()->set_reason("tree-sitter: parse failed");
  const std::string text = RenderText(report, /*color=*/false);
  EXPECT_THAT(text, HasSubstr("\nir-diff: skipped (no base capture)\n"));
  EXPECT_THAT(text, HasSubstr("\nlint: this pass failed: tree-sitter: parse failed\n"));
  EXPECT_THAT(RenderText(report, /*color=*/true),
              HasSubstr("\x1b[1;31mthis pass failed: tree-sitter: parse failed\x1b[0m"));
}

TEST(TextTest, EmptyReportRenders) {
  const std::string text = RenderText(v1::AnalysisReport(), /*color=*/false);
  EXPECT_THAT(text, HasSubstr("compile-lens session report — torch unknown\n"));
  EXPECT_THAT(text, HasSubstr("recompile: no result (this pass did not run)\n"));
  EXPECT_THAT(text, HasSubstr("raw: schema ? · 0 recompilations"));
}

TEST(TextTest, DivergenceFiguresSeverityAndNewCulpritKinds) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::DivergenceSection* d = report.mutable_divergence();
  d->mutable_cause()->set_kind(v1::BisectCulprit::CONFIG);
  d->mutable_cause()->set_name("fallback_random");
  d->set_severity(v1::DivergenceSection::INFO);
  d->set_accumulated_max_abs_diff(5.1);
  d->set_tolerance(1e-4);
  std::string text = RenderText(report, /*color=*/false);
  EXPECT_THAT(text, HasSubstr("cause: config fallback_random\n"
                              "  isolated 5.033e0 · accumulated 5.100e0 · tolerance 1.000e-4\n"
                              "  RNG parity (fallback_random), not a bug\n"));
  d->mutable_cause()->set_kind(v1::BisectCulprit::LOWERING);
  d->mutable_cause()->set_name("aten.var_mean");
  d->set_severity(v1::DivergenceSection::ERROR);
  text = RenderText(report, /*color=*/false);
  EXPECT_THAT(text, HasSubstr("cause: lowering aten.var_mean\n"));
  EXPECT_THAT(text, Not(HasSubstr("not a bug")));
}

TEST(TextTest, CacheStabilityCountsStaleAndSuspiciousApart) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::CacheStabilityFinding* stale = report.mutable_cache_stability()->add_findings();
  stale->set_verdict(v1::CacheStabilityFinding::STALE);
  stale->set_state_key("globals.scale");
  stale->set_iteration(3);
  stale->set_compile_id("0/0");
  stale->set_evidence("globals.scale: 4 → 40; no recompile");
  v1::CacheStabilityFinding* suspicious = report.mutable_cache_stability()->add_findings();
  suspicious->set_verdict(v1::CacheStabilityFinding::SUSPICIOUS);
  suspicious->set_state_key("model.lora.disabled");
  suspicious->set_iteration(4);
  suspicious->set_compile_id("0/0");
  const std::string text = RenderText(report, /*color=*/false);
  EXPECT_THAT(text, HasSubstr("cache-stability: 1 silently-stale-cache finding, 1 suspicious "
                              "state change\n  stale globals.scale at iteration 3 (cache entry "
                              "0/0): globals.scale: 4 → 40; no recompile\n  suspicious "
                              "model.lora.disabled at iteration 4"));
}

// An expected cluster is marked, and a suggestion that only explains expected behaviour is a note.
// The ledger keeps a line per recompile cluster; the one-line summary sums each cause once.
TEST(TextTest, CompileTimeSumsEachCauseOnce) {
  v1::AnalysisReport report;
  v1::CompileTimeSection* s = report.mutable_compile_time();
  s->set_status(v1::OK);
  s->set_total_s(39.68);
  for (const auto& [cause, seconds] : std::vector<std::pair<const char*, double>>{
           {"recompile", 22.35}, {"first_compile", 10.09}, {"recompile", 7.24}}) {
    v1::CompileCost* cost = s->add_ledger();
    cost->set_cause(cause);
    cost->set_seconds(seconds);
  }
  const std::string text = RenderText(report, /*color=*/false);
  EXPECT_THAT(text, HasSubstr("; recompile 29.59 s; first_compile 10.09 s\n"));
}

TEST(TextTest, ExpectedRecompilesAreANoteNotASuggestion) {
  v1::AnalysisReport report = testing::HeroReport();
  v1::RecompileSection* r = report.mutable_recompile();
  r->mutable_clusters(0)->set_expected(true);
  r->mutable_suggestions(0)->set_expected(true);
  r->mutable_suggestions(0)->set_text("x dim 0 changed size once — expected");
  const std::string text = RenderText(report, /*color=*/false);
  EXPECT_THAT(text, HasSubstr("16→128 (expected)\n  note: x dim 0 changed size once — expected\n"));
  EXPECT_THAT(RenderText(testing::HeroReport(), /*color=*/false),
              AllOf(HasSubstr("\n  suggestion: `x` dim 0 keeps changing size"),
                    Not(HasSubstr("(expected)"))));
}

std::string StripSgr(std::string text) {
  for (const char* code : {"\x1b[0m", "\x1b[1m", "\x1b[32m", "\x1b[33m", "\x1b[1;31m", "\x1b[2m"}) {
    absl::StrReplaceAll({{code, ""}}, &text);
  }
  return text;
}

// A line the renderer starts: an indented item, the title, the session, or "<section>: ".
bool StartsAsTheRendererDoes(absl::string_view line) {
  if (absl::StartsWith(line, "  ") || absl::StartsWith(line, "compile-lens session report — ") ||
      absl::StartsWith(line, "session ")) {
    return true;
  }
  for (const char* name :
       {"verdict", "health", "failures", "ranks", "ir-diff", "recompile", "compile-time",
        "cache-stability", "divergence", "lint", "fusion", "roofline", "raw", "diagnostics"}) {
    if (absl::StartsWith(line, absl::StrCat(name, ": "))) return true;
  }
  return false;
}

// Every line of the summary starts with a section name or an indent: a newline in a capture
// string cannot start a line of its own, and no escape sequence comes through.
TEST(TextTest, HostileStringsStayInert) {
  for (const bool color : {false, true}) {
    const std::string text = RenderText(testing::HostileReport(), color);
    EXPECT_TRUE(testing::IsValidUtf8(text));
    EXPECT_THAT(text, Not(HasSubstr("\u202E")));
    EXPECT_THAT(text, HasSubstr(std::string(testing::kHostileTerminal)));
    for (absl::string_view line : absl::StrSplit(StripSgr(text), '\n', absl::SkipEmpty())) {
      EXPECT_TRUE(StartsAsTheRendererDoes(line)) << line;
    }
    // The only escape sequences are the renderer's own SGR codes.
    for (size_t at = text.find('\x1b'); at != std::string::npos; at = text.find('\x1b', at + 1)) {
      const std::string code = text.substr(at, text.find('m', at) - at + 1);
      EXPECT_THAT(code, ::testing::AnyOf("\x1b[0m", "\x1b[1m", "\x1b[32m", "\x1b[33m", "\x1b[1;31m",
                                         "\x1b[2m"));
    }
    if (!color) {
      EXPECT_THAT(text, Not(HasSubstr("\x1b")));
    }
  }
}

}  // namespace
}  // namespace cl

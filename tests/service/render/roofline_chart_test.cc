// The fusion and roofline sections from the real passes on the hero capture, rendered: the fusion
// section reads like the seed's (plus the byte-model note after it), and the roofline section
// carries its inline-SVG chart (one point per kernel, the memory and compute roofs), which real
// headless Chromium draws under the page's CSP.
#include <filesystem>
#include <limits>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analyzers/fusion/fusion.h"
#include "analyzers/roofline/roofline.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/render/html.h"
#include "tests/service/render/hero_report.h"
#include "tests/service/render/page_text.h"
#include "tests/testing/captures.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/run_pass.h"
#include "tests/testing/subprocess.h"

namespace cl {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::compile_lens::v1;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The synthetic hero report with the fusion and roofline sections the passes write for the real
// hero capture.
v1::AnalysisReport RealHeroReport() {
  v1::AnalysisReport report = testing::HeroReport();
  const v1::SessionCapture head = testing::LoadHero("head.cls.json");
  *report.mutable_fusion() = testing::RunPassOk(FusionPass(), head).fusion();
  *report.mutable_roofline() = testing::RunPassOk(RooflinePass(), head).roofline();
  return report;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(RooflineChartTest, RealFusionSectionReadsLikeTheSeed) {
  const std::string seed = ReadFile(testing::FixturePath("seed/hero.html")).value_or("");
  ASSERT_FALSE(seed.empty());
  const std::string page = RenderHtml(RealHeroReport());
  const std::string want = testing::SectionTexts(seed)["fusion"];
  const std::string got = testing::SectionTexts(page)["fusion"];
  ASSERT_FALSE(want.empty());
  // The seed's words exactly, then the note on the byte model (docs/design.md §5.6 asks for it).
  EXPECT_THAT(got, StartsWith(want));
  EXPECT_THAT(got.substr(want.size()),
              StartsWith(" Byte model: unfused: GEMM1 84 KiB + add 48 KiB + norm 48 KiB + GEMM2 "
                         "84 KiB = 264 KiB;"));
  EXPECT_THAT(got.substr(want.size()), HasSubstr("unfuse_bias_add_to_pointwise"));
}

TEST(RooflineChartTest, ChartHasOnePointPerKernelAndBothRoofs) {
  const v1::AnalysisReport report = RealHeroReport();
  const std::string page = RenderHtml(report);
  const std::string text = testing::SectionTexts(page)["roofline"];
  EXPECT_THAT(text, StartsWith("Roofline (Tool 5) Estimated from the graph: no kernel carried "
                               "measured flops/bytes, modelled for A100-SXM-80GB ."));
  EXPECT_THAT(text, HasSubstr("(estimate)"));
  EXPECT_THAT(text, HasSubstr("ridge point 9.6 FLOP/B"));
  EXPECT_EQ(Count(page, "<svg class=\"roofline\""), 1u);
  EXPECT_EQ(Count(page, "<circle "), static_cast<size_t>(report.roofline().kernels_size()));
  EXPECT_EQ(Count(page, "stroke=\"#1f6feb\" stroke-width=\"2\""), 1u);  // the roofs' group
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  // Only elements the renderer writes, the chart's SVG ones among them.
  for (const std::string& tag : testing::TagSequence(page)) {
    EXPECT_TRUE(testing::RendererElements().count(testing::TagName(tag)) > 0) << tag;
  }
}

TEST(RooflineChartTest, NoRoofsNoChart) {
  v1::AnalysisReport report = RealHeroReport();
  report.mutable_roofline()->set_peak_flops(0);
  EXPECT_THAT(RenderHtml(report), Not(HasSubstr("<svg")));
}

TEST(RooflineChartTest, HostileKernelNameIsEscapedInTheChart) {
  v1::AnalysisReport report = RealHeroReport();
  report.mutable_roofline()->mutable_kernels(0)->set_name("<script>alert(1)</script>\"><svg>");
  const std::string page = RenderHtml(report);
  EXPECT_THAT(page, Not(HasSubstr("<script>")));
  EXPECT_THAT(page, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;svg&gt;:"));
}

// A report (rendered from a file, say) whose figures are infinite, NaN or absurdly far out: the
// chart is drawn at once with the other kernels, without them; its axes stay bounded.
TEST(RooflineChartTest, ExtremeFiguresAreLeftOffABoundedChart) {
  v1::AnalysisReport report = RealHeroReport();
  const int real = report.roofline().kernels_size();
  for (const double intensity : {1e300, std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::quiet_NaN(), 1e-300}) {
    v1::RooflineKernel* k = report.mutable_roofline()->add_kernels();
    k->set_name("extreme");
    k->set_intensity(intensity);
    k->set_attainable(1e12);
  }
  const std::string page = RenderHtml(report);
  EXPECT_EQ(Count(page, "<circle "), static_cast<size_t>(real));
  EXPECT_LT(Count(page, "<line "), 80u);
  report.mutable_roofline()->set_peak_flops(std::numeric_limits<double>::infinity());
  EXPECT_THAT(RenderHtml(report), Not(HasSubstr("<svg")));
}

TEST(RooflineChartTest, ChromiumDrawsTheChart) {
  const fs::path dir = fs::path(CL_BINARY_DIR) / "tests" / "render" / "roofline_chart";
  fs::create_directories(dir);
  const fs::path page = dir / "hero-roofline.html";
  const fs::path png = dir / "hero-roofline.png";
  ASSERT_TRUE(WriteFile(page.string(), RenderHtml(RealHeroReport())).ok());
  fs::remove(png);
  const std::string url = "file://" + fs::absolute(page).string();
  const std::vector<std::string> base = {
      "/usr/bin/timeout",
      "--kill-after=5",
      "60",
      "/usr/bin/chromium",
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--user-data-dir=" + (dir / absl::StrCat("profile-", getpid())).string()};
  std::vector<std::string> dump = base;
  dump.insert(dump.end(), {"--dump-dom", url});
  const testing::RunResult dom = testing::RunCommand(dump);
  ASSERT_EQ(dom.exit_code, 0) << dom.stderr_text;
  EXPECT_THAT(dom.stdout_text, HasSubstr("<svg class=\"roofline\""));
  EXPECT_THAT(dom.stdout_text, HasSubstr("<circle "));
  std::vector<std::string> shot = base;
  shot.insert(shot.end(), {"--screenshot=" + png.string(), "--window-size=1200,4000",
                           "--hide-scrollbars", url});
  const testing::RunResult run = testing::RunCommand(shot);
  EXPECT_EQ(run.exit_code, 0) << run.stderr_text;
  const std::string bytes = ReadFile(png.string()).value_or("");
  EXPECT_TRUE(absl::StartsWith(bytes, "\x89PNG\r\n\x1a\n")) << png;
  EXPECT_GT(bytes.size(), 20000u) << png;
  fs::remove_all(dir / absl::StrCat("profile-", getpid()));
}

}  // namespace
}  // namespace cl

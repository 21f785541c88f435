// The hero session, analyzed for real: `cl-client analyze head --base base` in-process on the
// committed hero captures, its JSON report, HTML page and terminal summary against golden copies
// (tests/golden/hero/). The render goldens (tests/golden/render/) hold a report built by hand;
// these hold what the importer's captures and every pass produce, so a change anywhere from the
// capture reader to the renderers that moves one byte of the user's report shows here.
#include <string>

#include "absl/strings/match.h"
#include "common/file_io.h"
#include "gtest/gtest.h"
#include "tests/testing/binaries.h"
#include "tests/testing/golden.h"
#include "tests/testing/subprocess.h"

namespace cl {
namespace {

using ::cl::testing::ExpectMatchesGolden;
using ::cl::testing::kClientBinary;
using ::cl::testing::kHeroBase;
using ::cl::testing::kHeroHead;
using ::cl::testing::RunCommand;
using ::cl::testing::RunResult;
using ::cl::testing::TmpPath;

TEST(HeroGoldenTest, InProcessReportIsTheGolden) {
  const std::string json = TmpPath("hero.report.json");
  const std::string html = TmpPath("hero.html");
  const RunResult r = RunCommand(
      {kClientBinary, "analyze", kHeroHead, "--base", kHeroBase, "--json", json, "--html", html});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const absl::StatusOr<std::string> json_text = ReadFile(json);
  const absl::StatusOr<std::string> html_text = ReadFile(html);
  ASSERT_TRUE(json_text.ok()) << json_text.status();
  ASSERT_TRUE(html_text.ok()) << html_text.status();
  ExpectMatchesGolden("hero/hero.report.json", *json_text);
  ExpectMatchesGolden("hero/hero.html", *html_text);
  // The summary ends by naming the files it wrote; those paths are the test's own, not the
  // report's, so they are checked here and left out of the golden.
  const std::string wrote = "wrote " + html + "\nwrote " + json + "\n";
  ASSERT_TRUE(absl::EndsWith(r.stdout_text, wrote)) << r.stdout_text;
  ExpectMatchesGolden("hero/hero.txt",
                      r.stdout_text.substr(0, r.stdout_text.size() - wrote.size()));
}

}  // namespace
}  // namespace cl

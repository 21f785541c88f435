// The page in a real browser: headless Chromium (Debian `chromium`, scripts/setup.sh installs it)
// loads the hero and a hostile report under the page's own CSP. The DOM it builds must have every
// section, read like the seed, show hostile strings as text with no injected element, and the
// console must stay silent (no script ran, no CSP violation). Screenshots land in the build
// directory for a person to look at. A missing Chromium is a failure, not a skip.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "capture/torch_trace/importer.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/render/html.h"
#include "service/render/html_site.h"
#include "tests/service/render/hero_report.h"
#include "tests/service/render/hostile_report.h"
#include "tests/service/render/page_text.h"
#include "tests/testing/fixtures.h"

extern char** environ;

namespace cl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kChromium[] = "/usr/bin/chromium";
constexpr char kSectionIds[][16] = {"metadata",        "ir-diff",    "recompile",
                                    "cache-stability", "divergence", "lint",
                                    "fusion",          "roofline",   "raw"};

struct BrowserRun {
  int exit_code = -1;
  std::string out;  // --dump-dom writes the DOM here
  std::string err;  // --enable-logging=stderr writes console messages here
};

// A directory of its own under the build tree for this test's pages, profiles and screenshots.
fs::path WorkDir() {
  const fs::path dir = fs::path(CL_BINARY_DIR) / "tests" / "render" / "chromium";
  fs::create_directories(dir);
  return dir;
}

// Runs Chromium headless with flags that keep it off the network (no QUIC, background networking,
// component updates or sync) and a fresh profile, under `timeout` so a wedged browser fails the
// test instead of hanging it.
BrowserRun RunChromium(const std::vector<std::string>& mode_args, const fs::path& page) {
  static int run = 0;
  const fs::path dir = WorkDir();
  const fs::path profile = dir / absl::StrCat("profile-", getpid(), "-", run++);
  fs::remove_all(profile);
  fs::create_directories(profile);
  const fs::path out = profile.string() + ".out";
  const fs::path err = profile.string() + ".err";

  std::vector<std::string> args = {"timeout",
                                   "--kill-after=5",
                                   "60",
                                   kChromium,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--enable-logging=stderr",
                                   "--v=0",
                                   "--user-data-dir=" + profile.string()};
  args.insert(args.end(), mode_args.begin(), mode_args.end());
  args.push_back("file://" + fs::absolute(page).string());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  BrowserRun result;
  pid_t pid = 0;
  const int spawn_error = posix_spawnp(&pid, "timeout", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    result.err = absl::StrCat("posix_spawnp: ", spawn_error);
    return result;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = ReadFile(out.string()).value_or("");
  result.err = ReadFile(err.string()).value_or("");
  fs::remove_all(profile);
  return result;
}

// Console messages and CSP reports from the log. Chromium as root also logs dbus, GPU and
// sandbox warnings; those say nothing about the page and are not collected.
std::vector<std::string> ConsoleProblems(const std::string& log) {
  std::vector<std::string> problems;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StrContains(line, ":CONSOLE") || absl::StrContains(line, "Content Security Policy") ||
        absl::StrContains(line, "Refused to") || absl::StrContains(line, "Uncaught")) {
      problems.emplace_back(line);
    }
  }
  return problems;
}

fs::path WritePage(const std::string& name, const std::string& html) {
  const fs::path path = WorkDir() / name;
  EXPECT_TRUE(WriteFile(path.string(), html).ok()) << path;
  return path;
}

BrowserRun DumpDom(const fs::path& page) { return RunChromium({"--dump-dom"}, page); }

TEST(ChromiumTest, ChromiumIsInstalled) {
  ASSERT_EQ(access(kChromium, X_OK), 0)
      << kChromium << " is missing: the setup script installs Debian's chromium package";
}

// The detector below is only worth something if it sees what it looks for: a page with an
// inline script under the same CSP must be reported.
TEST(ChromiumTest, ConsoleCheckSeesABlockedScript) {
  ASSERT_EQ(access(kChromium, X_OK), 0);
  const fs::path page = WritePage(
      "control.html",
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><meta "
      "http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\"></head><body><script>console.error('boom')</script></body></html>");
  const BrowserRun run = DumpDom(page);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(ConsoleProblems(run.err), Not(IsEmpty())) << run.err;
}

TEST(ChromiumTest, HeroPageLoadsCleanlyAndReadsLikeTheSeed) {
  ASSERT_EQ(access(kChromium, X_OK), 0);
  const BrowserRun run = DumpDom(WritePage("hero.html", RenderHtml(testing::HeroReport())));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* id : kSectionIds) {
    EXPECT_THAT(run.out, HasSubstr(absl::StrCat("<details open=\"\" id=\"", id, "\">"))) << id;
  }
  EXPECT_THAT(ConsoleProblems(run.err), IsEmpty());

  // What the browser built reads, section by section, like the seed.
  const absl::StatusOr<std::string> seed = ReadFile(testing::FixturePath("seed/hero.html"));
  ASSERT_TRUE(seed.ok()) << seed.status();
  // The DOM serializes the boolean attribute as open="".
  auto dom = testing::SectionTexts(
      absl::StrReplaceAll(run.out, {{"<details open=\"\" id=", "<details open id="}}));
  for (const auto& [id, text] : testing::SectionTexts(*seed)) EXPECT_EQ(dom[id], text) << id;
}

TEST(ChromiumTest, HostileStringsAreTextAndNothingIsInjected) {
  ASSERT_EQ(access(kChromium, X_OK), 0);
  for (const auto status : {::compile_lens::v1::OK, ::compile_lens::v1::ERROR}) {
    const BrowserRun run = DumpDom(WritePage(absl::StrCat("hostile-", status, ".html"),
                                             RenderHtml(testing::HostileReport(status))));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_THAT(ConsoleProblems(run.err), IsEmpty());
    // The serialized DOM escapes & < > in text; quotes stay as they are.
    EXPECT_THAT(run.out, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;\"'&amp;amp;[U+202E]"));
    EXPECT_THAT(run.out, Not(HasSubstr("<script")));
    for (const std::string& tag : testing::TagSequence(run.out)) {
      EXPECT_TRUE(testing::RendererElements().count(testing::TagName(tag)))
          << "injected element: " << tag;
    }
    for (const char* id : kSectionIds) {
      EXPECT_THAT(run.out, HasSubstr(absl::StrCat(" id=\"", id, "\">"))) << id;
    }
  }
}

// The site (--html-dir) in the browser: a real log's index and compile pages, and a hostile
// capture's, load with no console message or CSP report, and capture strings stay text.
TEST(ChromiumTest, SitePagesLoadCleanlyAndHostileStringsStayText) {
  ASSERT_EQ(access(kChromium, X_OK), 0);
  const fs::path dir = WorkDir() / "site";
  fs::remove_all(dir);
  {
    ImportOptions options;
    options.keep_record_texts = true;
    absl::StatusOr<v1::SessionCapture> capture = ImportTraceFile(
        testing::FixturePath("torch_trace/tlparse-corpus/tlparse/comp_failure.log"), options);
    ASSERT_TRUE(capture.ok()) << capture.status();
    DirectorySink sink((dir / "real").string());
    ASSERT_TRUE(RenderHtmlSite(*capture, testing::HeroReport(), sink).ok());
    DirectorySink hostile((dir / "hostile").string());
    ASSERT_TRUE(RenderHtmlSite(testing::HostileCapture(), testing::HostileReport(), hostile).ok());
  }
  std::vector<std::string> pages = {"real/index.html", "real/compiles/0_0_0.html",
                                    "hostile/index.html"};
  for (const auto& e : fs::directory_iterator(dir / "hostile" / "compiles")) {
    if (e.path().extension() == ".html")
      pages.push_back("hostile/compiles/" + e.path().filename().string());
  }
  ASSERT_EQ(pages.size(), 4u);  // the hostile capture has one compile
  for (const std::string& page : pages) {
    SCOPED_TRACE(page);
    ASSERT_TRUE(fs::exists(dir / page));
    const BrowserRun run = DumpDom(dir / page);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_THAT(ConsoleProblems(run.err), IsEmpty());
    EXPECT_THAT(run.out, Not(HasSubstr("<script")));
    if (absl::StartsWith(page, "hostile/")) {
      EXPECT_THAT(run.out, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
    } else {
      EXPECT_THAT(run.out, HasSubstr("BackendCompilerFailed"));
    }
  }
}

// Screenshots for a person: the hero in light and dark, and the hostile page.
// A graph break inside torch puts long paths side by side (dynamo's reason names decorators.py,
// the location is the user's file): its table still fits the section, every column in sight. The
// page is measured by a script of the test's, so this copy of it drops the CSP that forbids one.
TEST(ChromiumTest, AGraphBreakInsideTorchFitsTheSection) {
  ASSERT_EQ(access(kChromium, X_OK), 0);
  v1::AnalysisReport report;
  v1::RecompileSection* recompile = report.mutable_recompile();
  recompile->set_status(v1::OK);
  for (const char* frame : {"step", "wrapper"}) {
    v1::GraphBreakSummary* brk = recompile->add_graph_breaks();
    brk->set_reason(
        "skip function graph_break in file /usr/lib/python3/dist-packages/torch/_dynamo/"
        "decorators.py");
    brk->set_category(v1::GraphBreakCategory::USER_REQUESTED);
    brk->set_count(1);
    brk->set_frame(frame);
    brk->mutable_location()->set_file("/mnt/project/resnet_train.py");
    brk->mutable_location()->set_line(50);
    brk->set_source_line("opt.step()");
    brk->set_remedy(
        "The break is inside `torch/optim/optimizer.py:90`, not in your code: the optimizer's "
        "`_use_grad` breaks the graph around `step()` on purpose (pytorch/pytorch#104053); "
        "compile the step on its own (`torch.compile(opt.step)`).");
  }
  std::string html = RenderHtml(report);
  const size_t csp = html.find("<meta http-equiv=\"Content-Security-Policy\"");
  ASSERT_NE(csp, std::string::npos);
  html.erase(csp, html.find('>', csp) + 1 - csp);
  html = absl::StrReplaceAll(
      html, {{"</body>",
              "<script>const t = document.querySelector('#recompile table');"
              "document.body.insertAdjacentHTML('beforeend', '<p id=\"fit\">' + t.scrollWidth + "
              "' ' + t.parentElement.clientWidth + '</p>');</script></body>"}});
  const BrowserRun run = RunChromium({"--dump-dom", "--window-size=1280,1000"},
                                     WritePage("graph_break_inside_torch.html", html));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const size_t at = run.out.rfind("<p id=\"fit\">");  // after the script that wrote it
  ASSERT_NE(at, std::string::npos) << "the measuring script did not run";
  int table = 0, section = 0;
  ASSERT_EQ(std::sscanf(run.out.c_str() + at, "<p id=\"fit\">%d %d", &table, &section), 2);
  EXPECT_GT(section, 0);
  EXPECT_LE(table, section) << "the table runs past its section: its last columns are out of sight";
}

TEST(ChromiumTest, Screenshots) {
  ASSERT_EQ(access(kChromium, X_OK), 0);
  const fs::path hero = WritePage("hero.html", RenderHtml(testing::HeroReport()));
  const fs::path hostile = WritePage("hostile.html", RenderHtml(testing::HostileReport()));
  struct Shot {
    const char* file;
    fs::path page;
    std::vector<std::string> extra;
  };
  const fs::path dir = fs::path(CL_BINARY_DIR) / "tests" / "render";
  for (const Shot& shot : {Shot{"hero.png", hero, {}},
                           Shot{"hero-dark.png", hero, {"--blink-settings=preferredColorScheme=0"}},
                           Shot{"hostile.png", hostile, {}}}) {
    const fs::path png = dir / shot.file;
    fs::remove(png);
    std::vector<std::string> args = {"--screenshot=" + png.string(), "--window-size=1200,2600",
                                     "--hide-scrollbars"};
    args.insert(args.end(), shot.extra.begin(), shot.extra.end());
    const BrowserRun run = RunChromium(args, shot.page);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const std::string bytes = ReadFile(png.string()).value_or("");
    EXPECT_TRUE(absl::StartsWith(bytes, "\x89PNG\r\n\x1a\n")) << png;
    EXPECT_GT(bytes.size(), 20000u) << png;  // a blank page is a few kB
  }
}

}  // namespace
}  // namespace cl

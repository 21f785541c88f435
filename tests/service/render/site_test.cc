// The HTML site (--html-dir) on every real log: a page per compile attempt, the failures, restarts
// and cache outcomes the log records (counted by expect_counts.py, not by the importer), every
// link landing on a file and an id of the site, the CSP on every page, hostile strings inert.
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "capture/torch_trace/importer.h"
#include "client/analyze_client.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "service/render/html_site.h"
#include "service/render/html_writer.h"
#include "tests/service/render/hostile_report.h"
#include "tests/testing/fixtures.h"

namespace cl {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Value;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kFixtures = testing::FixturePath("torch_trace");
const fs::path kExpected = fs::path(CL_SOURCE_DIR) / "tests" / "golden" / "torch_trace";

// The site in memory, in the order it was written.
class MemorySink : public SiteSink {
 public:
  absl::Status Write(const std::string& path, absl::string_view content) override {
    if (files.contains(path)) return absl::AlreadyExistsError(path);
    order.push_back(path);
    files[path] = std::string(content);
    return absl::OkStatus();
  }
  std::vector<std::string> order;
  std::map<std::string, std::string> files;
};

MemorySink Render(const v1::SessionCapture& capture) {
  absl::StatusOr<v1::AnalyzeResponse> response = AnalyzeInProcess({capture, std::nullopt}, {}, 2);
  EXPECT_TRUE(response.ok()) << response.status();
  MemorySink sink;
  const absl::Status s =
      RenderHtmlSite(capture, response.ok() ? response->report() : v1::AnalysisReport(), sink);
  EXPECT_TRUE(s.ok()) << s;
  return sink;
}

v1::SessionCapture Import(const fs::path& log) {
  ImportOptions options;
  options.read_sources = false;
  options.keep_record_texts = true;
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(log.string(), options);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : v1::SessionCapture();
}

int Count(const std::string& text, const std::regex& re) {
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

bool IsCompilePage(const std::string& path) {
  return absl::StartsWith(path, "compiles/") && absl::EndsWith(path, ".html") &&
         path.find('/', 9) == std::string::npos;
}

// Every page: the CSP, no script, no resource; every href a file of the site (and its #id there).
void CheckPages(const MemorySink& site) {
  const std::regex attr(R"re(\b(href|src)="([^"]*)")re");
  for (const auto& [path, text] : site.files) {
    if (!absl::EndsWith(path, ".html")) continue;
    SCOPED_TRACE(path);
    EXPECT_THAT(text, HasSubstr("content=\"default-src 'none'; style-src 'unsafe-inline'\""));
    EXPECT_THAT(text, Not(HasSubstr("<script")));
    for (auto m = std::sregex_iterator(text.begin(), text.end(), attr); m != std::sregex_iterator();
         ++m) {
      ASSERT_EQ((*m)[1].str(), "href") << "a resource: " << (*m)[0].str();
      const std::string href = absl::StrReplaceAll((*m)[2].str(), {{"&amp;", "&"}});
      ASSERT_FALSE(absl::StrContains(href, ":")) << "not a relative link: " << href;
      const size_t hash = href.find('#');
      const std::string file = href.substr(0, hash);
      std::string target = path;
      if (!file.empty()) {
        target = fs::path(fs::path(path).parent_path() / file).lexically_normal().string();
      }
      auto it = site.files.find(target);
      ASSERT_NE(it, site.files.end()) << "a link to nothing: " << href;
      if (hash != std::string::npos && absl::EndsWith(target, ".html")) {
        EXPECT_THAT(it->second, HasSubstr(absl::StrCat("id=\"", href.substr(hash + 1), "\"")))
            << "a link to no id: " << href;
      }
    }
  }
}

double Num(const Value& v, const std::string& key) {
  return v.struct_value().fields().at(key).number_value();
}

TEST(SiteTest, EveryLogGivesAPagePerCompileAndTheCountsItRecords) {
  const std::vector<std::string> logs = testing::FixtureTraceLogs();
  ASSERT_GE(logs.size(), 50u);
  const std::regex failed(
      R"re(<h1>Compile [^<]*</h1>\n<p class="sub">[^\n]*<span class="st-failed">)re");
  const std::regex restarted(
      R"re(<h1>Compile [^<]*</h1>\n<p class="sub">[^\n]*<span class="st-restarted">)re");
  const std::regex cache(
      R"re(<tr><td>(fx_graph|aot_autograd)</td><td class="cache-(hit|miss|bypass)">)re");
  const std::regex tuned(R"re(<tr><td>triton</td><td class="cache-(hit|miss|bypass)">)re");
  for (const std::string& log : logs) {
    SCOPED_TRACE(log);
    const std::string name = absl::StrCat(
        absl::StrReplaceAll(testing::WrittenName(fs::relative(log, kFixtures).string()),
                            {{"/", "__"}}),
        ".json");
    absl::StatusOr<std::string> text = ReadFile((kExpected / name).string());
    ASSERT_TRUE(text.ok()) << text.status();
    Value expected;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &expected).ok());

    const MemorySink site = Render(Import(log));
    ASSERT_FALSE(site.order.empty());
    EXPECT_EQ(site.order.front(), "index.html");
    int pages = 0, failures = 0, restarts = 0;
    std::map<std::string, int> caches, autotune;
    for (const auto& [path, page] : site.files) {
      if (!IsCompilePage(path)) continue;
      ++pages;
      failures += Count(page, failed);
      restarts += Count(page, restarted);
      for (auto m = std::sregex_iterator(page.begin(), page.end(), cache);
           m != std::sregex_iterator(); ++m)
        ++caches[(*m)[2].str()];
      for (auto m = std::sregex_iterator(page.begin(), page.end(), tuned);
           m != std::sregex_iterator(); ++m)
        ++autotune[(*m)[1].str()];
    }
    EXPECT_EQ(pages, Num(expected, "compiles"));
    EXPECT_EQ(failures, Num(expected, "failed"));
    EXPECT_EQ(restarts, Num(expected, "restarts"));
    const Value& ec = expected.struct_value().fields().at("cache");
    const Value& ea = expected.struct_value().fields().at("autotune");
    for (const char* outcome : {"hit", "miss", "bypass"}) {
      EXPECT_EQ(caches[outcome], Num(ec, outcome)) << outcome;
      EXPECT_EQ(autotune[outcome], Num(ea, outcome)) << "autotune " << outcome;
    }
    CheckPages(site);
  }
}

// The question users ask: where did my dynamic dim get specialized? The scene's user lines.
TEST(SiteTest, ASpecializationNamesTheUserLineThatMadeIt) {
  const MemorySink site = Render(Import(kFixtures / "torch-2.6" / "specialize" / "trace.log.gz"));
  const std::string& decode = site.files.at("compiles/0_0_0.html");
  EXPECT_THAT(decode, HasSubstr("<tr><td><code>s0</code></td><td><code>L[&#39;x&#39;].size()[1]"
                                "</code></td><td><code>24</code></td><td><code>"
                                "/mnt/project/specialize.py:44</code> in <code>decode</code>"));
  const std::string& checked = site.files.at("compiles/1_0_0.html");
  EXPECT_THAT(checked, HasSubstr("<tr><td><code>s0 &lt;= 16</code></td><td><code>"
                                 "/mnt/project/specialize.py:51</code> in <code>decode_checked"));
  const std::string& strict = site.files.at("compiles/2_0_0.html");
  EXPECT_THAT(strict, HasSubstr("<span class=\"st-failed\">failed</span>"));
  EXPECT_THAT(strict, HasSubstr("ConstraintViolationError"));
  EXPECT_THAT(strict, HasSubstr("/mnt/project/specialize.py:58</code> in <code>decode_strict"));
}

// gpt_recompiles: 0/1 ran because 0/0's size guard failed; each page links to the other.
TEST(SiteTest, ARecompileAndTheGuardThatFailedLinkBothWays) {
  const MemorySink site =
      Render(Import(kFixtures / "torch-2.6" / "gpt_recompiles" / "trace.log.gz"));
  EXPECT_THAT(site.files.at("compiles/0_1_0.html"),
              HasSubstr("href=\"../compiles/0_0_0.html#guards\""));
  EXPECT_THAT(site.files.at("compiles/0_0_0.html"),
              HasSubstr("href=\"../compiles/0_1_0.html#recompiles\""));
  EXPECT_THAT(site.files.at("index.html"), HasSubstr("href=\"compiles/0_3_0.html\""));
}

// adamw_step: 0/0 restarts at `loss.backward()`; its page says so and links the attempt after.
TEST(SiteTest, ARestartedAttemptLinksTheAttemptThatFollowed) {
  const MemorySink site = Render(Import(kFixtures / "torch-2.6" / "adamw_step" / "trace.log.gz"));
  const std::string& page = site.files.at("compiles/0_0_0.html");
  EXPECT_THAT(page, HasSubstr("traced the frame again as <a class=\""));
  EXPECT_THAT(page, HasSubstr("href=\"../compiles/0_0_1.html\""));
  EXPECT_THAT(page, HasSubstr("Reason: Unsupported: Tensor.backward</code></li>"));
  // The inductor work came in the attempt after: its trace events are that page's.
  EXPECT_THAT(page, Not(HasSubstr("<code>inductor_compile</code>")));
  EXPECT_THAT(site.files.at("compiles/0_0_1.html"), HasSubstr("<code>inductor_compile</code>"));
}

// health-head: the resume function after `int(self.pos)` broke again inside the blocks' loop and
// compiled nothing (torch ran it eagerly): its page says skipped, not ok; the compiles around it
// that did compile say ok.
TEST(SiteTest, AFrameTorchSkippedForItsBreakReadsSkipped) {
  const MemorySink site = Render(Import(kFixtures / "torch-2.6" / "health-head" / "trace.log.gz"));
  EXPECT_THAT(site.files.at("compiles/1_0_0.html"),
              HasSubstr("<span class=\"st-skipped\">skipped</span>"));
  EXPECT_THAT(site.files.at("compiles/2_0_1.html"), HasSubstr("<span class=\"st-ok\">ok</span>"));
  EXPECT_THAT(site.files.at("index.html"), HasSubstr("st-skipped"));
}

// Every record's text is on the site once: a small one in its compile's records page, under the
// anchor the record list links, a large one (or a graph, code or cache record) in a file of its
// own. And the small ones share that page: gpt_recompiles' compiles have hundreds of describe_*
// records each, and the site is a few files per compile, not one per record.
TEST(SiteTest, SmallRecordsShareTheirCompilesRecordsPage) {
  const v1::SessionCapture capture =
      Import(kFixtures / "torch-2.6" / "gpt_recompiles" / "trace.log.gz");
  const MemorySink site = Render(capture);
  const std::regex section(R"re(<section id="r(\d+)">)re");
  std::map<int, std::string> bundled;  // record index -> the bundle page it is on
  size_t bundles = 0;
  for (const auto& [path, text] : site.files) {
    if (!absl::EndsWith(path, "/records.html")) continue;
    ++bundles;
    for (auto m = std::sregex_iterator(text.begin(), text.end(), section);
         m != std::sregex_iterator(); ++m) {
      EXPECT_TRUE(bundled.emplace(std::stoi((*m)[1].str()), path).second) << (*m)[0].str();
    }
  }
  ASSERT_GT(bundles, 0u);
  int with_text = 0, own_files = 0;
  for (int i = 0; i < capture.records_size(); ++i) {
    const v1::Record& r = capture.records(i);
    if (r.text().empty() || r.compile_id().empty()) continue;
    ++with_text;
    SCOPED_TRACE(absl::StrCat("record ", i, " ", r.kind(), " ", r.name()));
    if (auto it = bundled.find(i); it != bundled.end()) {
      EXPECT_LE(r.text().size(), 16u << 10);
      HtmlWriter escaped;
      escaped.Text(r.text());
      EXPECT_THAT(site.files.at(it->second),
                  HasSubstr(absl::StrCat("<pre>", escaped.Release(), "</pre>")));
      continue;
    }
    ++own_files;
    int copies = 0;
    for (const auto& [path, text] : site.files)
      copies += !absl::EndsWith(path, ".html") && text == r.text();
    EXPECT_GE(copies, 1);
  }
  EXPECT_GT(bundled.size(), 10 * static_cast<size_t>(own_files));
  EXPECT_LT(site.files.size(), static_cast<size_t>(with_text) / 5);
  CheckPages(site);
}

// Each record's text is on its compile's page once, whatever its name holds: an output code file
// in a user's cache folder (TORCHINDUCTOR_CACHE_DIR=~/.cache/inductor) is under "Output code",
// not again under "Caches".
TEST(SiteTest, EachRecordIsShownOnceOnItsPage) {
  v1::SessionCapture capture = Import(kFixtures / "torch-2.6" / "gpt_recompiles" / "trace.log.gz");
  int renamed = 0;
  for (v1::Record& r : *capture.mutable_records()) {
    if (r.kind() == "inductor_output_code")
      r.set_name(absl::StrCat("/home/u/.cache/inductor/", renamed++, ".py"));
  }
  ASSERT_GT(renamed, 0);
  const MemorySink site = Render(capture);
  const std::regex download(R"re(<a download href="([^"]+)")re");
  int shown_code = 0;
  for (const auto& [path, text] : site.files) {
    if (!IsCompilePage(path)) continue;
    std::map<std::string, int> shown;  // record file -> times its text is on the page
    for (auto m = std::sregex_iterator(text.begin(), text.end(), download);
         m != std::sregex_iterator(); ++m) {
      ++shown[(*m)[1].str()];
    }
    for (const auto& [file, times] : shown) {
      EXPECT_EQ(times, 1) << path << ": " << file;
      shown_code += absl::StrContains(file, "inductor_output_code");
    }
  }
  EXPECT_EQ(shown_code, renamed);
}

TEST(SiteTest, HostileStringsAreInert) {
  const v1::SessionCapture capture = testing::HostileCapture();
  MemorySink site;
  ASSERT_TRUE(RenderHtmlSite(capture, testing::HostileReport(), site).ok());
  ASSERT_GE(site.files.size(), 3u);  // the index, the compile's page, the record of no compile
  bool escaped = false;
  for (const auto& [path, text] : site.files) {
    SCOPED_TRACE(path);
    for (char c : path) ASSERT_TRUE(absl::ascii_isalnum(c) || absl::StrContains("_.-/", c));
    if (!absl::EndsWith(path, ".html")) continue;
    EXPECT_THAT(text, Not(HasSubstr("<script>alert")));
    EXPECT_THAT(text, Not(HasSubstr("\x1b")));
    escaped |= absl::StrContains(text, testing::kHostileEscapedHtml);
  }
  EXPECT_TRUE(escaped);
  CheckPages(site);
}

// 10,000 compiles: 10,000 small pages, and an index that folds each frame's rows.
TEST(SiteTest, TenThousandCompilesGiveSmallPagesAndAFoldedIndex) {
  v1::SessionCapture capture;
  capture.set_schema("0.5.0");
  for (int f = 0; f < 100; ++f) {
    v1::Frame* frame = capture.add_frames();
    frame->set_id(f);
    frame->set_name(absl::StrCat("fn", f));
    frame->set_file("/w/model.py");
    frame->set_line(10 + f);
    for (int k = 0; k < 100; ++k) {
      v1::Compile* c = capture.add_compiles();
      c->set_id(absl::StrCat(f, "/", k));
      c->set_frame_id(f);
      c->set_frame_compile_id(k);
      c->set_status(v1::Compile::OK);
      c->set_duration_us(1000 + k);
      if (k > 0) c->add_recompile_reasons(absl::StrCat(f, "/", k - 1, ": L['x'] == ", k - 1));
      v1::StackFrame* s = c->add_stack();
      s->set_file("/w/train.py");
      s->set_line(5);
      s->set_name("main");
      *c->add_stack() = v1::StackFrame();
      c->mutable_stack(1)->set_file("/w/model.py");
      c->mutable_stack(1)->set_line(10 + f);
      c->mutable_stack(1)->set_name(frame->name());
    }
  }
  MemorySink site;
  ASSERT_TRUE(RenderHtmlSite(capture, v1::AnalysisReport(), site).ok());
  int pages = 0;
  size_t largest = 0;
  for (const auto& [path, text] : site.files) {
    if (!IsCompilePage(path)) continue;
    ++pages;
    largest = std::max(largest, text.size());
  }
  EXPECT_EQ(pages, 10000);
  EXPECT_LT(largest, 64u << 10);
  const std::string& index = site.files.at("index.html");
  EXPECT_LT(index.size(), 16u << 20);
  // Each frame's compiles are a group of their own, folded.
  EXPECT_GE(Count(index, std::regex("<details class=\"frame\">")), 100);
}

TEST(SiteTest, ADirectorySinkKeepsEveryFileInsideItsFolder) {
  const fs::path dir = fs::path(::testing::TempDir()) / "site_sink";
  fs::remove_all(dir);
  DirectorySink sink(dir.string());
  EXPECT_TRUE(sink.Write("compiles/0_0_0/1_dynamo_start.txt", "x").ok());
  EXPECT_TRUE(fs::exists(dir / "compiles" / "0_0_0" / "1_dynamo_start.txt"));
  for (const std::string bad :
       {"../escape.html", "/etc/passwd", "a/../../b", "a/./b", "", "a b.html", "a\\b"}) {
    const absl::Status s = sink.Write(bad, "x");
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad << ": " << s;
  }
  EXPECT_FALSE(fs::exists(dir.parent_path() / "escape.html"));
  EXPECT_EQ(sink.files(), 1u);
}

}  // namespace
}  // namespace cl

// The correctness DB: the shipped lint/correctness.toml loads and covers every pattern; each kind
// of invalid DB is refused with an error naming the line; a DB escalates, lowers assumed-compiled
// findings, gates by the captured torch version, and may define patterns of its own.
#include "lint/correctness_db.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lint/catalogue.h"
#include "tests/lint/lint_testing.h"
#include "tests/testing/status_matchers.h"

namespace cl::lint {
namespace {

using ::cl::testing::StatusIs;
using namespace ::cl::lint::testing;  // NOLINT(build/namespaces): the helpers and matchers

std::string ShippedText() {
  std::string text;
  FILE* f = std::fopen(CL_SOURCE_DIR "/lint/correctness.toml", "rb");
  if (f == nullptr) return text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  return text;
}

// A minimal valid DB with one pattern; `extra` goes into the pattern table.
std::string Db(const std::string& pattern_body,
               const std::string& detect = "kind = \"inplace_on_alias\"") {
  return absl::StrCat(
      "schema_version = 1\nupdated = 2026-01-15\n\n[[pattern]]\nid = \"in_place_op_on_alias\"\n",
      pattern_body, "\n[pattern.detect]\n", detect, "\n");
}

constexpr char kIssue[] =
    "[[pattern.issues]]\nurl = \"https://github.com/pytorch/pytorch/issues/94777\"\n";

TEST(CorrectnessDbTest, TheShippedDbCoversEveryPattern) {
  absl::StatusOr<CorrectnessDb> db = CorrectnessDb::Parse(ShippedText());
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(db->schema_version(), 1);
  EXPECT_EQ(db->updated(), "2026-11-29");
  for (const PatternSpec& builtin : BuiltinPatterns()) {
    const PatternSpec* p = db->Find(builtin.id);
    ASSERT_NE(p, nullptr) << builtin.id << " has no DB entry";
    EXPECT_TRUE(p->rated);
    EXPECT_NE(p->severity, Severity::kNone) << builtin.id;
    EXPECT_FALSE(p->remedy.empty()) << builtin.id;
    EXPECT_FALSE(p->title.empty()) << builtin.id;
    EXPECT_EQ(p->kind, builtin.kind) << builtin.id;
    for (const IssueLink& link : p->issues) {
      EXPECT_TRUE(link.url.rfind("https://github.com/pytorch/pytorch/", 0) == 0) << link.url;
    }
  }
  EXPECT_EQ(db->patterns().size(), BuiltinPatterns().size());
  EXPECT_EQ(db->Find("in_place_op_on_alias")->issues.size(), 6u);
  EXPECT_EQ(db->Find("in_place_op_on_alias")->issues[0].url,
            "https://github.com/pytorch/pytorch/issues/94777");
}

struct BadDb {
  const char* name;
  std::string text;
  const char* error;
};

class InvalidDbTest : public ::testing::TestWithParam<BadDb> {};

TEST_P(InvalidDbTest, IsRefusedNamingTheLine) {
  EXPECT_THAT(CorrectnessDb::Parse(GetParam().text),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().error)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InvalidDbTest,
    ::testing::Values(
        BadDb{"syntax", "schema_version = 1\n[[pattern]\nid = \"x\"\n",
              "correctness DB line 2, column"},
        // toml++ built without NDEBUG asserts on this one instead of refusing it
        // (correctness_db_fuzz): the build links Debian's library, built with it.
        BadDb{"triple_bracket", "schema_version = 1\n[[[pattern]]\n",
              "correctness DB line 2, column 3: Error while parsing key"},
        BadDb{"no_schema", "[[pattern]]\nid = \"x\"\n", "line 1: schema_version is missing"},
        BadDb{"wrong_schema", "schema_version = 2\n", "line 1: schema_version must be 1"},
        BadDb{"unknown_kind",
              Db("category = \"aliasing\"\nseverity = \"warning\"", "kind = \"magic\""),
              "correctness DB line 9: pattern \"in_place_op_on_alias\": detect.kind \"magic\" is "
              "not a detector kind"},
        BadDb{"bad_severity", Db("category = \"aliasing\"\nseverity = \"fatal\""),
              "line 7: pattern \"in_place_op_on_alias\": severity \"fatal\" is not one of error, "
              "warning, info"},
        BadDb{"error_without_issue", Db("category = \"aliasing\"\nseverity = \"error\""),
              "line 7: pattern \"in_place_op_on_alias\": error severity needs at least one "
              "[[pattern.issues]] link"},
        BadDb{"escalation_to_error_without_issue",
              Db("category = \"aliasing\"\nseverity = \"warning\"",
                 "kind = \"inplace_on_alias\"\nescalate_if = { producer_in = [\"expand\"], "
                 "severity = \"error\" }"),
              "line 7: pattern \"in_place_op_on_alias\": error severity needs at least one"},
        BadDb{"bad_category", Db("category = \"misc\"\nseverity = \"info\""),
              "line 6: pattern \"in_place_op_on_alias\": category \"misc\" is not one of aliasing"},
        BadDb{"missing_category", Db("severity = \"info\""),
              "pattern \"in_place_op_on_alias\": category is missing"},
        BadDb{"confidence", Db("category = \"aliasing\"\nseverity = \"info\"\nconfidence = 1.5"),
              "line 8: pattern \"in_place_op_on_alias\": confidence must be a number from 0 to 1"},
        BadDb{"nan_confidence",
              Db("category = \"aliasing\"\nseverity = \"info\"\nconfidence = nan"),
              "line 8: pattern \"in_place_op_on_alias\": confidence must be a number from 0 to 1"},
        BadDb{"bad_scope",
              Db("category = \"aliasing\"\nseverity = \"info\"\nscope = \"everywhere\""),
              "line 8: pattern \"in_place_op_on_alias\": scope \"everywhere\" is not one of"},
        BadDb{"unknown_key", Db("category = \"aliasing\"\nseverity = \"info\"\nsevrity = \"info\""),
              "line 8: pattern \"in_place_op_on_alias\": unknown key \"sevrity\""},
        BadDb{"unknown_detect_key",
              Db("category = \"aliasing\"\nseverity = \"info\"",
                 "kind = \"inplace_on_alias\"\nmethods = [\"x\"]"),
              "line 10: pattern \"in_place_op_on_alias\": detect: unknown key \"methods\""},
        BadDb{"bad_regex",
              Db("category = \"aliasing\"\nseverity = \"info\"",
                 "kind = \"inplace_on_alias\"\nexclude_methods = [\"re:(\"]"),
              "line 10: pattern \"in_place_op_on_alias\": exclude_methods: bad regular expression"},
        BadDb{"bad_id", "schema_version = 1\n[[pattern]]\nid = \"Bad-Id\"\n",
              "line 3: pattern \"Bad-Id\": the id must match ^[a-z][a-z0-9_]*$"},
        BadDb{"duplicate_id",
              absl::StrCat(Db("category = \"aliasing\"\nseverity = \"info\""),
                           "[[pattern]]\nid = \"in_place_op_on_alias\"\n"),
              "line 11: pattern \"in_place_op_on_alias\": the id is used by an earlier pattern"},
        BadDb{"bad_versions",
              Db("category = \"aliasing\"\nseverity = \"info\"\naffected_versions = \"2.1\""),
              "line 8: pattern \"in_place_op_on_alias\": affected_versions: \"2.1\" is not a "
              "version specifier"},
        BadDb{"bad_fixed_in",
              Db("category = \"aliasing\"\nseverity = \"info\"\nfixed_in = \"soon\""),
              "line 8: pattern \"in_place_op_on_alias\": fixed_in \"soon\" is not a version"},
        BadDb{"bad_url",
              absl::StrCat(Db("category = \"aliasing\"\nseverity = \"error\""),
                           "[[pattern.issues]]\nurl = \"javascript:alert(1)\"\n"),
              "line 11: pattern \"in_place_op_on_alias\": issue url \"javascript:alert(1)\" is not "
              "an http(s) link"},
        BadDb{"bad_rule",
              Db("category = \"aliasing\"\nseverity = \"info\"",
                 "kind = \"inplace_on_alias\"\nescalate_if = { when = 1, severity = \"info\" }"),
              "line 10: pattern \"in_place_op_on_alias\": escalate_if: unknown condition \"when\""},
        BadDb{"call_without_names",
              "schema_version = 1\n[[pattern]]\nid = \"mine\"\ncategory = \"rng\"\nseverity = "
              "\"info\"\n"
              "[pattern.detect]\nkind = \"call_in_region\"\n",
              "line 7: pattern \"mine\": detect.kind \"call_in_region\" needs function_names or "
              "method_names"},
        BadDb{"no_patterns", "schema_version = 1\n", "the DB has no [[pattern]] tables"}),
    [](const ::testing::TestParamInfo<BadDb>& info) { return std::string(info.param.name); });

// The hero's shape with an `expand` view beside it.
constexpr char kTwoAliases[] = R"py(import torch
@torch.compile
def f(x, w):
    y = x
    z = y.view(-1)
    z.mul_(0.5)
    b = w.expand(4, 3)
    b.add_(1)
    return y, w
)py";

TEST(DbRatingTest, SeverityEscalationAndLinks) {
  absl::StatusOr<CorrectnessDb> db = CorrectnessDb::Parse(ShippedText());
  ASSERT_TRUE(db.ok()) << db.status();
  LintOptions options;
  options.db = &*db;
  options.torch_version = "2.6.0+debian";
  const LintResult r = LintCode(kTwoAliases, options);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].severity, Severity::kWarning);  // a view: the default
  EXPECT_EQ(r.findings[1].severity, Severity::kError);    // an expand view: escalate_if producer_in
  EXPECT_EQ(r.findings[0].title, "In-place op on a view/alias whose storage is used again");
  EXPECT_EQ(r.findings[0].category, "aliasing");
  EXPECT_DOUBLE_EQ(r.findings[0].confidence, 0.7);
  EXPECT_EQ(r.findings[0].remedy, "use the out-of-place op, or clone() before mutating");
  EXPECT_THAT(r.findings[0].links, ::testing::SizeIs(6));
  EXPECT_EQ(r.findings[0].version_note, "");
}

TEST(DbRatingTest, VersionGatingDowngradesToInfo) {
  const std::string text =
      absl::StrCat(Db("category = \"aliasing\"\nseverity = \"error\"\naffected_versions = "
                      "\">=2.1,<2.9\"\nfixed_in = \"2.5\""),
                   kIssue);
  absl::StatusOr<CorrectnessDb> db = CorrectnessDb::Parse(text);
  ASSERT_TRUE(db.ok()) << db.status();
  LintOptions options;
  options.db = &*db;
  for (const auto& [version, severity, note] :
       std::vector<std::tuple<std::string, Severity, std::string>>{
           {"2.4.1", Severity::kError, ""},
           {"2.5.0a0+git1234", Severity::kError, ""},
           {"2.5.0", Severity::kInfo,
            "fixed in torch 2.5 (the capture ran 2.5.0): downgraded to info"},
           {"2.6.0+debian", Severity::kInfo,
            "fixed in torch 2.5 (the capture ran 2.6.0+debian): downgraded to info"},
           {"2.0.1", Severity::kInfo,
            "torch 2.0.1 is outside the affected versions (>=2.1,<2.9): downgraded to info"},
           {"", Severity::kError, "the capture names no torch version: not version-gated"},
           {"nightly", Severity::kError,
            "torch version \"nightly\" not understood: not version-gated"}}) {
    options.torch_version = version;
    const LintResult r = LintCode(kTwoAliases, options);
    ASSERT_FALSE(r.findings.empty()) << version;
    EXPECT_EQ(r.findings[0].severity, severity) << version;
    EXPECT_EQ(r.findings[0].version_note, note) << version;
  }
}

TEST(DbRatingTest, RulesOnLoopsFormsAndTorchVersions) {
  absl::StatusOr<CorrectnessDb> db = CorrectnessDb::Parse(ShippedText());
  ASSERT_TRUE(db.ok()) << db.status();
  LintOptions options;
  options.db = &*db;
  options.torch_version = "2.3.1";
  const LintResult r = LintCode(R"py(import torch
import torch.nn as nn
class M(nn.Module):
    def toggle(self, on):
        self.on = on
    def forward(self, x, n: int):
        v = x.sum().item()
        for i in range(n):
            w = x.max().item()
        return x * v * w
m = torch.compile(M())
)py",
                                options);
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].pattern, "module_attr_mutation");
  EXPECT_EQ(r.findings[0].severity, Severity::kError);    // torch <2.4
  EXPECT_EQ(r.findings[1].severity, Severity::kInfo);     // data-dependent, not in a loop
  EXPECT_EQ(r.findings[2].severity, Severity::kWarning);  // in a loop
  options.torch_version = "2.6.0";
  EXPECT_EQ(LintCode(R"py(import torch
class M(torch.nn.Module):
    def toggle(self, on):
        self.on = on
    def forward(self, x):
        return x
m = torch.compile(M())
)py",
                     options)
                .findings[0]
                .severity,
            Severity::kWarning);
}

TEST(DbRatingTest, AssumedCompiledFilesAreLoweredOneStep) {
  absl::StatusOr<CorrectnessDb> db = CorrectnessDb::Parse(ShippedText());
  ASSERT_TRUE(db.ok()) << db.status();
  LintOptions options;
  options.db = &*db;
  const LintResult r = LintCode(R"py(def library_helper(w):
    b = w.expand(4, 3)
    b.add_(1)
    return w
)py",
                                options);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_TRUE(r.findings[0].assumed_compiled);
  EXPECT_EQ(r.findings[0].severity, Severity::kWarning);  // error, lowered one step
  EXPECT_THAT(r.findings[0].version_note,
              HasSubstr("scanned as if compiled, severity lowered one step"));
}

TEST(DbRatingTest, ADbMayDefineItsOwnPatterns) {
  const std::string text = ShippedText() + R"(
[[pattern]]
id = "no_sleep_in_compiled"
title = "time.sleep in the compiled region"
category = "side_effect"
severity = "warning"
message = "`{op}` stalls the compiled region"
remedy = "sleep outside"
[pattern.detect]
kind = "call_in_region"
function_names = ["time.sleep"]
)";
  absl::StatusOr<CorrectnessDb> db = CorrectnessDb::Parse(text);
  ASSERT_TRUE(db.ok()) << db.status();
  LintOptions options;
  options.db = &*db;
  const LintResult r = LintCode(R"py(import time
import torch
@torch.compile
def f(x):
    time.sleep(1)
    return x
)py",
                                options);
  const Finding* f = FindingFor(r, "no_sleep_in_compiled");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->line, 5u);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->message, "`time.sleep` stalls the compiled region");
}

}  // namespace
}  // namespace cl::lint

#include "analyzers/ranks/cross_rank.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzers/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/analyzers/torch_trace_scan.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/run_pass.h"
#include "tests/testing/status_matchers.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::cl::testing::IsOk;
using ::cl::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// "0/0", "0/1", ... "0/<n-1>": one frame compiled n times.
std::vector<std::string> FrameCompiles(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back(absl::StrCat("0/", i));
  return ids;
}

// `pattern` repeated `times` times.
std::vector<std::string> Repeat(std::vector<std::string> pattern, int times) {
  std::vector<std::string> out;
  for (int i = 0; i < times; ++i) out.insert(out.end(), pattern.begin(), pattern.end());
  return out;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct Digest {
  int32_t rank = 0;
  std::vector<std::string> compile_ids = {"0/0"};
  std::vector<std::string> cache = {"fx_graph:miss"};
  uint32_t recompiles = 0;
  uint32_t failed = 0;
  uint32_t graph_breaks = 0;
  std::vector<std::string> recompile_reasons = {};
};

void Add(v1::SessionCapture* capture, const Digest& d) {
  v1::RankDigest* out = capture->add_ranks();
  out->set_rank(d.rank);
  out->set_source(absl::StrCat("rank_", d.rank, ".log"));
  for (const std::string& id : d.compile_ids) out->add_compile_ids(id);
  for (const std::string& event : d.cache) out->add_cache_sequence(event);
  out->set_compiles(static_cast<uint32_t>(d.compile_ids.size()));
  out->set_recompiles(d.recompiles);
  out->set_failed(d.failed);
  out->set_graph_breaks(d.graph_breaks);
  for (const std::string& r : d.recompile_reasons) out->add_recompile_reasons(r);
}

v1::SessionCapture Capture(const std::vector<Digest>& digests) {
  v1::SessionCapture capture;
  for (const Digest& d : digests) Add(&capture, d);
  return capture;
}

v1::CrossRankSection RunPass(const v1::SessionCapture& capture,
                             v1::AnalysisReport* report = nullptr) {
  return ::cl::testing::RunPassOk(CrossRankPass(), capture, report).ranks();
}

std::vector<std::string> Kinds(const v1::CrossRankSection& s) {
  std::vector<std::string> kinds;
  for (const v1::RankDivergence& d : s.divergences()) kinds.push_back(d.kind());
  return kinds;
}

std::vector<int32_t> Ranks(const v1::RankDivergence& d) {
  return {d.ranks().begin(), d.ranks().end()};
}

TEST(CrossRankPassTest, RanksThatAgreeHaveNoDivergence) {
  // Given out of order: the rows come back sorted by rank.
  const v1::CrossRankSection s =
      RunPass(Capture({{.rank = 2}, {.rank = 0}, {.rank = 3}, {.rank = 1}}));
  EXPECT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.world_size(), 4u);
  EXPECT_EQ(s.divergences_size(), 0);
  ASSERT_EQ(s.ranks_size(), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(s.ranks(i).rank(), i);
    EXPECT_EQ(s.ranks(i).source(), absl::StrCat("rank_", i, ".log"));
    EXPECT_EQ(s.ranks(i).compiles(), 1u);
    EXPECT_EQ(s.ranks(i).cache_misses(), 1u);
  }
}

TEST(CrossRankPassTest, ARecompileStormOnOneRankIsNamedWithWhatDiffers) {
  const v1::CrossRankSection s = RunPass(Capture({
      {.rank = 0},
      {.rank = 1, .compile_ids = FrameCompiles(15), .recompiles = 14},
      {.rank = 2},
      {.rank = 3},
  }));
  ASSERT_EQ(s.status(), v1::OK);
  ASSERT_THAT(Kinds(s), ElementsAre("compile_ids", "recompiles"));
  EXPECT_THAT(Ranks(s.divergences(0)), ElementsAre(1));
  EXPECT_EQ(s.divergences(0).detail(),
            "rank 1 compiled 15 times (0/0 … 0/14); ranks 0, 2, 3 compiled once (0/0); "
            "only on rank 1: 0/1, 0/2, 0/3, … (11 more)");
  EXPECT_THAT(Ranks(s.divergences(1)), ElementsAre(1));
  EXPECT_EQ(s.divergences(1).detail(),
            "rank 1 recompiled 14 times; ranks 0, 2, 3 did not recompile");
  EXPECT_EQ(s.ranks(1).compiles(), 15u);
  EXPECT_EQ(s.ranks(1).recompiles(), 14u);
}

TEST(CrossRankPassTest, MissingCompilesAreNamed) {
  const v1::CrossRankSection s = RunPass(Capture({
      {.rank = 0, .compile_ids = {"0/0", "1/0"}},
      {.rank = 1, .compile_ids = {"0/0", "1/0"}},
      {.rank = 2, .compile_ids = {"0/0"}},
  }));
  ASSERT_THAT(Kinds(s), ElementsAre("compile_ids"));
  EXPECT_EQ(s.divergences(0).detail(),
            "rank 2 compiled once (0/0); ranks 0, 1 compiled twice (0/0, 1/0); missing on rank 2: "
            "1/0");
}

TEST(CrossRankPassTest, TheSameCompilesInAnotherOrderDiverge) {
  const v1::CrossRankSection s = RunPass(Capture({
      {.rank = 0, .compile_ids = {"0/0", "1/0"}},
      {.rank = 1, .compile_ids = {"1/0", "0/0"}},
      {.rank = 2, .compile_ids = {"0/0", "1/0"}},
  }));
  ASSERT_THAT(Kinds(s), ElementsAre("compile_ids"));
  EXPECT_THAT(s.divergences(0).detail(),
              HasSubstr("; the same ids in another order, from position 1: 1/0 against 0/0"));
}

TEST(CrossRankPassTest, ACacheSequenceDifferenceSaysWhereAndWhat) {
  const std::vector<std::string> hits = {"fx_graph:hit", "aot_autograd:hit", "fx_graph:hit"};
  const v1::CrossRankSection s = RunPass(Capture({
      {.rank = 0, .cache = hits},
      {.rank = 1, .cache = hits},
      {.rank = 2, .cache = {"fx_graph:hit", "aot_autograd:hit", "fx_graph:miss"}},
      {.rank = 3, .cache = hits},
  }));
  ASSERT_THAT(Kinds(s), ElementsAre("cache_sequence"));
  EXPECT_THAT(Ranks(s.divergences(0)), ElementsAre(2));
  EXPECT_EQ(s.divergences(0).detail(),
            "rank 2's cache sequence differs at event 3: fx_graph:miss against fx_graph:hit on "
            "the others");
  EXPECT_EQ(s.ranks(2).cache_hits(), 2u);
  EXPECT_EQ(s.ranks(2).cache_misses(), 1u);
  EXPECT_EQ(s.ranks(0).cache_hits(), 3u);
}

TEST(CrossRankPassTest, AShorterCacheSequenceNamesTheFirstMissingEvent) {
  const std::vector<std::string> three = {"fx_graph:hit", "aot_autograd:bypass", "fx_graph:hit"};
  const v1::CrossRankSection s = RunPass(Capture({
      {.rank = 0, .cache = three},
      {.rank = 1, .cache = three},
      {.rank = 2, .cache = {"fx_graph:hit"}},
  }));
  ASSERT_THAT(Kinds(s), ElementsAre("cache_sequence"));
  EXPECT_EQ(s.divergences(0).detail(),
            "rank 2 had 1 cache event (1 hit) against 3 on the others; the first missing is event "
            "2: aot_autograd:bypass");
  EXPECT_EQ(s.ranks(0).cache_bypasses(), 1u);
}

TEST(CrossRankPassTest, ATieGoesToTheGroupWithTheLowestRank) {
  // Two ranks against two: the group holding rank 0 is the norm, whichever order they came in.
  const v1::CrossRankSection s = RunPass(Capture({
      {.rank = 2, .recompiles = 3},
      {.rank = 1, .recompiles = 3},
      {.rank = 3, .recompiles = 0},
      {.rank = 0, .recompiles = 0},
  }));
  ASSERT_THAT(Kinds(s), ElementsAre("recompiles"));
  EXPECT_THAT(Ranks(s.divergences(0)), ElementsAre(1, 2));
  EXPECT_EQ(s.divergences(0).detail(),
            "ranks 1, 2 recompiled 3 times; ranks 0, 3 did not recompile");
}

TEST(CrossRankPassTest, ThreeWaysApartNameTheNormNotTheOthers) {
  // Every rank differs: rank 0 is the norm, and each other rank is compared with it by name,
  // since "the others" would include the third rank too.
  const v1::CrossRankSection s = RunPass(Capture({
      {.rank = 0, .cache = {"fx_graph:hit"}, .graph_breaks = 0},
      {.rank = 1, .cache = {"fx_graph:miss"}, .graph_breaks = 1},
      {.rank = 2, .cache = {"fx_graph:bypass"}, .graph_breaks = 2},
  }));
  ASSERT_THAT(Kinds(s),
              ElementsAre("cache_sequence", "cache_sequence", "graph_breaks", "graph_breaks"));
  EXPECT_EQ(s.divergences(0).detail(),
            "rank 1's cache sequence differs at event 1: fx_graph:miss against fx_graph:hit on "
            "rank 0");
  EXPECT_THAT(Ranks(s.divergences(1)), ElementsAre(2));
  EXPECT_EQ(s.divergences(2).detail(), "rank 1 hit 1 graph break; rank 0 hit no graph break");
  EXPECT_EQ(s.divergences(3).detail(), "rank 2 hit 2 graph breaks; rank 0 hit no graph break");
}

// A rank of one frame compiled twice, with the given recompile reasons (one per recompile).
Digest Recompiling(int32_t rank, std::vector<std::string> reasons) {
  return {.rank = rank,
          .compile_ids = FrameCompiles(2),
          .recompiles = static_cast<uint32_t>(reasons.size()),
          .recompile_reasons = std::move(reasons)};
}

// As many recompiles, for other reasons: other graphs (a last batch of one row on rank 1 is
// specialised where rank 0's of two went dynamic). The detail shows where the reasons differ,
// with the guard's context; where the counts already differ, only the counts are said.
TEST(CrossRankPassTest, RecompilesForOtherReasonsDiverge) {
  const std::string guard =
      "0/1: 0/0: tensor 'L['args'][0]' size mismatch at index 0. expected 16, actual ";
  const v1::CrossRankSection s =
      RunPass(Capture({Recompiling(0, {guard + "2"}), Recompiling(1, {guard + "1"})}));
  ASSERT_THAT(Kinds(s), ElementsAre("recompile_reasons"));
  EXPECT_THAT(Ranks(s.divergences(0)), ElementsAre(1));
  EXPECT_THAT(s.divergences(0).detail(),
              HasSubstr("rank 1 recompiled for other reasons: at recompile 1, `…"));
  EXPECT_THAT(s.divergences(0).detail(),
              HasSubstr("size mismatch at index 0. expected 16, actual 1` against `…"));
  EXPECT_THAT(s.divergences(0).detail(), HasSubstr("expected 16, actual 2` on the others"));

  const v1::CrossRankSection counts =
      RunPass(Capture({Recompiling(0, {guard + "2"}), Recompiling(1, {guard + "1", guard + "3"})}));
  EXPECT_THAT(Kinds(counts), ElementsAre("recompiles"));

  // Object ids and addresses differ between processes for the same code (tlparse's
  // graph_exec_order_tests: `___check_obj_id(fn, 139696444471168)` on one rank, another id on
  // the other): no divergence.
  const v1::CrossRankSection ids = RunPass(Capture({
      Recompiling(0, {"0/1: 0/0: ___check_obj_id(fn, 139696444471168) at 0x7f00aa"}),
      Recompiling(1, {"0/1: 0/0: ___check_obj_id(fn, 139870659812992) at 0x7f31bb"}),
  }));
  EXPECT_THAT(Kinds(ids), ::testing::IsEmpty());

  // A size is no id, however large: a vocabulary of 2^20 against 2^21 rows still diverges.
  const std::string vocab = "0/1: 0/0: tensor 'L['logits']' size mismatch at index 0. expected ";
  EXPECT_THAT(Kinds(RunPass(Capture({Recompiling(0, {vocab + "1048576, actual 2097152"}),
                                     Recompiling(1, {vocab + "1048576, actual 4194304"})}))),
              ElementsAre("recompile_reasons"));
}

TEST(CrossRankPassTest, FailedCompilesDiverge) {
  const v1::CrossRankSection s =
      RunPass(Capture({{.rank = 0}, {.rank = 1, .failed = 1}, {.rank = 2}}));
  ASSERT_THAT(Kinds(s), ElementsAre("failed"));
  EXPECT_EQ(s.divergences(0).detail(),
            "rank 1 had 1 failed compile; ranks 0, 2 had no failed compile");
}

TEST(CrossRankPassTest, ASingleRankSessionIsSkipped) {
  for (const v1::SessionCapture& capture : {Capture({}), Capture({{.rank = 0}})}) {
    const v1::CrossRankSection s = RunPass(capture);
    EXPECT_EQ(s.status(), v1::SKIPPED);
    EXPECT_EQ(s.reason(), "single-rank session");
    EXPECT_EQ(s.ranks_size(), 0);
  }
}

TEST(CrossRankPassTest, LongListsAndHostileStringsStayShortAndValid) {
  // 20 ranks storm against 4 that compiled once; the ids are long and multi-byte.
  std::vector<Digest> digests;
  // The 64-byte cut falls inside the "é": it backs off to the character's start.
  const std::string long_id = absl::StrCat("0/", std::string(61, 'x'), "é", std::string(20, 'x'));
  for (int r = 0; r < 24; ++r) {
    digests.push_back(r < 4 ? Digest{.rank = r}
                            : Digest{.rank = r, .compile_ids = {"0/0", long_id}, .recompiles = 1});
  }
  const v1::CrossRankSection s = RunPass(Capture(digests));
  ASSERT_THAT(Kinds(s), ElementsAre("compile_ids", "recompiles"));
  EXPECT_EQ(s.divergences(0).ranks_size(), 4);  // the 4 are the odd ones out
  EXPECT_THAT(s.divergences(1).detail(),
              HasSubstr("ranks 4, 5, 6, 7, 8, 9, 10, 11, … (12 more) recompiled once"));
  EXPECT_THAT(s.divergences(0).detail(), HasSubstr(absl::StrCat("0/", std::string(61, 'x'), "…")));
  EXPECT_LT(s.divergences(0).detail().size(), 400u);
}

TEST(CrossRankPassTest, TwoLogsForOneRankAreADiagnostic) {
  v1::AnalysisReport report;
  const v1::CrossRankSection s = RunPass(Capture({{.rank = 0}, {.rank = 1}, {.rank = 1}}), &report);
  EXPECT_EQ(s.ranks_size(), 3);
  ASSERT_EQ(report.diagnostics_size(), 1);
  EXPECT_EQ(report.diagnostics(0).severity(), v1::Diagnostic::WARNING);
  EXPECT_THAT(report.diagnostics(0).message(), HasSubstr("rank 1 has more than one log"));
}

TEST(CrossRankPassTest, StopsWhenCancelled) {
  EXPECT_THAT(::cl::testing::RunPassCancelled(CrossRankPass(), Capture({{.rank = 0}, {.rank = 1}})),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("cancelled")));
}

// Report order: the failures, then the ranks, then the rest.
TEST(CrossRankPassTest, IsRegisteredRightAfterTheFailuresPass) {
  const Pass* pass = FindPass("ranks");
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->Section(), "ranks");
  ASSERT_GE(RegisteredPasses().size(), 2u);
  EXPECT_EQ(RegisteredPasses()[0]->Name(), "failures");
  EXPECT_EQ(RegisteredPasses()[1], pass);
}

// --- The real multi-rank logs (tlparse's corpus, multi_rank_logs/) ------------------------

const std::string kMultiRankDir = "torch_trace/tlparse-corpus/tlparse/multi_rank_logs";

// The digests of the four rank logs, written down from the logs (each compile's
// compilation_metrics, its fx_graph / aotautograd cache artifacts and its recompile_reasons):
// ranks 0 and 2 fail their one compile in a broken backend; rank 1 recompiles its frame 14 times,
// ten compiles hitting the caches and five missing; rank 3 recompiles 6 times, all hits.
std::vector<Digest> MultiRankFacts() {
  const std::vector<std::string> hit = {"fx_graph:hit", "aot_autograd:hit"};
  const std::vector<std::string> miss = {"fx_graph:miss", "aot_autograd:miss"};
  return {
      {.rank = 0, .compile_ids = {"0/0"}, .cache = {}, .failed = 1},
      {.rank = 1,
       .compile_ids = FrameCompiles(15),
       .cache = Concat(Repeat(hit, 10), Repeat(miss, 5)),
       .recompiles = 14},
      {.rank = 2, .compile_ids = {"0/0"}, .cache = {}, .failed = 1},
      {.rank = 3, .compile_ids = FrameCompiles(7), .cache = Repeat(hit, 7), .recompiles = 6},
  };
}

// The same facts read from the logs, so the hand-written digests cannot drift from the fixture.
// The string field `name` of `s`, or "" when it has none.
std::string StringField(const google::protobuf::Struct& s, const std::string& name) {
  const auto it = s.fields().find(name);
  return it == s.fields().end() ? "" : it->second.string_value();
}

// The cache event an artifact name records ("fx_graph_cache_hit" -> "fx_graph:hit"), or "".
std::string CacheEvent(const std::string& artifact) {
  for (const auto& [prefix, cache] :
       {std::pair<std::string, std::string>{"fx_graph_cache_", "fx_graph"},
        {"aotautograd_cache_", "aot_autograd"}}) {
    if (artifact.rfind(prefix, 0) == 0)
      return absl::StrCat(cache, ":", artifact.substr(prefix.size()));
  }
  return "";
}

Digest ScanRank(int32_t rank) {
  Digest d{.rank = rank, .compile_ids = {}, .cache = {}};
  const std::string path = testing::FixturePath(
      absl::StrCat(kMultiRankDir, "/dedicated_log_torch_trace_rank_", rank, ".log"));
  absl::StatusOr<std::string> text = testing::ReadFixture(path);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return d;
  // The scan's filter is a substring match on the header, so each record is told apart by the key
  // it actually has.
  testing::ScanTorchTrace(
      *text, {"compilation_metrics", "artifact"}, [&](const testing::TraceRecord& r) {
        const auto& fields = r.metadata.fields();
        if (auto it = fields.find("compilation_metrics"); it != fields.end()) {
          d.compile_ids.push_back(testing::RecordCompileId(r));
          if (!StringField(it->second.struct_value(), "fail_type").empty()) ++d.failed;
        } else if (auto it = fields.find("artifact"); it != fields.end()) {
          const std::string name = StringField(it->second.struct_value(), "name");
          if (std::string event = CacheEvent(name); !event.empty())
            d.cache.push_back(std::move(event));
          if (name == "recompile_reasons") ++d.recompiles;
        }
      });
  return d;
}

TEST(CrossRankRealLogsTest, TheHandWrittenDigestsAreTheLogs) {
  for (const Digest& fact : MultiRankFacts()) {
    const Digest scanned = ScanRank(fact.rank);
    EXPECT_EQ(scanned.compile_ids, fact.compile_ids) << "rank " << fact.rank;
    EXPECT_EQ(scanned.cache, fact.cache) << "rank " << fact.rank;
    EXPECT_EQ(scanned.recompiles, fact.recompiles) << "rank " << fact.rank;
    EXPECT_EQ(scanned.failed, fact.failed) << "rank " << fact.rank;
  }
}

TEST(CrossRankRealLogsTest, RankOnesRecompileStormIsReported) {
  const v1::CrossRankSection s = RunPass(Capture(MultiRankFacts()));
  ASSERT_EQ(s.status(), v1::OK);
  EXPECT_EQ(s.world_size(), 4u);
  // Ranks 0 and 2 agree with each other and nobody else: they are the norm, and ranks 1 and 3
  // each diverge on their own.
  ASSERT_THAT(Kinds(s), ElementsAre("compile_ids", "compile_ids", "cache_sequence",
                                    "cache_sequence", "recompiles", "recompiles", "failed"));
  EXPECT_THAT(Ranks(s.divergences(0)), ElementsAre(1));
  EXPECT_EQ(s.divergences(0).detail(),
            "rank 1 compiled 15 times (0/0 … 0/14); ranks 0, 2 compiled once (0/0); only on rank "
            "1: 0/1, 0/2, 0/3, … (11 more)");
  EXPECT_THAT(Ranks(s.divergences(2)), ElementsAre(1));
  EXPECT_EQ(s.divergences(2).detail(),
            "rank 1 had 30 cache events (20 hits, 10 misses) against none on ranks 0, 2; the "
            "first extra is event 1: fx_graph:hit");
  EXPECT_THAT(Ranks(s.divergences(4)), ElementsAre(1));
  EXPECT_EQ(s.divergences(4).detail(), "rank 1 recompiled 14 times; ranks 0, 2 did not recompile");
  EXPECT_THAT(Ranks(s.divergences(5)), ElementsAre(3));
  // Failed compiles split two against two; the tie goes to ranks 0 and 2.
  EXPECT_THAT(Ranks(s.divergences(6)), ElementsAre(1, 3));
  EXPECT_EQ(s.ranks(1).cache_hits(), 20u);
  EXPECT_EQ(s.ranks(1).cache_misses(), 10u);
}

}  // namespace
}  // namespace cl

// Every real log under tests/fixtures/torch_trace imports without a crash, and its counts match
// tests/golden/torch_trace/<log>.json, written from the log by expect_counts.py — a separate,
// deliberately simple reader — not by the importer. After a change to the fixtures, run
//   tests/capture/torch_trace/expect_counts.py --write tests/golden/torch_trace
//   tests/fixtures/torch_trace LOG...
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "capture/torch_trace/importer.h"
#include "capture/validate.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/fixtures.h"

namespace cl {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Value;
using google::protobuf::util::MessageDifferencer;

const fs::path kFixtures = testing::FixturePath("torch_trace");
const fs::path kExpected = fs::path(CL_SOURCE_DIR) / "tests" / "golden" / "torch_trace";

double Num(const Value& v, const std::string& key) {
  return v.struct_value().fields().at(key).number_value();
}

TEST(ImportFixturesTest, EveryLogMatchesItsIndependentExpectation) {
  const std::vector<std::string> logs = testing::FixtureTraceLogs();
  ASSERT_GE(logs.size(), 50u) << "the fixtures are missing: " << kFixtures;
  ImportOptions options;
  options.read_sources = false;
  size_t graphs = 0, nodes = 0, compiles = 0;
  for (const std::string& log : logs) {
    SCOPED_TRACE(log);
    const std::string relative = fs::relative(log, kFixtures).string();
    const std::string name =
        absl::StrCat(absl::StrReplaceAll(testing::WrittenName(relative), {{"/", "__"}}), ".json");
    absl::StatusOr<std::string> text = ReadFile((kExpected / name).string());
    ASSERT_TRUE(text.ok()) << "no expectation file " << name << " (run expect_counts.py --write)";
    Value expected;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &expected).ok());

    absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(log, options);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_TRUE(ValidateCapture(*c).ok()) << ValidateCapture(*c);

    int failed = 0, restarts = 0, reasons = 0, breaks = 0, symbols = 0, hints = 0;
    std::map<std::string, int> cache, autotune;
    for (const v1::Compile& cp : c->compiles()) {
      symbols += cp.symbols_size();
      for (const v1::Symbol& s : cp.symbols()) hints += !s.hint().empty();
      failed += cp.status() == v1::Compile::FAILED;
      restarts += cp.status() == v1::Compile::RESTARTED;
      reasons += cp.recompile_reasons_size();
      breaks += cp.graph_breaks_size();
      for (const v1::CacheEvent& e : cp.cache_events())
        ++(e.cache() == "triton" ? autotune : cache)[e.status()];
    }
    EXPECT_EQ(c->compiles_size(), Num(expected, "compiles"));
    EXPECT_EQ(failed, Num(expected, "failed"));
    EXPECT_EQ(restarts, Num(expected, "restarts"));
    EXPECT_EQ(reasons, Num(expected, "recompile_reasons"));
    EXPECT_EQ(breaks, Num(expected, "graph_breaks"));
    EXPECT_EQ(symbols, Num(expected, "symbols"));
    EXPECT_EQ(hints, Num(expected, "symbol_hints"));
    EXPECT_EQ(c->export_issues_size(), Num(expected, "export_issues"));
    EXPECT_EQ(c->export_symbols_size(), Num(expected, "export_symbols"));
    const Value& ec = expected.struct_value().fields().at("cache");
    EXPECT_EQ(cache["hit"], Num(ec, "hit"));
    EXPECT_EQ(cache["miss"], Num(ec, "miss"));
    EXPECT_EQ(cache["bypass"], Num(ec, "bypass"));
    const Value& ea = expected.struct_value().fields().at("autotune");
    EXPECT_EQ(autotune["hit"], Num(ea, "hit"));
    EXPECT_EQ(autotune["miss"], Num(ea, "miss"));
    EXPECT_EQ(autotune["bypass"], Num(ea, "bypass"));

    const auto& eg = expected.struct_value().fields().at("graphs").list_value().values();
    ASSERT_EQ(c->graphs_size(), eg.size());
    for (int i = 0; i < c->graphs_size(); ++i) {
      const auto& g = eg[i].struct_value().fields();
      EXPECT_EQ(c->graphs(i).id(), g.at("id").string_value());
      EXPECT_EQ(c->graphs(i).nodes_size(), g.at("nodes").number_value()) << c->graphs(i).id();
      nodes += c->graphs(i).nodes_size();
    }
    graphs += c->graphs_size();
    compiles += c->compiles_size();
  }
  std::cout << "imported " << logs.size() << " logs: " << compiles << " compiles, " << graphs
            << " graphs, " << nodes << " nodes\n";
  EXPECT_GT(graphs, 100u);
}

// fixtures/torch_trace/torch-2.6/no_cxx compiles an nn.Sequential, whose frame is torch's wrapper:
// the only user file is the one that called the compiled module, on the compile's stack. It is
// read, so that the lint pass sees the training loop (hooks registered after the compile, scalars
// passed to it).
TEST(ImportFixturesTest, TheFileThatCalledTheCompiledCodeIsRead) {
  ImportOptions options;
  options.path_map = {{"/mnt/project", testing::FixturePath("torch_trace/torch-2.6/scenes")}};
  absl::StatusOr<v1::SessionCapture> capture =
      ImportTraceFile(testing::FixturePath("torch_trace/torch-2.6/no_cxx/trace.log"), options);
  ASSERT_TRUE(capture.ok()) << capture.status();
  ASSERT_EQ(capture->sources_size(), 1);
  EXPECT_EQ(capture->sources(0).path(), "/mnt/project/no_cxx.py");
  EXPECT_THAT(capture->sources(0).text(), ::testing::HasSubstr("inductor_config.cpp.cxx"));
}

// `log` imported with `options`, and again with a sink `add_sink` sets on a copy of them.
struct WithAndWithoutSink {
  absl::StatusOr<v1::SessionCapture> whole, streamed;
};
WithAndWithoutSink ImportBothWays(const std::string& log, const ImportOptions& options,
                                  absl::FunctionRef<void(ImportOptions&)> add_sink) {
  ImportOptions sinking = options;
  add_sink(sinking);
  return {ImportTraceFile(log, options), ImportTraceFile(log, sinking)};
}

// ImportOptions::graph_sink (import-trace to .cls.pb): every graph is handed over whole, in order,
// and the capture keeps each without its nodes; the rest of it, the source files those nodes name
// among it, is what the import without a sink makes.
TEST(ImportFixturesTest, TheGraphSinkGetsEveryGraphWhole) {
  ImportOptions options;
  options.project_root = "/mnt/project";
  options.path_map = {{"/mnt/project/examples", CL_SOURCE_DIR "/examples/hero"}};
  std::vector<std::string> logs = testing::FixtureTraceLogs();
  logs.push_back(CL_SOURCE_DIR "/examples/hero/traces/head.log");
  int sunk_nodes = 0;
  for (const std::string& log : logs) {
    SCOPED_TRACE(log);
    std::vector<v1::Graph> sunk;
    auto [whole, streamed] = ImportBothWays(log, options, [&](ImportOptions& sinking) {
      sinking.graph_sink = [&](const v1::Graph& g) {
        sunk.push_back(g);
        sunk_nodes += g.nodes_size();
      };
    });
    ASSERT_EQ(whole.ok(), streamed.ok());
    if (!whole.ok()) continue;  // the corpus's few files that are not logs
    ASSERT_EQ(sunk.size(), static_cast<size_t>(whole->graphs_size()));
    for (int i = 0; i < whole->graphs_size(); ++i) {
      EXPECT_TRUE(MessageDifferencer::Equals(sunk[i], whole->graphs(i))) << whole->graphs(i).id();
      EXPECT_EQ(streamed->graphs(i).nodes_size(), 0);
      whole->mutable_graphs(i)->clear_nodes();
    }
    EXPECT_TRUE(MessageDifferencer::Equals(*streamed, *whole));
  }
  EXPECT_GT(sunk_nodes, 10000);
}

// ImportOptions::record_sink (import-trace to a capture file): every record of the log's list is
// handed over as the whole import would list it, texts and all, in order, and the capture keeps
// none; the rest of it is what the import without a sink makes.
TEST(ImportFixturesTest, TheRecordSinkGetsEveryRecordWhole) {
  ImportOptions options;
  options.read_sources = false;
  options.keep_record_texts = true;
  int texts = 0;
  for (const std::string& log : testing::FixtureTraceLogs()) {
    SCOPED_TRACE(log);
    std::vector<v1::Record> sunk;
    auto [whole, streamed] = ImportBothWays(log, options, [&](ImportOptions& sinking) {
      sinking.record_sink = [&](const v1::Record& r) {
        sunk.push_back(r);
        texts += !r.text().empty();
      };
    });
    ASSERT_EQ(whole.ok(), streamed.ok());
    if (!whole.ok()) continue;  // the corpus's few files that are not logs
    ASSERT_EQ(sunk.size(), static_cast<size_t>(whole->records_size()));
    for (int i = 0; i < whole->records_size(); ++i)
      EXPECT_TRUE(MessageDifferencer::Equals(sunk[i], whole->records(i))) << i;
    EXPECT_EQ(streamed->records_size(), 0);
    whole->clear_records();
    EXPECT_TRUE(MessageDifferencer::Equals(*streamed, *whole));
  }
  EXPECT_GT(texts, 1000);
}

TEST(ImportFixturesTest, TheHeroTraceHasItsFacts) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(
      testing::FixturePath("torch_trace/torch-2.6/rmsnorm_blocks-base/trace.log"), options);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->frames_size(), 1);
  EXPECT_EQ(c->frames(0).name(), "forward");
  ASSERT_EQ(c->compiles_size(), 4);
  EXPECT_EQ(c->compiles(0).status(), v1::Compile::OK);
  EXPECT_THAT(c->compiles(3).recompile_reasons(),
              ::testing::ElementsAre(
                  "0/2: tensor 'L['x']' size mismatch at index 0. expected 64, actual 128",
                  "0/1: tensor 'L['x']' size mismatch at index 0. expected 32, actual 128",
                  "0/0: tensor 'L['x']' size mismatch at index 0. expected 16, actual 128"));
  EXPECT_EQ(c->compiles(0).metrics().fields().at("co_name").string_value(), "forward");
  EXPECT_GT(c->compiles(0).duration_us(), 0);
  // The post-grad graph: the Inductor-rewritten addmm carries no stack trace.
  const v1::Graph* post = nullptr;
  for (const v1::Graph& g : c->graphs()) {
    if (g.stage() == v1::Graph::POST_GRAD && g.compile_id() == "0/0") post = &g;
  }
  ASSERT_NE(post, nullptr);
  bool addmm_without_stack = false, sub = false;
  for (const v1::Node& n : post->nodes()) {
    addmm_without_stack |= n.target() == "aten.addmm.default" && n.source().no_stacktrace();
    sub |= n.target() == "aten.sub.Tensor";
  }
  EXPECT_TRUE(addmm_without_stack);
  EXPECT_TRUE(sub);
}

TEST(ImportFixturesTest, MessyMultiRankDirectory) {
  const std::string dir =
      (kFixtures / "tlparse-corpus" / "tlparse" / "multi_rank_messy_input").string();
  absl::StatusOr<std::vector<std::string>> logs = FindTraceLogs(dir, false);
  ASSERT_TRUE(logs.ok()) << logs.status();
  ASSERT_EQ(logs->size(), 2u);  // the two rank logs; the empty and unrelated files are ignored
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<std::vector<v1::SessionCapture>> ranks = ImportTrace(dir, options);
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  ASSERT_EQ(ranks->size(), 2u);
  for (const v1::SessionCapture& c : *ranks) {
    EXPECT_EQ(c.ranks_size(), 2);
    EXPECT_EQ(c.session().world_size(), 2);
  }
}

TEST(ImportFixturesTest, MultiRankStormIsVisibleInTheDigests) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<std::vector<v1::SessionCapture>> ranks =
      ImportTrace((kFixtures / "tlparse-corpus" / "tlparse" / "multi_rank_logs").string(), options);
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  ASSERT_EQ(ranks->size(), 4u);
  const auto& digests = (*ranks)[0].ranks();
  ASSERT_EQ(digests.size(), 4);
  uint32_t most = 0;
  int storm_rank = -1;
  for (const v1::RankDigest& d : digests) {
    if (d.compiles() > most) most = d.compiles(), storm_rank = d.rank();
  }
  EXPECT_EQ(storm_rank, 1);
  EXPECT_GE(most, 15u);
}

// multi_rank_runtime/: the logs named rank 5 and rank 6 carry rank 1 inside. Each log is the rank
// its name says (seven ranks, not rank 1 three times), and the disagreement is a diagnostic.
TEST(ImportFixturesTest, ALogIsTheRankItsNameSays) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<std::vector<v1::SessionCapture>> ranks = ImportTrace(
      (kFixtures / "tlparse-corpus" / "tlparse" / "multi_rank_runtime").string(), options);
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  ASSERT_EQ(ranks->size(), 7u);
  for (int r = 0; r < 7; ++r) {
    const v1::SessionCapture& c = (*ranks)[r];
    EXPECT_EQ(c.session().rank(), r);
    EXPECT_EQ(c.ranks(r).rank(), r);
    bool said = false;
    for (const v1::Diagnostic& d : c.diagnostics()) {
      said = said || absl::StrContains(d.message(), "its records say rank 1");
    }
    EXPECT_EQ(said, r == 5 || r == 6) << "rank " << r;
  }
}

// The glog header has no year. comp_failure.log (December 2024) has no compilation_metrics
// start_time, but its chromium events carry epoch timestamps: the year is theirs, not today's.
TEST(ImportFixturesTest, TheYearComesFromTheLogsOwnTimestamps) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(
      (kFixtures / "tlparse-corpus" / "tlparse" / "comp_failure.log").string(), options);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->session().started_at(), "2024-12-06T15:20:13.926Z");
}

// cache_hit_miss.log runs three rounds of two compiles with torch._dynamo.reset() between them:
// torch's ids start again at 0/0. Every compile of every round is kept, in order, each round's
// frames its own (the third round compiles fn2 where the first two compiled fn), and each
// compile keeps its own cache events (miss, hit, miss).
TEST(ImportFixturesTest, AResetStartsANewRoundOfFrames) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(
      (kFixtures / "tlparse-corpus" / "tlparse" / "cache_hit_miss.log.gz").string(), options);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(ValidateCapture(*c).ok()) << ValidateCapture(*c);
  std::vector<std::string> ids, names, fx_cache;
  absl::flat_hash_map<uint32_t, const v1::Frame*> frames;
  for (const v1::Frame& f : c->frames()) frames[f.id()] = &f;
  for (const v1::Compile& cp : c->compiles()) {
    ids.push_back(cp.id());
    names.push_back(frames.at(cp.frame_id())->name());
    for (const v1::CacheEvent& e : cp.cache_events()) {
      if (e.cache() == "fx_graph") fx_cache.push_back(e.status());
    }
    EXPECT_EQ(cp.status(), v1::Compile::OK) << cp.id();
  }
  EXPECT_THAT(ids, ::testing::ElementsAre("0/0", "1/0", "0/0@1", "1/0@1", "0/0@2", "1/0@2"));
  EXPECT_THAT(names, ::testing::ElementsAre("_flex_attention_hop_wrapper", "fn",
                                            "_flex_attention_hop_wrapper", "fn",
                                            "_flex_attention_hop_wrapper", "fn2"));
  EXPECT_THAT(fx_cache, ::testing::ElementsAre("miss", "hit", "miss"));
  const v1::Frame& fn2 = *frames.at(c->compiles(5).frame_id());
  EXPECT_EQ(fn2.reset_round(), 2u);
  EXPECT_EQ(fn2.torch_id(), 1u);
  int said = 0;
  for (const v1::Diagnostic& d : c->diagnostics()) {
    said += absl::StrContains(d.message(), "starts again") ? 1 : 0;
  }
  EXPECT_EQ(said, 2);
}

// The same compile id started twice with no compilation_metrics between (tlparse's 2024 simple.log
// repeats its dynamo_start) is one compile, not a reset.
TEST(ImportFixturesTest, ARepeatedStartOfAnUnfinishedCompileIsNotAReset) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(
      (kFixtures / "tlparse-corpus" / "tlparse_history" / "simple.log@2024-04-30_264eb59.log")
          .string(),
      options);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->compiles_size(), 1);
  EXPECT_EQ(c->compiles(0).id(), "0/0");
}

// The AOTInductor logs hold one compilation_metrics with no compile id (a 16 s compile): it is a
// compile still, "-/0" under the one no_frame frame, its duration from start and end.
TEST(ImportFixturesTest, ACompileWithoutACompileIdIsStillACompile) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(
      (kFixtures / "tlparse-corpus" / "tlparse" / "inductor_provenance_aot_log.txt.gz").string(),
      options);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(ValidateCapture(*c).ok()) << ValidateCapture(*c);
  ASSERT_EQ(c->compiles_size(), 1);
  const v1::Compile& cp = c->compiles(0);
  EXPECT_EQ(cp.id(), "-/0");
  EXPECT_EQ(cp.status(), v1::Compile::OK);
  EXPECT_EQ(cp.duration_us(), 1747851718300222 - 1747851702373735);
  ASSERT_EQ(c->frames_size(), 1);
  EXPECT_TRUE(c->frames(0).no_frame());
}

// No record names the torch version, but the repro script torch logs (fx_graph_runnable) says
// "# torch version: ..." in its first lines: the session's version is that.
TEST(ImportFixturesTest, TheTorchVersionComesFromTheReproScript) {
  ImportOptions options;
  options.read_sources = false;
  for (const auto& [log, version] : std::vector<std::pair<fs::path, std::string>>{
           {kFixtures / "tlparse-corpus" / "tlparse" / "cache_hit_miss.log.gz",
            "2.6.0a0+giteece9ec"},
           {kFixtures / "torch-2.6" / "dynamic" / "trace.log.gz", "2.6.0+debian"},
           {kFixtures / "tlparse-corpus" / "tlparse" / "comp_failure.log", ""}}) {
    absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(log.string(), options);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->session().torch_version(), version) << log;
  }
}

// torch-2.6/prenorm_swiglu-dynamic: mark_dynamic(x, 0) on a batch of 4. The compile's create_symbol
// record is its symbol s0: the hint the analyses evaluate sizes at, what it stands for, and the
// user line that created it.
TEST(ImportFixturesTest, ACompileKeepsTheSymbolsItCreated) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(
      (kFixtures / "torch-2.6" / "prenorm_swiglu-dynamic" / "trace.log.gz").string(), options);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_GE(c->compiles_size(), 1);
  const v1::Compile& cp = c->compiles(0);
  ASSERT_EQ(cp.symbols_size(), 1);
  const v1::Symbol& s0 = cp.symbols(0);
  EXPECT_EQ(s0.name(), "s0");
  EXPECT_EQ(s0.hint(), "4");
  EXPECT_EQ(s0.range(), "[2, int_oo]");
  EXPECT_EQ(s0.source(), "L['x'].size()[0]");
  EXPECT_FALSE(s0.unbacked());
  ASSERT_EQ(s0.user_stack_size(), 3);
  EXPECT_THAT(s0.user_stack(0).file(), ::testing::EndsWith("swiglu.py"));
  EXPECT_EQ(s0.user_stack(0).line(), 71u);
  EXPECT_EQ(s0.user_stack(0).name(), "forward");
  // The innermost frame is nn.RMSNorm's forward, inside torch: where x's size was first read.
  EXPECT_THAT(s0.user_stack(2).file(), ::testing::EndsWith("torch/nn/modules/normalization.py"));
  EXPECT_EQ(s0.user_stack(2).line(), 401u);
}

// torch-2.6/nested_jagged: a jagged nested tensor's ragged length is a size symbol whose logged
// value is a nested int ("j1"), not a number. It is kept without a hint (which the analyses would
// evaluate sizes at), and the import says so, rather than producing a capture that fails
// validation and with it the whole analysis.
TEST(ImportFixturesTest, ANestedIntIsKeptWithoutAHint) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(
      (kFixtures / "torch-2.6" / "nested_jagged" / "trace.log.gz").string(), options);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(ValidateCapture(*c).ok()) << ValidateCapture(*c);
  int jagged = 0;
  for (const v1::Compile& cp : c->compiles()) {
    for (const v1::Symbol& symbol : cp.symbols()) {
      if (symbol.source() != "L['x'].size()[1]") continue;
      ++jagged;
      EXPECT_EQ(symbol.hint(), "") << cp.id() << " " << symbol.name();
      EXPECT_FALSE(symbol.unbacked());
    }
  }
  EXPECT_GE(jagged, 1);
  bool said = false;
  for (const v1::Diagnostic& d : c->diagnostics()) {
    said = said || absl::StrContains(d.message(),
                                     "whose value is not a number, such as a nested "
                                     "tensor's jagged size");
  }
  EXPECT_TRUE(said);
}

TEST(ImportFixturesTest, DirectoryWithSeveralLogsNeedsLatest) {
  const std::string dir = (kFixtures / "tlparse-corpus" / "tlparse").string();
  EXPECT_FALSE(FindTraceLogs(dir, false).ok());
  absl::StatusOr<std::vector<std::string>> latest = FindTraceLogs(dir, true);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->size(), 1u);
}

// Time by phase from the chromium trace events: the "entire_frame_compile" B/E pair of each
// compile spans what its compilation_metrics says the whole frame compile took.
TEST(ImportFixturesTest, ChromiumEventsGiveEachCompileItsPhases) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c =
      ImportTraceFile((kFixtures / "torch-2.6" / "specialize" / "trace.log.gz").string(), options);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->compiles_size(), 3);
  for (const v1::Compile& cp : c->compiles()) {
    SCOPED_TRACE(cp.id());
    int64_t frame_us = -1;
    for (const v1::Phase& p : cp.phases()) {
      if (p.name() == "entire_frame_compile") frame_us = p.duration_us();
    }
    const auto& m = cp.metrics().fields();
    ASSERT_TRUE(m.contains("entire_frame_compile_time_s"));
    const double metric_us = m.at("entire_frame_compile_time_s").number_value() * 1e6;
    EXPECT_NEAR(static_cast<double>(frame_us), metric_us, metric_us * 0.01 + 1000);
    EXPECT_GE(cp.phases_size(), 3);
  }
}

// Torch logs some trace events again, word for word, under the envelopes of later compiles
// (tlparse's collectives_parity: 0/1's pairs under 0/1, 0/2 and 0/3); each pair counts once, so the
// phase is what the metrics say (1.32 s), not three times it.
TEST(ImportFixturesTest, ATraceEventLoggedAgainCountsOnce) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c =
      ImportTraceFile((kFixtures / "tlparse-corpus" / "tlparse" / "collectives_parity" /
                       "dedicated_log_torch_trace_rank_0.log.gz")
                          .string(),
                      options);
  ASSERT_TRUE(c.ok()) << c.status();
  int checked = 0;
  for (const v1::Compile& cp : c->compiles()) {
    SCOPED_TRACE(cp.id());
    const auto& m = cp.metrics().fields();
    if (!m.contains("entire_frame_compile_time_s") ||
        !m.at("entire_frame_compile_time_s").has_number_value())
      continue;
    for (const v1::Phase& p : cp.phases()) {
      if (p.name() != "entire_frame_compile") continue;
      const double metric_us = m.at("entire_frame_compile_time_s").number_value() * 1e6;
      EXPECT_NEAR(static_cast<double>(p.duration_us()), metric_us, metric_us * 0.01 + 1000);
      ++checked;
    }
  }
  EXPECT_GE(checked, 2);
}

// In training, torch compiles the backward graph at the first backward(), after the frame compile
// has ended, under the same compile id; compilation_metrics leave it out. Its pairs are phases of
// their own, so a compile's frame phases are what its metrics time (torch-2.6/train).
TEST(ImportFixturesTest, TheBackwardCompiledAfterTheFrameIsAPhaseOfItsOwn) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c =
      ImportTraceFile((kFixtures / "torch-2.6" / "train" / "trace.log.gz").string(), options);
  ASSERT_TRUE(c.ok()) << c.status();
  int after = 0, compared = 0;
  for (const v1::Compile& cp : c->compiles()) {
    SCOPED_TRACE(cp.id());
    int64_t frame_end = -1;
    for (const v1::Phase& p : cp.phases()) {
      if (p.name() == "entire_frame_compile") frame_end = p.spans_us(p.spans_us_size() - 1);
    }
    for (const v1::Phase& p : cp.phases()) {
      // Each pair's begin: after the frame compile ended for the kept-apart phases, within it
      // for the frame's own (an outer pair such as "dynamo" may end a little after it).
      const bool kept_apart = absl::EndsWith(p.name(), kAfterFrameCompile);
      after += kept_apart;
      for (int i = 0; i < p.spans_us_size() && frame_end >= 0; i += 2) {
        if (kept_apart) {
          EXPECT_GE(p.spans_us(i), frame_end) << p.name();
        } else if (p.name() != "entire_frame_compile") {
          EXPECT_LT(p.spans_us(i), frame_end) << p.name();
        }
      }
      const auto& m = cp.metrics().fields();
      if (p.name() == "inductor_compile" && m.contains("inductor_compile_time_s") &&
          m.at("inductor_compile_time_s").has_number_value()) {
        ++compared;
        const double metric_us = m.at("inductor_compile_time_s").number_value() * 1e6;
        EXPECT_NEAR(static_cast<double>(p.duration_us()), metric_us, metric_us * 0.01 + 1000);
      }
    }
  }
  EXPECT_GT(after, 0);
  EXPECT_GT(compared, 0);
}

// After torch._dynamo.reset() (tlparse's cache_hit_miss.log: three rounds), a compile's first
// trace events begin before the dynamo_start that starts its round; they still reach it.
TEST(ImportFixturesTest, TraceEventsThatBeginBeforeAResetRoundsFirstRecordReachItsCompile) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(
      (kFixtures / "tlparse-corpus" / "tlparse" / "cache_hit_miss.log.gz").string(), options);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->compiles_size(), 6);
  for (const v1::Compile& cp : c->compiles()) {
    SCOPED_TRACE(cp.id());
    std::vector<std::string> names;
    for (const v1::Phase& p : cp.phases()) names.push_back(p.name());
    EXPECT_THAT(names, ::testing::IsSupersetOf({"dynamo", "entire_frame_compile"}));
  }
}

}  // namespace
}  // namespace cl

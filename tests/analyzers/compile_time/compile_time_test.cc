// The compile-time pass on real runs: the torch-2.6 cache scenes (a cold run, a warm run on the
// cache it filled, a run with one Inductor config entry changed, a run whose custom pass bypasses
// the FX graph cache; each a 5-size recompile storm), held to what torch itself printed
// (result.json: the compilation metrics' sum and compile_times()), and every corpus log held to
// the independent counts of expect_counts.py (tests/golden/torch_trace/).
#include "analyzers/compile_time/compile_time.h"

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/import_fixture.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Value;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Property;

constexpr char kScenes[] = "torch_trace/torch-2.6/";

v1::SessionCapture Scene(const std::string& name) {
  return testing::ImportFixtureLog(absl::StrCat(kScenes, name, "/trace.log"));
}

Value SceneResult(const std::string& name) {
  absl::StatusOr<std::string> text =
      ReadFile(testing::FixturePath(absl::StrCat(kScenes, name, "/result.json")));
  EXPECT_TRUE(text.ok()) << text.status();
  Value v;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text.value_or("{}"), &v).ok());
  return v;
}

const Value& At(const Value& v, const std::string& key) {
  return v.struct_value().fields().at(key);
}

v1::CompileTimeSection Analyze(const v1::SessionCapture& head,
                               const v1::SessionCapture* base = nullptr,
                               v1::AnalysisReport* report = nullptr) {
  return testing::RunPassOk(CompileTimePass(), head, report, base).compile_time();
}

double LedgerSum(const v1::CompileTimeSection& s) {
  double sum = 0;
  for (const v1::CompileCost& c : s.ledger()) sum += c.seconds();
  return sum;
}

const v1::CacheOutcomes* Cache(const v1::CompileTimeSection& s, const std::string& name) {
  for (const v1::CacheOutcomes& c : s.caches()) {
    if (c.cache() == name) return &c;
  }
  return nullptr;
}

TEST(CompileTimeTest, TheColdRunAddsUpToTorchsOwnFiguresAndChargesTheStormToItsCluster) {
  const v1::CompileTimeSection s = Analyze(Scene("cache-cold"));
  ASSERT_EQ(s.status(), v1::OK) << s.reason();
  const Value result = SceneResult("cache-cold");
  const double metrics = At(result, "metrics_entire_frame_s").number_value();
  const double compile_inner =
      At(At(result, "compile_times"), "_compile.compile_inner").number_value();
  EXPECT_NEAR(s.total_s(), metrics, 0.01 * metrics);
  EXPECT_NEAR(s.total_s(), compile_inner, 0.01 * compile_inner);
  EXPECT_NEAR(LedgerSum(s), s.total_s(), 1e-9 * s.total_s());
  EXPECT_EQ(s.source(), "compilation_metrics and chromium events");
  EXPECT_EQ(s.compiles_size(), 5);
  ASSERT_EQ(s.frames_size(), 1);
  EXPECT_EQ(s.frames(0).frame(), "step");
  EXPECT_EQ(s.frames(0).compiles(), 5u);

  // 0/0 is the first compile; 0/1-0/4 are one cluster of size recompiles on x's batch.
  std::map<std::string, const v1::CompileCost*> by_cause;
  for (const v1::CompileCost& c : s.ledger()) by_cause[c.cause()] = &c;
  ASSERT_TRUE(by_cause.count("first_compile"));
  ASSERT_TRUE(by_cause.count("recompile"));
  EXPECT_EQ(by_cause["first_compile"]->count(), 1u);
  EXPECT_EQ(by_cause["recompile"]->count(), 4u);
  EXPECT_EQ(by_cause["recompile"]->detail(), "4 size recompiles of `step` (x[0])");
  EXPECT_THAT(by_cause["recompile"]->location().file(), HasSubstr("cache.py"));
  EXPECT_EQ(s.compiles(0).cause(), "first_compile");
  EXPECT_EQ(s.compiles(4).cause(), "recompile");

  // Every lookup missed, and a miss saves nothing.
  for (const char* name : {"fx_graph", "aot_autograd"}) {
    const v1::CacheOutcomes* c = Cache(s, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->misses(), 5u) << name;
    EXPECT_EQ(c->hits() + c->bypasses(), 0u) << name;
    EXPECT_EQ(c->saved_s(), 0) << name;
  }
  // The phases torch's metrics time, each inside the whole frame's.
  const v1::CompileTime& first = s.compiles(0);
  for (const char* phase : {"entire_frame_compile", "backend_compile", "inductor_compile",
                            "code_gen", "GraphLowering.run"}) {
    ASSERT_TRUE(first.phases().contains(phase)) << phase;
    EXPECT_LE(first.phases().at(phase), first.seconds() + 1e-9) << phase;
  }
  EXPECT_DOUBLE_EQ(first.phases().at("entire_frame_compile"), first.seconds());
}

TEST(CompileTimeTest, TheWarmRunHitsBothCachesAndSaysWhatTheHitsSaved) {
  const v1::CompileTimeSection s = Analyze(Scene("cache-warm"));
  ASSERT_EQ(s.status(), v1::OK);
  const Value result = SceneResult("cache-warm");
  EXPECT_NEAR(s.total_s(), At(result, "metrics_entire_frame_s").number_value(), 0.01 * s.total_s());
  for (const char* name : {"fx_graph", "aot_autograd"}) {
    const v1::CacheOutcomes* c = Cache(s, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->hits(), 5u) << name;
    EXPECT_EQ(c->misses(), 0u) << name;
    EXPECT_DOUBLE_EQ(c->hit_ratio(), 1.0) << name;
  }
  // torch's own time_saved_ns for each FX graph hit: what the cold run spent in Inductor.
  EXPECT_GT(Cache(s, "fx_graph")->saved_s(), s.total_s());
  // No miss, so nothing against a base to explain.
  const v1::SessionCapture cold = Scene("cache-cold");
  EXPECT_THAT(Analyze(Scene("cache-warm"), &cold).key_diffs(), IsEmpty());
}

TEST(CompileTimeTest, AConfigChangeIsNamedAsTheKeyPartThatMadeTheCacheMiss) {
  const v1::SessionCapture base = Scene("cache-cold");
  const v1::CompileTimeSection s = Analyze(Scene("cache-config"), &base);
  ASSERT_EQ(s.status(), v1::OK);
  int fx_diffs = 0;
  for (const v1::CacheKeyDiff& d : s.key_diffs()) {
    if (d.cache() != "fx_graph") continue;
    ++fx_diffs;
    EXPECT_FALSE(d.base_hit_or_miss_same_key());
    EXPECT_EQ(d.frame(), "step");
    EXPECT_GT(d.seconds_lost(), 0);
    ASSERT_EQ(d.changed_size(), 1) << d.DebugString();
    EXPECT_EQ(d.changed(0).name(), "inductor_config[unroll_reductions_threshold]");
    EXPECT_EQ(d.changed(0).change(), "changed");
    EXPECT_EQ(d.changed(0).base_value(), "8");
    EXPECT_EQ(d.changed(0).head_value(), "4");
  }
  EXPECT_EQ(fx_diffs, 5);
  EXPECT_THAT(
      s.suggestions(),
      Contains(Property(&v1::Suggestion::text,
                        HasSubstr("`inductor_config[unroll_reductions_threshold]` changed"))));
}

TEST(CompileTimeTest, AColdRunAgainstItselfSaysTheCacheWasEmptyNotThatTheKeyChanged) {
  const v1::SessionCapture cold = Scene("cache-cold");
  const v1::CompileTimeSection s = Analyze(cold, &cold);
  ASSERT_EQ(s.key_diffs_size(), 10);  // 5 FX graph + 5 AOT autograd misses
  for (const v1::CacheKeyDiff& d : s.key_diffs()) {
    EXPECT_TRUE(d.base_hit_or_miss_same_key()) << d.compile_id();
    EXPECT_THAT(d.changed(), IsEmpty());
  }
  EXPECT_THAT(s.suggestions(), Contains(Property(&v1::Suggestion::text,
                                                 HasSubstr("Persist TORCHINDUCTOR_CACHE_DIR"))));
}

TEST(CompileTimeTest, ACustomPassWithoutAUuidIsABypassWithItsRemedy) {
  const v1::CompileTimeSection s = Analyze(Scene("cache-bypass"));
  const v1::CacheOutcomes* fx = Cache(s, "fx_graph");
  ASSERT_NE(fx, nullptr);
  EXPECT_EQ(fx->bypasses(), 5u);
  ASSERT_EQ(fx->bypass_reasons_size(), 1);
  EXPECT_EQ(fx->bypass_reasons(0).reason(), "Unsupported post grad custom pass");
  EXPECT_EQ(fx->bypass_reasons(0).reason_class(), "custom_pass_no_uuid");
  EXPECT_EQ(fx->bypass_reasons(0).count(), 5u);
  EXPECT_THAT(
      s.compiles(0).caches(),
      Contains(AllOf(Property(&v1::CompileCacheLookup::cache, "fx_graph"),
                     Property(&v1::CompileCacheLookup::outcome, "bypass"),
                     Property(&v1::CompileCacheLookup::reason_class, "custom_pass_no_uuid"))));
  EXPECT_THAT(s.suggestions(),
              Contains(AllOf(Property(&v1::Suggestion::text, HasSubstr("uuid()")),
                             Property(&v1::Suggestion::evidence,
                                      HasSubstr("Unsupported post grad custom pass")))));
  const v1::CacheOutcomes* aot = Cache(s, "aot_autograd");
  ASSERT_NE(aot, nullptr);
  EXPECT_EQ(aot->bypasses(), 5u);
}

// Every corpus log: the ledger adds up, and the cache outcomes and torch's compile seconds are
// what the independent reader counted in the log.
TEST(CompileTimeTest, EveryLogAddsUpAndMatchesTheIndependentCounts) {
  const fs::path fixtures = fs::path(CL_SOURCE_DIR) / "tests" / "fixtures";
  const fs::path expected_dir = fs::path(CL_SOURCE_DIR) / "tests" / "golden" / "torch_trace";
  const std::vector<std::string> logs = testing::FixtureTraceLogs();
  ASSERT_GE(logs.size(), 50u);
  int timed_logs = 0;
  for (const std::string& log : logs) {
    SCOPED_TRACE(log);
    const std::string rel = fs::relative(log, fixtures / "torch_trace").string();
    const std::string name =
        absl::StrCat(absl::StrReplaceAll(testing::WrittenName(rel), {{"/", "__"}}), ".json");
    absl::StatusOr<std::string> text = ReadFile((expected_dir / name).string());
    ASSERT_TRUE(text.ok()) << text.status();
    Value expected;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*text, &expected).ok());
    const v1::SessionCapture capture =
        testing::ImportFixtureLog(fs::relative(log, fixtures).string());
    const v1::CompileTimeSection s = Analyze(capture);
    if (s.status() != v1::OK) {
      EXPECT_EQ(s.status(), v1::SKIPPED);
      EXPECT_FALSE(s.reason().empty());
      EXPECT_EQ(At(expected, "timed_compiles").number_value(), 0);
      continue;
    }
    ++timed_logs;
    EXPECT_NEAR(LedgerSum(s), s.total_s(), 1e-9 * std::max(1.0, s.total_s()));
    // Every line names a cause and the compiles in it, each a compile of the log.
    std::set<std::string> ids;
    for (const v1::CompileTime& row : s.compiles()) ids.insert(row.id());
    for (const v1::CompileCost& cost : s.ledger()) {
      EXPECT_FALSE(cost.cause().empty());
      EXPECT_FALSE(cost.detail().empty()) << cost.cause();
      EXPECT_EQ(cost.count(), static_cast<uint32_t>(cost.compile_ids_size())) << cost.cause();
      EXPECT_GE(cost.count(), 1u) << cost.cause();
      for (const std::string& id : cost.compile_ids()) EXPECT_TRUE(ids.count(id)) << id;
    }
    // The compiles compilation_metrics timed: their seconds are torch's, to the microsecond.
    double metric_seconds = 0;
    int metric_timed = 0;
    ASSERT_EQ(s.compiles_size(), capture.compiles_size());
    for (int i = 0; i < capture.compiles_size(); ++i) {
      const auto& fields = capture.compiles(i).metrics().fields();
      const auto timed = [&](const char* f) {
        auto it = fields.find(f);
        return it != fields.end() && it->second.has_number_value();
      };
      if (timed("entire_frame_compile_time_s") || timed("dynamo_cumulative_compile_time_us")) {
        metric_seconds += s.compiles(i).seconds();
        ++metric_timed;
      }
    }
    EXPECT_EQ(metric_timed, At(expected, "timed_compiles").number_value());
    EXPECT_NEAR(metric_seconds, At(expected, "compile_seconds").number_value(), 1e-5);
    std::map<std::string, double> outcomes;
    for (const v1::CacheOutcomes& c : s.caches()) {
      if (c.cache() == "triton") continue;
      outcomes["hit"] += c.hits();
      outcomes["miss"] += c.misses();
      outcomes["bypass"] += c.bypasses();
    }
    for (const char* outcome : {"hit", "miss", "bypass"})
      EXPECT_EQ(outcomes[outcome], At(At(expected, "cache"), outcome).number_value()) << outcome;
  }
  EXPECT_GE(timed_logs, 20);
}

TEST(CompileTimeTest, ALogWithNoTimesIsSkippedSayingWhy) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("f");
  v1::Compile* c = capture.add_compiles();
  c->set_id("0/0");
  const v1::CompileTimeSection s = Analyze(capture);
  EXPECT_EQ(s.status(), v1::SKIPPED);
  EXPECT_THAT(s.reason(), HasSubstr("no compilation_metrics"));
  EXPECT_EQ(Analyze(v1::SessionCapture()).status(), v1::SKIPPED);
}

TEST(CompileTimeTest, MetricsAndEventsThatDisagreeGiveADiagnosticNotASilentPick) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("forward");
  v1::Compile* c = capture.add_compiles();
  c->set_id("0/0");
  (*c->mutable_metrics()->mutable_fields())["entire_frame_compile_time_s"].set_number_value(10);
  v1::Phase* p = c->add_phases();
  p->set_name("entire_frame_compile");
  p->set_duration_us(5'000'000);
  v1::AnalysisReport report;
  const v1::CompileTimeSection s = Analyze(capture, nullptr, &report);
  EXPECT_DOUBLE_EQ(s.total_s(), 10);
  ASSERT_EQ(report.diagnostics_size(), 1);
  EXPECT_EQ(report.diagnostics(0).severity(), v1::Diagnostic::WARNING);
  EXPECT_THAT(report.diagnostics(0).message(),
              AllOf(HasSubstr("entire_frame_compile"), HasSubstr("10.00 s"), HasSubstr("5.00 s")));
  // Within 5 % they agree: no diagnostic.
  p->set_duration_us(9'800'000);
  v1::AnalysisReport agreeing;
  Analyze(capture, nullptr, &agreeing);
  EXPECT_THAT(agreeing.diagnostics(), IsEmpty());
}

// After a restart, torch's metrics for the attempt that finished count the abandoned attempt's
// backend_compile too, while each event pair is the attempt's it ended in (a sandbox scene's
// TensorifyScalarRestartAnalysis: 0.26 s in the metric, 0.13 s in each attempt's events). That is
// no disagreement; a gap the attempts together do not close still is.
TEST(CompileTimeTest, ARestartedCompilesMetricCountsEveryAttemptsEvents) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("forward");
  const auto add = [&](const char* id, uint32_t attempt, double events_s) {
    v1::Compile* c = capture.add_compiles();
    c->set_id(id);
    c->set_frame_compile_id(1);
    c->set_attempt(attempt);
    v1::Phase* p = c->add_phases();
    p->set_name("backend_compile");
    p->set_duration_us(static_cast<int64_t>(events_s * 1e6));
    return c;
  };
  add("0/1", 0, 0.13)->set_status(v1::Compile::RESTARTED);
  v1::Compile* last = add("0/1_1", 1, 0.13);
  auto& fields = *last->mutable_metrics()->mutable_fields();
  fields["backend_compile_time_s"].set_number_value(0.26);
  fields["entire_frame_compile_time_s"].set_number_value(0.5);
  v1::AnalysisReport report;
  EXPECT_EQ(Analyze(capture, nullptr, &report).status(), v1::OK);
  EXPECT_THAT(report.diagnostics(), IsEmpty());

  fields["backend_compile_time_s"].set_number_value(0.6);
  v1::AnalysisReport apart;
  Analyze(capture, nullptr, &apart);
  ASSERT_EQ(apart.diagnostics_size(), 1);
  EXPECT_THAT(apart.diagnostics(0).message(), HasSubstr("backend_compile at 0.60 s"));
}

// Torch logs a recompile's reasons on its first attempt and the time on the attempt after a
// restart: that time is the recompile's cluster's, as the recompile pass files it. A restart that
// was torch restarting its analysis (TensorifyScalarRestartAnalysis, from a sandbox UNet block
// whose float timestep fills a tensor) is not called a graph break.
TEST(CompileTimeTest, ARestartedRecompileIsItsClustersAndItsRestartIsNamed) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("forward");
  const auto add = [&](const char* id, uint32_t n, uint32_t attempt, double seconds) {
    v1::Compile* c = capture.add_compiles();
    c->set_id(id);
    c->set_frame_compile_id(n);
    c->set_attempt(attempt);
    c->set_status(v1::Compile::OK);
    auto& fields = *c->mutable_metrics()->mutable_fields();
    fields["entire_frame_compile_time_s"].set_number_value(seconds);
    return c;
  };
  add("0/0", 0, 0, 1);
  v1::Compile* first = add("0/1", 1, 0, 0);
  first->set_status(v1::Compile::RESTARTED);
  first->add_recompile_reasons("0/0: L['t'] == 0.9");
  v1::Compile* second = add("0/1_1", 1, 1, 2);
  second->add_restart_reasons("<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>");
  (*second->mutable_metrics()->mutable_fields())["dynamo_time_before_restart_s"].set_number_value(
      0.5);
  add("0/2", 2, 0, 2)->add_recompile_reasons("0/1: L['t'] == 0.8");
  const v1::CompileTimeSection s = Analyze(capture);
  std::map<std::string, std::string> detail;
  for (const v1::CompileCost& cost : s.ledger()) detail[cost.cause()] = cost.detail();
  EXPECT_EQ(detail["recompile"], "2 value recompiles of `forward` (t)");
  EXPECT_EQ(detail["restart"],
            "1 compile traced again after torch restarted its analysis "
            "(TensorifyScalarRestartAnalysis)");
}

// Graph-break fragments and restarts past 30 % of the time get a remedy, but not in a session
// that compiled in a fraction of a second (tlparse's comp_metrics.log: 0.02 s).
TEST(CompileTimeTest, GraphBreakTimeGetsARemedyWhenItIsWorthOne) {
  const v1::CompileTimeSection families = Analyze(Scene("break_families"));
  EXPECT_THAT(
      families.suggestions(),
      Contains(Property(&v1::Suggestion::text, HasSubstr("Graph breaks cost compile time"))));
  const v1::CompileTimeSection tiny =
      Analyze(testing::ImportFixtureLog("torch_trace/tlparse-corpus/tlparse/comp_metrics.log"));
  ASSERT_EQ(tiny.status(), v1::OK);
  EXPECT_LT(tiny.total_s(), 1.0);
  EXPECT_THAT(tiny.ledger(), Contains(Property(&v1::CompileCost::cause, "graph_break_fragment")));
  EXPECT_THAT(tiny.suggestions(), IsEmpty());
}

// A 24-block model compiled whole (a torch 2.6 sandbox scene took 27 s for its first compile, 25 s
// of it in AOT and Inductor): the lowered graph is one block's three lines 24 times, and the
// remedy is to compile the block. Not for a library's own loop (a foreach optimizer's code per
// parameter), nor for a cold start too short to bother.
TEST(CompileTimeTest, ASlowFirstCompileOfRepeatedBlocksSuggestsCompilingTheBlock) {
  const auto session = [](double seconds, const std::string& file) {
    v1::SessionCapture capture;
    v1::Frame* frame = capture.add_frames();
    frame->set_name("forward");
    v1::Compile* c = capture.add_compiles();
    c->set_id("0/0");
    c->set_status(v1::Compile::OK);
    (*c->mutable_metrics()->mutable_fields())["entire_frame_compile_time_s"].set_number_value(
        seconds);
    c->set_duration_us(static_cast<int64_t>(seconds * 1e6));
    v1::Graph* graph = capture.add_graphs();
    graph->set_id("0/0/inductor_post_grad_graph");
    graph->set_compile_id("0/0");
    graph->set_stage(v1::Graph::POST_GRAD);
    c->add_graph_ids(graph->id());
    for (int block = 0; block < 24; ++block) {
      for (const auto& [line, target] :
           std::vector<std::pair<int, const char*>>{{11, "aten.var_mean.correction"},
                                                    {12, "aten.mm.default"},
                                                    {13, "aten.add.Tensor"},
                                                    {13, "aten.add.Tensor"}}) {
        v1::Node* node = graph->add_nodes();
        node->set_name(absl::StrCat("n", graph->nodes_size()));
        node->set_op("call_function");
        node->set_target(target);
        node->mutable_source()->set_file(file);
        node->mutable_source()->set_line(line);
      }
    }
    return capture;
  };
  const auto regional = Property(&v1::Suggestion::text, HasSubstr("regional compilation"));
  const v1::CompileTimeSection deep = Analyze(session(27.4, "/w/deep.py"));
  EXPECT_THAT(deep.suggestions(),
              Contains(AllOf(Property(&v1::Suggestion::text,
                                      HasSubstr("(/w/deep.py:11-13) repeated 24 times")),
                             regional)));
  EXPECT_THAT(Analyze(session(3.0, "/w/deep.py")).suggestions(),
              ::testing::Not(Contains(regional)));
  EXPECT_THAT(
      Analyze(session(27.4, "/usr/lib/python3/dist-packages/torch/optim/adamw.py")).suggestions(),
      ::testing::Not(Contains(regional)));

  // The real log: twelve blocks compiled whole, then block by block (whose graphs repeat nothing).
  EXPECT_THAT(Analyze(Scene("deep_blocks")).suggestions(),
              Contains(AllOf(Property(&v1::Suggestion::text,
                                      HasSubstr("deep_blocks.py:28-31) repeated 12 times")),
                             regional)));
}

// Time before a restart is the restart's only where torch restarted the compile (an attempt past
// the first, restart reasons). A resume frame dynamo skipped logs its time as "before restart" too,
// with neither: it stays the fragment's own (a sandbox scene's 1/0 and 5/0, beside two real
// restarts, made the ledger say 4 restarts where the failures section listed 2).
TEST(CompileTimeTest, OnlyARestartedCompileHasRestartTime) {
  v1::SessionCapture capture;
  v1::Frame* resume = capture.add_frames();
  resume->set_id(1);
  resume->set_name("torch_dynamo_resume_in_forward_at_38");
  v1::Frame* step = capture.add_frames();
  step->set_id(2);
  step->set_name("step");
  const auto add = [&](const char* id, uint32_t frame, uint32_t attempt, double seconds) {
    v1::Compile* c = capture.add_compiles();
    c->set_id(id);
    c->set_frame_id(frame);
    c->set_attempt(attempt);
    auto& fields = *c->mutable_metrics()->mutable_fields();
    fields["entire_frame_compile_time_s"].set_number_value(seconds);
    fields["dynamo_time_before_restart_s"].set_number_value(seconds);
    return c;
  };
  add("1/0", 1, 0, 0.005);
  add("2/0_1", 2, 1, 0.03)->add_restart_reasons("'skip function graph_break in file x.py'");
  const v1::CompileTimeSection s = Analyze(capture);
  std::map<std::string, std::pair<double, uint32_t>> by_cause;
  for (const v1::CompileCost& c : s.ledger()) by_cause[c.cause()] = {c.seconds(), c.count()};
  EXPECT_EQ(by_cause["restart"].second, 1u);
  EXPECT_DOUBLE_EQ(by_cause["restart"].first, 0.03);
  EXPECT_DOUBLE_EQ(by_cause["graph_break_fragment"].first, 0.005);
  EXPECT_DOUBLE_EQ(LedgerSum(s), 0.035);
}

// A miss on a key the session had already looked up is avoidable (the entry was not kept): the
// largest such miss of a compile is carved out of its cause once, and the ledger still adds up.
TEST(CompileTimeTest, AMissOnAKeyAlreadyLookedUpIsAvoidableAndCarvedOnce) {
  v1::SessionCapture capture;
  capture.add_frames()->set_name("forward");
  for (int i = 0; i < 2; ++i) {
    v1::Compile* c = capture.add_compiles();
    c->set_id(absl::StrCat("0/", i));
    c->set_frame_compile_id(i);
    (*c->mutable_metrics()->mutable_fields())["entire_frame_compile_time_s"].set_number_value(5);
    v1::CacheEvent* fx = c->add_cache_events();
    fx->set_cache("fx_graph");
    fx->set_status("miss");
    fx->set_key("same-graph");
    fx->set_time_us(2'000'000);
    v1::CacheEvent* aot = c->add_cache_events();
    aot->set_cache("aot_autograd");
    aot->set_status("miss");
    aot->set_key("same-aot");
    aot->set_time_us(3'000'000);
  }
  const v1::CompileTimeSection s = Analyze(capture);
  EXPECT_DOUBLE_EQ(s.total_s(), 10);
  EXPECT_DOUBLE_EQ(LedgerSum(s), 10);
  std::map<std::string, double> by_cause;
  for (const v1::CompileCost& c : s.ledger()) by_cause[c.cause()] = c.seconds();
  EXPECT_DOUBLE_EQ(by_cause["first_compile"], 5);
  EXPECT_DOUBLE_EQ(by_cause["avoidable_cache_miss"], 3);  // the larger miss, not 2 + 3
  EXPECT_DOUBLE_EQ(by_cause["recompile"], 2);
}

// Read as a user on logs the other tests only count: a one-recompile cluster reads in the
// singular and says where; a function compiled again after torch._dynamo.reset() (tlparse's
// cache_hit_miss.log: fn in three reset rounds) is one row of the frame table, not one per round.
TEST(CompileTimeTest, LinesSayWhereAndFramesAreCodeObjects) {
  const v1::CompileTimeSection gpt = Analyze(Scene("gpt_recompiles"));
  EXPECT_THAT(gpt.ledger(), Contains(Property(&v1::CompileCost::detail,
                                              "1 size recompile of `forward` (idx[0])")));
  for (const v1::CompileCost& cost : gpt.ledger())
    EXPECT_EQ(cost.location().line(), 97u) << cost.cause();  // every line is forward's
  const v1::CompileTimeSection resets =
      Analyze(testing::ImportFixtureLog("torch_trace/tlparse-corpus/tlparse/cache_hit_miss.log"));
  ASSERT_EQ(resets.frames_size(), 3);
  EXPECT_EQ(resets.frames(0).frame(), "fn");
  EXPECT_EQ(resets.frames(0).compiles(), 2u);
  // First compiles of several frames: no one place to name. Three of them are a function the log
  // compiled before a reset, compiled again after it.
  ASSERT_EQ(resets.ledger_size(), 1);
  EXPECT_FALSE(resets.ledger(0).has_location());
  EXPECT_THAT(resets.ledger(0).detail(),
              HasSubstr("(3 of them the same code again after `torch._dynamo.reset()`"));
}

// A recompile that made a changed input dynamic is expected, as the recompile pass files its
// cluster: its line says so (fixtures/torch_trace/torch-2.6/dynamic: x's size once and grad mode
// once, both expected, then a dtype), and where such recompiles are most of the time there is
// nothing to fix, only an input to mark dynamic up front.
TEST(CompileTimeTest, ExpectedRecompilesAreMarkedAndGetTheirOwnRemedy) {
  const v1::CompileTimeSection scene = Analyze(Scene("dynamic"));
  std::vector<std::string> expected, not_expected;
  for (const v1::CompileCost& cost : scene.ledger()) {
    if (cost.cause() != "recompile") continue;
    (cost.expected() ? expected : not_expected).push_back(cost.detail());
  }
  EXPECT_THAT(expected, ::testing::UnorderedElementsAre(
                            "1 size recompile of `forward` (x[0]), expected",
                            "1 global_state recompile of `forward` (grad_mode), expected"));
  EXPECT_THAT(not_expected, ::testing::ElementsAre("1 dtype recompile of `forward` (x)"));
  EXPECT_THAT(scene.suggestions(),
              Contains(Property(&v1::Suggestion::text,
                                HasSubstr("and mostly expected ones (an input that changed once "
                                          "made dynamic, a second mode such as `torch.no_grad()` "
                                          "evaluation): nothing to fix"))));

  v1::SessionCapture capture;
  capture.add_frames()->set_name("forward");
  const auto add = [&](int n, double seconds, const char* reason) {
    v1::Compile* c = capture.add_compiles();
    c->set_id(absl::StrCat("0/", n));
    c->set_frame_compile_id(n);
    c->set_status(v1::Compile::OK);
    if (reason != nullptr) c->add_recompile_reasons(reason);
    auto& fields = *c->mutable_metrics()->mutable_fields();
    fields["entire_frame_compile_time_s"].set_number_value(seconds);
    fields["dynamo_config"].set_string_value(R"({"automatic_dynamic_shapes": true})");
  };
  add(0, 1, nullptr);
  add(1, 3, "0/0: tensor 'L['x']' size mismatch at index 0. expected 4, actual 8");
  const v1::CompileTimeSection once = Analyze(capture);
  ASSERT_EQ(once.suggestions_size(), 1);
  EXPECT_THAT(once.suggestions(0).text(),
              AllOf(HasSubstr("expected"), HasSubstr("torch._dynamo.mark_dynamic")));
  EXPECT_EQ(once.suggestions(0).evidence(),
            "3.00 s of 4.00 s went to recompiles, 3.00 s of them expected");

  // A second change of the same dim is no longer automatic dynamic's one recompile.
  add(2, 3, "0/0: tensor 'L['x']' size mismatch at index 0. expected 4, actual 16");
  const v1::CompileTimeSection twice = Analyze(capture);
  ASSERT_EQ(twice.suggestions_size(), 1);
  EXPECT_THAT(twice.suggestions(0).text(), HasSubstr("apply the recompile section's remedy"));
}

// A frame the capture names only in its compiles' metrics (co_name, co_filename,
// co_firstlineno) is still named and placed, as the recompile pass names it (CollectFrames).
TEST(CompileTimeTest, AFrameKnownOnlyFromItsMetricsIsNamedAndPlaced) {
  v1::SessionCapture capture;
  v1::Compile* c = capture.add_compiles();
  c->set_id("3/0");
  c->set_frame_id(3);
  auto& m = *c->mutable_metrics()->mutable_fields();
  m["entire_frame_compile_time_s"].set_number_value(2);
  m["co_name"].set_string_value("fwd");
  m["co_filename"].set_string_value("model.py");
  m["co_firstlineno"].set_number_value(7);
  const v1::CompileTimeSection s = Analyze(capture);
  ASSERT_EQ(s.frames_size(), 1);
  EXPECT_EQ(s.frames(0).frame(), "fwd");
  EXPECT_EQ(s.frames(0).location().file(), "model.py");
  EXPECT_EQ(s.frames(0).location().line(), 7u);
  ASSERT_EQ(s.ledger_size(), 1);
  EXPECT_EQ(s.ledger(0).location().line(), 7u);
}

TEST(CompileTimeTest, BypassReasonsAreClassified) {
  EXPECT_EQ(ClassifyBypassReason("Unsupported post grad custom pass"), "custom_pass_no_uuid");
  EXPECT_EQ(ClassifyBypassReason("Unsupported call_function target flex_attention. \n Function "
                                 "module: torch.ops.higher_order"),
            "unsupported_op");
  EXPECT_EQ(ClassifyBypassReason("Cannot cache a graph with autocast enabled"), "autocast");
  EXPECT_EQ(ClassifyBypassReason("Freezing may introduce constants"), "freezing");
  EXPECT_EQ(ClassifyBypassReason("something new"), "other");
}

TEST(CompileTimeTest, ACancelledPassStops) {
  EXPECT_TRUE(absl::IsCancelled(testing::RunPassCancelled(CompileTimePass(), Scene("cache-cold"))));
}

// fixtures/torch_trace/torch-2.6/detect_head: the ledger calls a recompile expected where the
// recompile pass does, guard comments included (the user's branch on a size, torch's convolution
// picking its kernel by size); and 0/4, a recompile on a dynamic-shape guard that looks up its
// graph's key again, takes a miss the saved entry's shape guards force: not an avoidable one.
TEST(CompileTimeTest, DetectHeadRecompilesAreExpectedAsTheRecompilePassSays) {
  const v1::CompileTimeSection s = Analyze(Scene("detect_head"));
  int recompiles = 0;
  for (const v1::CompileCost& c : s.ledger()) {
    EXPECT_NE(c.cause(), "avoidable_cache_miss") << c.detail();
    if (c.cause() != "recompile") continue;
    ++recompiles;
    EXPECT_TRUE(c.expected()) << c.detail();
  }
  EXPECT_EQ(recompiles, 4);
  EXPECT_NEAR(LedgerSum(s), s.total_s(), 1e-9);
}

}  // namespace
}  // namespace cl

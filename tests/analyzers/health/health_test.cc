// The compile-health table on real runs: the torch sandbox's health pair (a KV-cache decoder whose
// head leaves a .item() statistic in each block), analyzed by the real engine, held to counts read
// from the logs independently; and the rules a table row follows (what is measured, what a moved
// break is).
#include "analyzers/health/health.h"

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/engine.h"
#include "service/thread_pool.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/import_fixture.h"

namespace cl {
namespace {

using ::testing::IsEmpty;
using ::testing::SizeIs;

v1::SessionCapture Scene(const std::string& mode) {
  return testing::ImportFixtureLog("torch_trace/torch-2.6/health-" + mode + "/trace.log");
}

// The log's dynamo_graph_break_reason records, counted from its text.
int GraphBreakRecords(const std::string& mode) {
  absl::StatusOr<std::string> text = testing::ReadFixture(
      testing::FixturePath("torch_trace/torch-2.6/health-" + mode + "/trace.log"));
  EXPECT_TRUE(text.ok());
  int n = 0;
  for (size_t at = 0; (at = text->find("\"dynamo_graph_break_reason\"", at)) != std::string::npos;
       ++at)
    ++n;
  return n;
}

v1::AnalysisReport Analyze(const v1::SessionCapture& head, const v1::SessionCapture* base,
                           v1::AnalyzeOptions options = {}) {
  ThreadPool pool(2, 16);
  Engine engine(&pool);
  absl::StatusOr<EngineResult> result = engine.Analyze(head, base, options, nullptr);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->report : v1::AnalysisReport();
}

const v1::HealthMetric& Row(const v1::HealthSection& h, const std::string& name) {
  for (const v1::HealthMetric& m : h.metrics())
    if (m.name() == name) return m;
  ADD_FAILURE() << "no row " << name;
  static const v1::HealthMetric kNone;
  return kNone;
}

TEST(HealthTest, TheHeadsNewBreakIsNamedAtItsLine) {
  const v1::SessionCapture base = Scene("base"), head = Scene("head");
  const v1::HealthSection h = Analyze(head, &base).health();
  EXPECT_EQ(h.status(), v1::OK);
  const v1::HealthMetric& breaks = Row(h, "graph_breaks");
  EXPECT_TRUE(breaks.measured() && breaks.has_base());
  EXPECT_EQ(breaks.head(), GraphBreakRecords("head"));
  EXPECT_EQ(breaks.base(), GraphBreakRecords("base"));
  EXPECT_EQ(breaks.delta(), breaks.head() - breaks.base());
  ASSERT_THAT(h.new_breaks(), SizeIs(1));
  EXPECT_EQ(h.new_breaks(0).reason(), "Tensor.item");
  EXPECT_TRUE(absl::EndsWith(h.new_breaks(0).location().file(), "health.py"));
  EXPECT_EQ(h.new_breaks(0).location().line(), 39u);  // self.last_attn_max = ....item()
  EXPECT_THAT(h.fixed_breaks(), IsEmpty());
  EXPECT_THAT(h.gates(), IsEmpty());  // none asked for

  // The other way round, the same break is gone.
  const v1::HealthSection back = Analyze(base, &head).health();
  EXPECT_THAT(back.new_breaks(), IsEmpty());
  ASSERT_THAT(back.fixed_breaks(), SizeIs(1));
  EXPECT_EQ(back.fixed_breaks(0).location().line(), 39u);
}

// The base column is what the base's own report says: the same passes ran on it.
TEST(HealthTest, TheBaseColumnIsTheBasesOwnReport) {
  const v1::SessionCapture base = Scene("base"), head = Scene("head");
  const v1::HealthSection pair = Analyze(head, &base).health();
  const v1::HealthSection alone = Analyze(base, nullptr).health();
  ASSERT_EQ(pair.metrics_size(), alone.metrics_size());
  for (int i = 0; i < pair.metrics_size(); ++i) {
    SCOPED_TRACE(pair.metrics(i).name());
    EXPECT_EQ(pair.metrics(i).has_base(), alone.metrics(i).measured());
    EXPECT_DOUBLE_EQ(pair.metrics(i).base(), alone.metrics(i).head());
    EXPECT_FALSE(alone.metrics(i).has_base());
  }
  // The recompile section itself agrees with the row.
  const v1::AnalysisReport head_alone = Analyze(head, nullptr);
  EXPECT_EQ(Row(head_alone.health(), "recompiles").head(), head_alone.recompile().total());
  EXPECT_EQ(Row(head_alone.health(), "compile_time").head(), head_alone.compile_time().total_s());
  EXPECT_EQ(Row(head_alone.health(), "cache_limit_hits").head(),
            head_alone.recompile().cache_limit_hits_size());
}

// A row whose pass did not run says so, rather than showing a zero.
TEST(HealthTest, ARowWhosePassDidNotRunIsNotMeasured) {
  v1::AnalyzeOptions options;
  options.add_passes("recompile");
  const v1::HealthSection h = Analyze(Scene("head"), nullptr, options).health();
  EXPECT_TRUE(Row(h, "graph_breaks").measured());
  const v1::HealthMetric& time = Row(h, "compile_time");
  EXPECT_FALSE(time.measured());
  EXPECT_THAT(time.note(), ::testing::HasSubstr("pass not selected"));
  EXPECT_FALSE(Row(h, "failed_compiles").measured());
  EXPECT_TRUE(Row(h, "compiled_graphs").measured());  // read from the capture itself
}

// The roofline's kernel time is of a GPU the session did not name (a CPU run here): the row
// says which one it modelled; with the session's own GPU it says nothing more.
TEST(HealthTest, KernelTimeOfAnAssumedGpuSaysWhichOne) {
  v1::SessionCapture head = Scene("head");
  head.mutable_session()->clear_gpu();
  const v1::AnalysisReport assumed = Analyze(head, nullptr);
  const v1::HealthMetric& time = Row(assumed.health(), "kernel_time");
  EXPECT_TRUE(time.measured());
  EXPECT_THAT(time.note(), ::testing::HasSubstr("the session names no GPU"));
  EXPECT_THAT(time.note(), ::testing::StartsWith("modelled for H100"));
  head.mutable_session()->set_gpu("A100-SXM-80GB");
  const v1::AnalysisReport named = Analyze(head, nullptr);
  EXPECT_EQ(Row(named.health(), "kernel_time").note(), "");
}

// A break that only moved (an edit above it) is neither new nor fixed; another line of the same
// reason in the same function is new.
TEST(HealthTest, ABreakThatMovedIsNeitherNewNorFixed) {
  v1::SessionCapture capture;
  capture.add_compiles()->set_id("0/0");
  v1::AnalysisReport base, head;
  for (v1::AnalysisReport* r : {&base, &head}) r->mutable_recompile()->set_status(v1::OK);
  v1::GraphBreakSummary* b = base.mutable_recompile()->add_graph_breaks();
  b->set_reason("Tensor.item");
  b->set_frame("forward");
  b->mutable_location()->set_file("model.py");
  b->mutable_location()->set_line(10);
  b->set_source_line("    s = x.sum().item()");
  b->set_count(1);
  v1::GraphBreakSummary* moved = head.mutable_recompile()->add_graph_breaks();
  *moved = *b;
  moved->mutable_location()->set_line(14);
  const HealthSide head_side{capture, head}, base_side{capture, base};
  v1::HealthSection h = Health(head_side, &base_side);
  EXPECT_THAT(h.new_breaks(), IsEmpty());
  EXPECT_THAT(h.fixed_breaks(), IsEmpty());

  v1::GraphBreakSummary* other = head.mutable_recompile()->add_graph_breaks();
  *other = *b;
  other->mutable_location()->set_line(20);
  other->set_source_line("    m = x.max().item()");
  h = Health(head_side, &base_side);
  ASSERT_THAT(h.new_breaks(), SizeIs(1));
  EXPECT_EQ(h.new_breaks(0).location().line(), 20u);
}

TEST(HealthTest, FormatsValuesInTheirUnit) {
  EXPECT_EQ(FormatMetricValue(3, ""), "3");
  EXPECT_EQ(FormatMetricValue(12.3, "s"), "12.30 s");
  EXPECT_EQ(FormatMetricValue(0.0041, "s"), "4.1 ms");
  EXPECT_EQ(FormatMetricValue(3e-7, "s"), "0.3 µs");
  EXPECT_EQ(FormatMetricValue(4.6e-9, "s"), "4.6 ns");
  EXPECT_EQ(FormatMetricValue(1.19e-11, "s"),
            "11.9 ps");  // one tiny kernel's estimate, not "0.0 µs"
  EXPECT_EQ(FormatMetricValue(0, "s"), "0.00 s");
  EXPECT_EQ(FormatMetricValue(0.4, "ratio"), "40%");
}

}  // namespace
}  // namespace cl

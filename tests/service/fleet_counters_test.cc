// FleetCounters on its own: the series of one fleet-label tuple exist once it is made, and a
// report counts under the category its enum value names, or under "other".
#include "service/fleet_counters.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "tests/service/metrics_reader.h"

namespace cl {
namespace {

using ::cl::testing::MetricsReader;
using ::testing::Optional;

class FleetCountersTest : public ::testing::Test {
 protected:
  prometheus::Family<prometheus::Counter>& Family(const char* name) {
    return prometheus::BuildCounter().Name(name).Help(name).Register(registry_);
  }

  prometheus::Registry registry_;
  const FleetFamilies families_{
      Family("sessions"),
      Family("recompiles"),
      Family("graph_breaks"),
      Family("checked"),
      Family("divergent"),
      Family("stale"),
      prometheus::BuildHistogram().Name("compile_seconds").Help("s").Register(registry_),
      Family("cache_lookups"),
      Family("compile_failures"),
      Family("export_findings"),
      Family("gated")};
  const prometheus::Labels fleet_{{"cluster", "c1"}};
};

std::map<std::string, std::string> With(const char* key, const char* value) {
  return {{"cluster", "c1"}, {key, value}};
}

TEST_F(FleetCountersTest, EverySeriesOfTheTupleIsMadeAtOnce) {
  FleetCounters counters(families_, fleet_);
  MetricsReader m(registry_.Collect());
  EXPECT_EQ(m.Series("sessions"), 4u);
  EXPECT_EQ(m.Series("recompiles"), 16u);  // no UNSPECIFIED, no CACHE_LIMIT
  EXPECT_EQ(m.Series("graph_breaks"), 15u);
  EXPECT_EQ(m.Series("divergent"), 3u);
  EXPECT_EQ(m.Series("stale"), 2u);
  EXPECT_THAT(m.Get("recompiles", With("category", "requires_grad")), Optional(0.0));
  EXPECT_EQ(m.Get("recompiles", With("category", "cache_limit")), std::nullopt);
  EXPECT_THAT(m.Get("graph_breaks", With("category", "nn_module")), Optional(0.0));
  EXPECT_EQ(m.Series("compile_seconds"), 6u);  // one per ledger cause
  EXPECT_EQ(m.Series("cache_lookups"), 9u);    // 3 caches x hit, miss, bypass
  EXPECT_EQ(m.Series("compile_failures"), 9u);
  EXPECT_EQ(m.Series("export_findings"), 6u);  // every kind but the unspecified
  EXPECT_THAT(m.Get("export_findings", With("kind", "trace-failed")), Optional(0.0));
  EXPECT_EQ(m.Series("gated"), 2u);
}

TEST_F(FleetCountersTest, GatedSessionsByResult) {
  FleetCounters counters(families_, fleet_);
  v1::AnalysisReport report;
  counters.CountReport(report);  // no gates asked: not a gated session
  report.mutable_health()->add_gates()->set_passed(true);
  counters.CountReport(report);
  report.mutable_health()->add_gates()->set_passed(false);
  report.mutable_health()->set_failed_gates(1);
  counters.CountReport(report);
  MetricsReader m(registry_.Collect());
  EXPECT_THAT(m.Get("gated", With("result", "passed")), Optional(1.0));
  EXPECT_THAT(m.Get("gated", With("result", "failed")), Optional(1.0));
}

TEST_F(FleetCountersTest, CompileSecondsCacheLookupsAndFailTypesAreCountedBounded) {
  FleetCounters counters(families_, fleet_);
  v1::AnalysisReport report;
  v1::CompileTimeSection& ct = *report.mutable_compile_time();
  ct.set_status(v1::OK);
  // Two recompile clusters: one observation of their sum.
  for (const auto& [cause, seconds] : std::vector<std::pair<std::string, double>>{
           {"recompile", 12.5}, {"recompile", 2.5}, {"first_compile", 3}, {"new", 1}}) {
    v1::CompileCost* cost = ct.add_ledger();
    cost->set_cause(cause);
    cost->set_seconds(seconds);
  }
  v1::CacheOutcomes* fx = ct.add_caches();
  fx->set_cache("fx_graph");
  fx->set_hits(3);
  fx->set_misses(2);
  ct.add_caches()->set_cache("some_new_cache");  // not counted: no series of its own
  v1::FailuresSection& failures = *report.mutable_failures();
  failures.set_status(v1::OK);
  failures.add_failed()->set_fail_type("Unsupported");
  failures.add_failed()->set_fail_type("<class 'torch._dynamo.exc.Unsupported'>");  // older torch
  failures.add_failed()->set_fail_type("SomeNewError");
  counters.CountReport(report);
  MetricsReader m(registry_.Collect());
  EXPECT_THAT(m.Get("compile_seconds", With("cause", "recompile")), Optional(1.0));  // samples
  // A cause this build does not know counts under the last (avoidable_cache_miss), not a new label.
  EXPECT_THAT(m.Get("compile_seconds", With("cause", "avoidable_cache_miss")), Optional(1.0));
  EXPECT_EQ(m.Series("compile_seconds"), 6u);
  std::map<std::string, std::string> hits = With("cache", "fx_graph");
  hits["outcome"] = "hit";
  EXPECT_THAT(m.Get("cache_lookups", hits), Optional(3.0));
  hits["outcome"] = "miss";
  EXPECT_THAT(m.Get("cache_lookups", hits), Optional(2.0));
  EXPECT_EQ(m.Series("cache_lookups"), 9u);
  EXPECT_THAT(m.Get("compile_failures", With("fail_type", "Unsupported")), Optional(2.0));
  EXPECT_THAT(m.Get("compile_failures", With("fail_type", "other")), Optional(1.0));
}

TEST_F(FleetCountersTest, ExportFindingsByKind) {
  FleetCounters counters(families_, fleet_);
  v1::AnalysisReport report;
  v1::FailuresSection& failures = *report.mutable_failures();
  failures.set_status(v1::OK);
  failures.add_export_findings()->set_kind(v1::ExportFinding::DATA_DEPENDENT);
  failures.add_export_findings()->set_kind(v1::ExportFinding::DATA_DEPENDENT);
  failures.add_export_findings()->set_kind(v1::ExportFinding::MISSING_FAKE_KERNEL);
  failures.add_export_findings()->set_kind(static_cast<v1::ExportFinding::Kind>(99));  // newer
  counters.CountReport(report);
  MetricsReader m(registry_.Collect());
  EXPECT_THAT(m.Get("export_findings", With("kind", "data-dependent")), Optional(2.0));
  EXPECT_THAT(m.Get("export_findings", With("kind", "missing-fake-kernel")), Optional(1.0));
  EXPECT_EQ(m.Series("export_findings"), 6u);
}

TEST_F(FleetCountersTest, CategoriesWithoutASeriesCountAsOther) {
  FleetCounters counters(families_, fleet_);
  v1::AnalysisReport report;
  v1::RecompileSection& recompile = *report.mutable_recompile();
  recompile.set_status(v1::OK);
  auto cluster = [&recompile](v1::RecompileCategory::Value category, uint32_t count) {
    v1::RecompileCluster* c = recompile.add_clusters();
    c->set_category(category);
    c->set_count(count);
  };
  cluster(v1::RecompileCategory::STRIDE, 2);
  cluster(v1::RecompileCategory::CACHE_LIMIT, 1);             // never a cluster's: other
  cluster(static_cast<v1::RecompileCategory::Value>(99), 3);  // a newer build's
  v1::GraphBreakSummary* gb = recompile.add_graph_breaks();   // UNSPECIFIED: other
  gb->set_count(5);
  report.mutable_ir_diff()->set_status(v1::ERROR);
  counters.CountReport(report);
  counters.CountFailure(absl::StatusCode::kDeadlineExceeded);
  MetricsReader m(registry_.Collect());
  EXPECT_THAT(m.Get("recompiles", With("category", "stride")), Optional(2.0));
  EXPECT_THAT(m.Get("recompiles", With("category", "other")), Optional(4.0));
  EXPECT_THAT(m.Get("graph_breaks", With("category", "other")), Optional(5.0));
  EXPECT_THAT(m.Get("sessions", With("outcome", "partial")), Optional(1.0));
  EXPECT_THAT(m.Get("sessions", With("outcome", "cancelled")), Optional(1.0));
  EXPECT_THAT(m.Get("checked", {{"cluster", "c1"}}), Optional(0.0));  // divergence not OK
}

}  // namespace
}  // namespace cl

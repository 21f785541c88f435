// --trace-events output against the Trace Event Format (the JSON Object Format that
// ui.perfetto.dev and chrome://tracing open): every event has name, ph, ts, pid and tid; complete
// events a non-negative dur, and no B/E pair to balance (only X and M events); each phase lies
// inside its compile's event and names that compile. Real logs: the torch-2.6 cold cache scene
// (5 compiles with their chromium events), and a tlparse log with metrics only.
#include "service/render/trace_events.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/import_fixture.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;

using google::protobuf::Struct;
using google::protobuf::Value;

struct Event {
  std::string name, ph, compile_id;
  double ts = 0, dur = 0;
  int pid = 0, tid = 0;
};

std::vector<Event> Parse(const std::string& json) {
  Struct root;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &root).ok()) << json.substr(0, 200);
  std::vector<Event> out;
  for (const Value& v : root.fields().at("traceEvents").list_value().values()) {
    const auto& f = v.struct_value().fields();
    for (const char* required : {"name", "ph", "ts", "pid", "tid"})
      EXPECT_TRUE(f.contains(required)) << required;
    Event e;
    e.name = f.at("name").string_value();
    e.ph = f.at("ph").string_value();
    e.ts = f.at("ts").number_value();
    e.pid = static_cast<int>(f.at("pid").number_value());
    e.tid = static_cast<int>(f.at("tid").number_value());
    if (e.ph == "X") {
      EXPECT_TRUE(f.contains("dur")) << e.name;
      e.dur = f.at("dur").number_value();
      EXPECT_GE(e.dur, 0) << e.name;
      e.compile_id = f.at("args").struct_value().fields().at("compile_id").string_value();
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Only complete ("X") and metadata ("M") events: nothing to balance, and Perfetto draws each
// slice from its own ts and dur.
void ExpectOnlyCompleteAndMetadata(const std::vector<Event>& events) {
  for (const Event& e : events) EXPECT_THAT(e.ph, ::testing::AnyOf("X", "M")) << e.name;
}

TEST(TraceEventsTest, EveryCompileAndPhaseOfARealRunIsAWellFormedEvent) {
  const v1::SessionCapture capture =
      testing::ImportFixtureLog("torch_trace/torch-2.6/cache-cold/trace.log");
  absl::StatusOr<std::string> json = RenderTraceEvents({&capture});
  ASSERT_TRUE(json.ok()) << json.status();
  const std::vector<Event> events = Parse(*json);
  ExpectOnlyCompleteAndMetadata(events);
  std::map<std::string, Event> compiles;
  int phases = 0;
  for (const Event& e : events) {
    if (e.ph == "X" && e.name.rfind("compile ", 0) == 0) compiles[e.compile_id] = e;
  }
  ASSERT_EQ(compiles.size(), 5u);
  EXPECT_EQ(compiles.at("0/0").name, "compile 0/0 step");
  for (const Event& e : events) {
    if (e.ph != "X" || e.name.rfind("compile ", 0) == 0) continue;
    ++phases;
    ASSERT_TRUE(compiles.count(e.compile_id)) << e.name;
    const Event& c = compiles.at(e.compile_id);
    EXPECT_GE(e.ts, c.ts) << e.name;
    EXPECT_LE(e.ts + e.dur, c.ts + c.dur) << e.name;
  }
  // The chromium events the log holds for the compiles, each pair one event.
  EXPECT_GE(phases, 5 * 20);
  // The process is named for its rank.
  EXPECT_THAT(*json, ::testing::HasSubstr("\"rank 0\""));
}

TEST(TraceEventsTest, RanksAreProcessesAndACompileWithNoTimeIsLeftOut) {
  v1::SessionCapture rank0, rank1;
  rank1.mutable_session()->set_rank(1);
  for (v1::SessionCapture* c : {&rank0, &rank1}) {
    c->add_frames()->set_name("forward");
    v1::Compile* timed = c->add_compiles();
    timed->set_id("0/0");
    timed->set_start_us(1'000'000);
    timed->set_duration_us(500);
    c->add_compiles()->set_id("0/1");  // no start, no phase: nowhere on a timeline
  }
  absl::StatusOr<std::string> json = RenderTraceEvents({&rank0, &rank1});
  ASSERT_TRUE(json.ok());
  std::map<int, int> compiles_by_pid;
  for (const Event& e : Parse(*json)) {
    if (e.ph == "X") ++compiles_by_pid[e.pid];
  }
  EXPECT_EQ(compiles_by_pid, (std::map<int, int>{{0, 1}, {1, 1}}));
}

}  // namespace
}  // namespace cl

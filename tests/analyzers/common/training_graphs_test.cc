// A training compile lowers two post-grad graphs under one compile id, the forward and then the
// backward: the importer gives each its own kernels, and fusion and roofline read both. The log
// is a real torch 2.6 training step (fixtures/torch_trace/torch-2.6/train, CPU, so it has no
// kernel runtimes); runtime records are added after each post-grad graph, where Inductor logs them.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analyzers/common/post_grad_graph.h"
#include "analyzers/roofline/roofline.h"
#include "capture/torch_trace/importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

using ::testing::ElementsAre;

const std::string kTrainLog = testing::FixturePath("torch_trace/torch-2.6/train/trace.log");

// One inductor_runtime_and_tensor_meta record: an extern call `op` that ran `ns` nanoseconds.
std::string RuntimeRecord(absl::string_view op, int ns) {
  return absl::StrCat(
      "V1129 13:45:36.000000 23350 torch/_inductor/scheduler.py:1] {\"artifact\": {\"name\": "
      "\"inductor_runtime_and_tensor_meta\", \"encoding\": \"json\"}, \"frame_id\": 0, "
      "\"frame_compile_id\": 0, "
      "\"attempt\": 0, \"has_payload\": \"00000000000000000000000000000000\"}\n",
      "\t{\"ops\": [{\"name\": \"extern_kernels.", op,
      "\", \"type\": \"extern\", \"estimated_runtime_ns\": ", ns, "}]}\n");
}

// The train log with `records[i]` after the payload of its i-th inductor_post_grad_graph.
std::string TrainLogWith(const std::vector<std::string>& records) {
  absl::StatusOr<std::string> log = testing::ReadFixture(kTrainLog);
  EXPECT_TRUE(log.ok()) << log.status();
  std::string out;
  size_t graphs = 0;
  bool in_graph = false;
  for (absl::string_view line : absl::StrSplit(log.value_or(""), '\n', absl::SkipEmpty())) {
    if (in_graph && !absl::StartsWith(line, "\t")) {
      if (graphs <= records.size()) out += records[graphs - 1];
      in_graph = false;
    }
    absl::StrAppend(&out, line, "\n");
    if (absl::StrContains(line, "{\"inductor_post_grad_graph\": {}")) {
      ++graphs;
      in_graph = true;
    }
  }
  EXPECT_EQ(graphs, 2u) << "the forward's and the backward's";
  return out;
}

v1::SessionCapture Import(const std::string& log) {
  TraceImporter importer;
  importer.Feed(log);
  return importer.Finish();
}

TEST(TrainingGraphsTest, TheForwardAndTheBackwardAreBothRead) {
  const v1::SessionCapture c = Import(TrainLogWith({}));
  std::vector<std::string> read;
  for (const v1::Graph* g : LoweredGraphsPerFrame(c)) read.push_back(g->id());
  EXPECT_THAT(read, ElementsAre("0/0/inductor_post_grad_graph", "0/0/inductor_post_grad_graph#2"));
}

TEST(TrainingGraphsTest, EachGraphGetsTheKernelsLoggedAfterIt) {
  const v1::SessionCapture c =
      Import(TrainLogWith({RuntimeRecord("addmm", 7000), RuntimeRecord("mm", 3000)}));
  ASSERT_EQ(c.kernels_size(), 2);
  EXPECT_EQ(c.kernels(0).graph_id(), "0/0/inductor_post_grad_graph");
  EXPECT_EQ(c.kernels(1).graph_id(), "0/0/inductor_post_grad_graph#2");

  // The roofline pairs the forward's addmm with the forward's runtime, and the backward's first
  // mm with the backward's.
  const v1::AnalysisReport report = testing::RunPassOk(RooflinePass(), c);
  std::vector<std::string> timed;
  for (const v1::RooflineKernel& k : report.roofline().kernels()) {
    if (k.time_us() > 0) timed.push_back(absl::StrCat(k.op(), " ", k.time_us()));
  }
  EXPECT_THAT(timed, ElementsAre("aten.addmm.default 7", "aten.mm.default 3"));
}

// Graph ids that do not name torch's event (a hand-written capture): the compile's last one.
TEST(TrainingGraphsTest, WithoutEventNamesTheLastPostGradGraphIsRead) {
  v1::SessionCapture c;
  c.add_frames()->set_id(0);
  c.add_compiles()->set_id("0/0");
  for (const char* id : {"g0", "g1"}) {
    v1::Graph* g = c.add_graphs();
    g->set_id(id);
    g->set_compile_id("0/0");
    g->set_stage(v1::Graph::POST_GRAD);
  }
  std::vector<std::string> read;
  for (const v1::Graph* g : LoweredGraphsPerFrame(c)) read.push_back(g->id());
  EXPECT_THAT(read, ElementsAre("g1"));
  // And a before_ copy is never read where the lowered graph is there.
  c.mutable_graphs(0)->set_id("0/0/before_post_grad_graph");
  c.mutable_graphs(1)->set_id("0/0/after_post_grad_graph");
  read.clear();
  for (const v1::Graph* g : LoweredGraphsPerFrame(c)) read.push_back(g->id());
  EXPECT_THAT(read, ElementsAre("0/0/after_post_grad_graph"));
  // Nor when it is all the compile has (a log cut short during the post-grad passes).
  c.mutable_graphs()->RemoveLast();
  EXPECT_THAT(LoweredGraphsPerFrame(c), ::testing::IsEmpty());
  // Then the frame's next compile that lowered a graph is the one read.
  v1::Compile* recompile = c.add_compiles();
  recompile->set_id("0/1");
  recompile->set_frame_compile_id(1);
  v1::Graph* lowered = c.add_graphs();
  lowered->set_id("0/1/inductor_post_grad_graph");
  lowered->set_compile_id("0/1");
  lowered->set_stage(v1::Graph::POST_GRAD);
  read.clear();
  for (const v1::Graph* g : LoweredGraphsPerFrame(c)) read.push_back(g->id());
  EXPECT_THAT(read, ElementsAre("0/1/inductor_post_grad_graph"));
}

}  // namespace
}  // namespace cl

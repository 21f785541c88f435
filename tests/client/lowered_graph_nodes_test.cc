// ImportOptions::graph_nodes = kLoweredOnly (what `cl-client analyze` imports one session with)
// keeps the nodes of the post-grad graphs only. It must change nothing a user sees: on every real
// log of the fixtures and on the hero traces, the capture lists the same graphs, diagnostics and
// sources, the post-grad graphs keep every node, and the analysis report is the same, field for
// field, as from the import that keeps every graph's nodes.
#include <string>
#include <vector>

#include "capture/torch_trace/importer.h"
#include "client/analyze_client.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/fixtures.h"

namespace cl {
namespace {

using google::protobuf::util::MessageDifferencer;

std::string Diff(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  std::string diff;
  MessageDifferencer differ;
  differ.ReportDifferencesToString(&diff);
  differ.Compare(a, b);
  return diff;
}

void ExpectSameAnalysis(const std::string& log, ImportOptions options) {
  SCOPED_TRACE(log);
  options.graph_nodes = GraphNodes::kAll;
  absl::StatusOr<v1::SessionCapture> all = ImportTraceFile(log, options);
  options.graph_nodes = GraphNodes::kLoweredOnly;
  absl::StatusOr<v1::SessionCapture> lowered = ImportTraceFile(log, options);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_TRUE(lowered.ok()) << lowered.status();

  ASSERT_EQ(all->graphs_size(), lowered->graphs_size());
  for (int i = 0; i < all->graphs_size(); ++i) {
    const v1::Graph& a = all->graphs(i);
    const v1::Graph& l = lowered->graphs(i);
    EXPECT_EQ(a.id(), l.id());
    EXPECT_EQ(a.stage(), l.stage());
    if (a.stage() == v1::Graph::POST_GRAD) {
      EXPECT_EQ(Diff(a, l), "") << a.id();
    } else {
      EXPECT_EQ(l.nodes_size(), 0) << a.id();
    }
  }
  // The rest of the capture is the same message: compiles, frames, diagnostics, sources, ...
  v1::SessionCapture a = *all, l = *lowered;
  a.clear_graphs();
  l.clear_graphs();
  EXPECT_EQ(Diff(a, l), "");

  absl::StatusOr<v1::AnalyzeResponse> from_all = AnalyzeInProcess({*all, std::nullopt}, {}, 2);
  absl::StatusOr<v1::AnalyzeResponse> from_lowered =
      AnalyzeInProcess({*lowered, std::nullopt}, {}, 2);
  ASSERT_TRUE(from_all.ok()) << from_all.status();
  ASSERT_TRUE(from_lowered.ok()) << from_lowered.status();
  EXPECT_EQ(Diff(from_all->report(), from_lowered->report()), "");
}

TEST(LoweredGraphNodesTest, EveryFixtureLogGetsTheSameReport) {
  const std::vector<std::string> logs = testing::FixtureTraceLogs();
  ASSERT_GE(logs.size(), 50u);
  ImportOptions options;
  options.read_sources = false;
  for (const std::string& log : logs) ExpectSameAnalysis(log, options);
}

// The hero traces name user files that are here (through the path map): the sources the dropped
// nodes name are read all the same, and the lint pass sees the same files.
TEST(LoweredGraphNodesTest, HeroTracesReadTheSameSources) {
  ImportOptions options;
  options.project_root = "/mnt/project";
  options.path_map = {{"/mnt/project/examples", CL_SOURCE_DIR "/examples/hero"}};
  for (const char* variant : {"base", "head"}) {
    const std::string log = std::string(CL_SOURCE_DIR "/examples/hero/traces/") + variant + ".log";
    ExpectSameAnalysis(log, options);
    options.graph_nodes = GraphNodes::kLoweredOnly;
    absl::StatusOr<v1::SessionCapture> lowered = ImportTraceFile(log, options);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_GT(lowered->sources_size(), 0);
  }
}

}  // namespace
}  // namespace cl

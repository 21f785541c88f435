// ImportOptions::graph_nodes = kLoweredOnly (what `cl-client analyze` imports one session with)
// keeps the nodes of the post-grad graphs the passes read only (LoweredGraphsPerFrame: not a
// recompile's, not a before_ copy). It must change nothing a user sees: on every real log of the
// fixtures and on the hero traces, the capture lists the same graphs, diagnostics and sources, the
// graphs the passes read keep every node (less the node fields no pass reads, FxDetail::kAnalysis),
// and the analysis report is the same, field for field, as from the import that keeps every
// graph's nodes whole. So is the report of the import that keeps, of those graphs, only what the
// passes read of them (ImportOptions::lowered_sink, LoweredFacts).
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analyzers/common/post_grad_graph.h"
#include "analyzers/lowered_facts.h"
#include "capture/torch_trace/fx_graph.h"
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

// What an analysis-only import leaves out of compilation_metrics, as GraphNodes documents it:
// every inductor_config, and a dynamo_config the same as the last one its frame kept. Returns how
// many fields it removed.
int RemoveConfigSnapshots(v1::SessionCapture* capture) {
  int removed = 0;
  std::map<uint32_t, std::string> kept;  // frame id -> its last dynamo_config kept
  for (v1::Compile& c : *capture->mutable_compiles()) {
    if (!c.has_metrics()) continue;
    auto* fields = c.mutable_metrics()->mutable_fields();
    removed += static_cast<int>(fields->erase("inductor_config"));
    auto it = fields->find("dynamo_config");
    if (it == fields->end() || !it->second.has_string_value()) continue;
    auto [last, first] = kept.try_emplace(c.frame_id(), it->second.string_value());
    if (first) continue;
    if (last->second == it->second.string_value()) {
      fields->erase(it);
      ++removed;
    } else {
      last->second = it->second.string_value();
    }
  }
  return removed;
}

// What an analysis-only import leaves out of each node it keeps (FxDetail::kAnalysis): a meta's
// stride, device and SymInt expression, a source's function and code. Clears them from `graph`
// and returns how many there were.
int RemoveUnreadNodeFields(v1::Graph* graph) {
  int removed = 0;
  for (const v1::Node& n : graph->nodes()) {
    removed += n.meta().stride_size() + !n.meta().device().empty() + !n.meta().sym_expr().empty() +
               !n.source().fn().empty() + !n.source().code().empty();
  }
  ClearBeyondAnalysisDetail(graph);
  return removed;
}

// Returns how many post-grad graphs with nodes the passes do not read (recompiles', before_
// copies') the kLoweredOnly import dropped the nodes of, and adds to `*snapshots` how many config
// snapshots it left out of compilation_metrics.
int ExpectSameAnalysis(const std::string& log, ImportOptions options, int* snapshots = nullptr,
                       int* node_fields = nullptr, int64_t* facts_nodes = nullptr) {
  SCOPED_TRACE(log);
  options.graph_nodes = GraphNodes::kAll;
  absl::StatusOr<v1::SessionCapture> all = ImportTraceFile(log, options);
  options.graph_nodes = GraphNodes::kLoweredOnly;
  absl::StatusOr<v1::SessionCapture> lowered = ImportTraceFile(log, options);
  if (!all.ok() || !lowered.ok()) {
    ADD_FAILURE() << all.status() << " " << lowered.status();
    return 0;
  }

  if (all->graphs_size() != lowered->graphs_size()) {
    ADD_FAILURE() << all->graphs_size() << " graphs, and " << lowered->graphs_size();
    return 0;
  }
  int dropped_post_grad = 0;
  absl::flat_hash_set<std::string> read;
  for (const v1::Graph* g : LoweredGraphsPerFrame(*all)) read.insert(g->id());
  for (int i = 0; i < all->graphs_size(); ++i) {
    const v1::Graph& a = all->graphs(i);
    const v1::Graph& l = lowered->graphs(i);
    EXPECT_EQ(a.id(), l.id());
    EXPECT_EQ(a.stage(), l.stage());
    if (read.contains(a.id())) {
      if (options.keep_record_texts) {
        EXPECT_EQ(Diff(a, l), "") << a.id();
      } else {
        v1::Graph slim = a;
        const int removed = RemoveUnreadNodeFields(&slim);
        if (node_fields != nullptr) *node_fields += removed;
        EXPECT_EQ(Diff(slim, l), "") << a.id();
      }
    } else {
      EXPECT_EQ(l.nodes_size(), 0) << a.id();
      if (a.stage() == v1::Graph::POST_GRAD && a.nodes_size() > 0) ++dropped_post_grad;
    }
  }
  // What the passes read is the same graphs, whichever import.
  std::vector<std::string> read_lowered;
  for (const v1::Graph* g : LoweredGraphsPerFrame(*lowered)) read_lowered.push_back(g->id());
  EXPECT_EQ(read_lowered.size(), read.size());
  for (const std::string& id : read_lowered) EXPECT_TRUE(read.contains(id)) << id;
  // The rest of the capture is the same message (compiles, frames, diagnostics, sources, ...),
  // but for what only a site reads: the list of the log's records (kept with their texts for a
  // site, keep_record_texts, else not listed) and torch's config snapshots in the compiles'
  // metrics that no pass reads.
  v1::SessionCapture a = *all, l = *lowered;
  a.clear_graphs();
  l.clear_graphs();
  if (!options.keep_record_texts) {
    EXPECT_GT(a.records_size(), 0);
    EXPECT_EQ(l.records_size(), 0);
    a.clear_records();
    const int removed = RemoveConfigSnapshots(&a);
    if (snapshots != nullptr) *snapshots += removed;
  }
  EXPECT_EQ(Diff(a, l), "");

  absl::StatusOr<v1::AnalyzeResponse> from_all = AnalyzeInProcess({*all, std::nullopt}, {}, 2);
  absl::StatusOr<v1::AnalyzeResponse> from_lowered =
      AnalyzeInProcess({*lowered, std::nullopt}, {}, 2);
  EXPECT_TRUE(from_all.ok()) << from_all.status();
  EXPECT_TRUE(from_lowered.ok()) << from_lowered.status();
  if (from_all.ok() && from_lowered.ok()) {
    EXPECT_EQ(Diff(from_all->report(), from_lowered->report()), "");
  }

  // With the lowered graphs kept as what the passes read of them (ImportOptions::lowered_sink, as
  // `analyze` of one log imports): the capture is the one above without those graphs' nodes, and
  // the report the same.
  LoweredFacts facts;
  options.lowered_sink = facts.Sink();
  absl::StatusOr<v1::SessionCapture> sunk = ImportTraceFile(log, options);
  if (!sunk.ok()) {
    ADD_FAILURE() << sunk.status();
    return 0;
  }
  int nodes = 0;
  for (const v1::Graph* g : LoweredGraphsPerFrame(*lowered)) {
    nodes += g->nodes_size();
    const LoweredGraphFacts* kept = facts.Find(g->id());
    EXPECT_TRUE(kept != nullptr || g->nodes_size() == 0) << g->id();
    if (kept != nullptr) {
      EXPECT_EQ(kept->nodes, g->nodes_size()) << g->id();
    }
  }
  if (facts_nodes != nullptr) *facts_nodes += facts.nodes();
  EXPECT_GE(facts.nodes(), nodes);  // and those of graphs chosen, then displaced
  v1::SessionCapture without_nodes = *lowered;
  for (v1::Graph& g : *without_nodes.mutable_graphs()) g.clear_nodes();
  EXPECT_EQ(Diff(without_nodes, *sunk), "");
  absl::StatusOr<v1::AnalyzeResponse> from_facts =
      AnalyzeInProcess({*sunk, std::nullopt}, {}, 2, &facts);
  EXPECT_TRUE(from_facts.ok()) << from_facts.status();
  if (from_all.ok() && from_facts.ok()) {
    EXPECT_EQ(Diff(from_all->report(), from_facts->report()), "");
  }
  return dropped_post_grad;
}

TEST(LoweredGraphNodesTest, EveryFixtureLogGetsTheSameReport) {
  const std::vector<std::string> logs = testing::FixtureTraceLogs();
  ASSERT_GE(logs.size(), 50u);
  ImportOptions options;
  options.read_sources = false;
  int dropped_post_grad = 0;
  int snapshots = 0;
  int node_fields = 0;
  int64_t facts_nodes = 0;
  for (const std::string& log : logs) {
    dropped_post_grad += ExpectSameAnalysis(log, options, &snapshots, &node_fields, &facts_nodes);
  }
  // The logs recompile, and newer torch's log before_ copies: the comparison covered graphs
  // whose nodes were dropped, not only graphs that kept them, config snapshots left out, and the
  // node fields no pass reads.
  EXPECT_GT(dropped_post_grad, 0);
  EXPECT_GT(snapshots, 0);
  EXPECT_GT(node_fields, 0);
  EXPECT_GT(facts_nodes, 5000);  // graphs the passes read were kept as facts, not nodes (6,536)
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

// With a site to render (`analyze --html-dir`), the records are listed, with their texts, as the
// import that keeps every node lists them.
TEST(LoweredGraphNodesTest, ASiteKeepsTheRecords) {
  ImportOptions options;
  options.read_sources = false;
  options.keep_record_texts = true;
  EXPECT_GT(ExpectSameAnalysis(CL_SOURCE_DIR "/examples/hero/traces/head.log", options), 0);
}

}  // namespace
}  // namespace cl

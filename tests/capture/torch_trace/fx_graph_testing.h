// Helpers of the FX text parser's tests (fx_graph_*_test.cc): a dump of the parsed nodes (the
// golden format), parsing into a fresh graph, and the checks every parsed graph must pass.
#ifndef TESTS_CAPTURE_TORCH_TRACE_FX_GRAPH_TESTING_H_
#define TESTS_CAPTURE_TORCH_TRACE_FX_GRAPH_TESTING_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "capture/torch_trace/fx_graph.h"

namespace cl::fx_testing {

// tests/golden/fx_graph: payloads cut from real logs, and their expected dumps.
inline const std::string kGoldenDir = std::string(CL_SOURCE_DIR) + "/tests/golden/fx_graph";

// `%name` for a node, the literal as FX spelled it, `[...]` / `(...)` for lists and tuples.
std::string DumpArg(const v1::Arg& a);
// One line per node: `name = op[target](args, key=value)  meta{...}  src{...}  module{...}`.
std::string DumpNode(const v1::Node& n);
// The result's counts and problems, then every node.
std::string Dump(const v1::Graph& g, const FxParseResult& r);

struct Parsed {
  v1::Graph graph;
  FxParseResult result;
  // The node named `name`; a test failure (and an empty node) when there is none.
  const v1::Node& node(absl::string_view name) const;
};

Parsed Parse(absl::string_view text, FxDetail detail = FxDetail::kFull);

std::vector<std::string> Names(const v1::Graph& g);

// The graph as the rest of compile-lens will see it: names unique, every node argument an earlier
// node, every string valid UTF-8.
void ExpectConsistent(const v1::Graph& graph);

}  // namespace cl::fx_testing

#endif  // TESTS_CAPTURE_TORCH_TRACE_FX_GRAPH_TESTING_H_

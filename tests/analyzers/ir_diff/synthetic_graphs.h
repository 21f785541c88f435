// Synthetic compiled graphs for the IR diff's property tests and its benchmark.
//
// Real FX graphs are small; the matcher must also be right and fast on large and adversarial
// ones. These generators make valid graphs (placeholders first, every operand defined before its
// user, one output last) of any size, re-list a graph the way another trace of the same program
// would (renamed temporaries, another topological order), and apply random edits whose expected
// diff is known exactly.
#ifndef TESTS_ANALYZERS_IR_DIFF_SYNTHETIC_GRAPHS_H_
#define TESTS_ANALYZERS_IR_DIFF_SYNTHETIC_GRAPHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl::testing {

// `nodes` nodes (about a tenth placeholders) of a random DAG: ops of arity 1 to 3 over earlier
// nodes, mostly recent ones, literals, source lines drawn from a range a third the graph's size
// (so many nodes share one), a few shapes.
compile_lens::v1::Graph RandomGraph(int nodes, uint64_t seed);

// About `nodes` nodes of a transformer-like stack: identical blocks (the same ops from the same
// source lines in every block), each reading its own weight placeholders. The shape real models
// have, and the hard case for anchors: blocks differ only in which weights they read.
compile_lens::v1::Graph LayeredGraph(int nodes);

// The same program as another trace could list it: every node renamed, the nodes between the
// placeholders and the output in another topological order. `new_names`, when given, gets each
// old name's new one.
compile_lens::v1::Graph ShuffleAndRename(
    const compile_lens::v1::Graph& graph, uint64_t seed,
    absl::flat_hash_map<std::string, std::string>* new_names = nullptr);

// Every source line of the graph moved down by `lines`, as an edit above the model would.
void ShiftLines(compile_lens::v1::Graph* graph, uint32_t lines);

// One edit and the change the diff must report for it.
struct GraphEdit {
  std::string kind;  // "op_changed", "literal_changed", "shape_changed", "operands_reordered",
                     // "added", "removed"
  std::string node;  // the edited node (the new one for "added"), by its name in the edited graph
                     // (in the base graph for "removed")
};

// Applies `count` random edits to `graph`, each on a node whose neighbourhood no other edit
// touched (so each is reported on its own), and returns them. Fewer when the graph runs out of
// candidates.
std::vector<GraphEdit> ApplyRandomEdits(compile_lens::v1::Graph* graph, int count, uint64_t seed);

// A capture holding `graph` as the POST_GRAD graph of compile 0/0 of frame `forward`, with project
// root /proj.
compile_lens::v1::SessionCapture CaptureOf(compile_lens::v1::Graph graph);

}  // namespace cl::testing

#endif  // TESTS_ANALYZERS_IR_DIFF_SYNTHETIC_GRAPHS_H_

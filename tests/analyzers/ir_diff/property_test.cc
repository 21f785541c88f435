// Property tests of the IR diff on synthetic graphs (tests/analyzers/ir_diff/synthetic_graphs.h),
// over many seeds and two kinds of graph: random DAGs, and transformer-like stacks of identical
// blocks.
//
//   - A graph against itself, renamed and re-listed in another topological order: no change.
//   - The same with every source line shifted (an edit above the model): no change.
//   - k random edits (op, literal, shape, operand order, an added node, a removed node), for even
//     seeds with every line shifted as well: exactly those k changes, each as the kind of change
//     it is, on the node it was made on.
//
// 50 seeds here. Seeds 1 to 1000 were run once by hand (3,000 test cases, each over both kinds of
// graph and, for the edits, four k): one failed, a shifted graph where the shift put a node on
// the exact line of a look-alike (same op, same operand, another shape) so that their anchors
// swapped. Another miss, not fixed yet: with the generator's two source draws in the other order
// (clang once evaluated them so; tests/analyzers/ir_diff/synthetic_graphs.cc), seed 50's shifted
// random graph came back with 9 nodes reported changed (shape_changed/operand_changed).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzers/ir_diff/ir_diff.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/analyzers/ir_diff/synthetic_graphs.h"
#include "tests/testing/run_pass.h"

namespace cl {
namespace {

namespace v1 = ::compile_lens::v1;
using ::cl::testing::ApplyRandomEdits;
using ::cl::testing::CaptureOf;
using ::cl::testing::GraphEdit;
using ::cl::testing::LayeredGraph;
using ::cl::testing::RandomGraph;
using ::cl::testing::ShuffleAndRename;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;

constexpr int kNodes = 1500;

v1::IrDiffSection Diff(const v1::Graph& base, const v1::Graph& head) {
  const v1::SessionCapture b = CaptureOf(base);
  const v1::SessionCapture h = CaptureOf(head);
  v1::IrDiffSection section = ::cl::testing::RunPassOk(IrDiffPass(), h, nullptr, &b).ir_diff();
  EXPECT_EQ(section.status(), v1::OK) << section.reason();
  return section;
}

// "kind node" for every change the section reports; a modified node must have one kind.
std::vector<std::string> Reported(const v1::IrDiffSection& s) {
  std::vector<std::string> out;
  for (const v1::NodeChange& c : s.added()) out.push_back(absl::StrCat("added ", c.node()));
  for (const v1::NodeChange& c : s.removed()) out.push_back(absl::StrCat("removed ", c.node()));
  for (const v1::NodeChange& c : s.modified()) {
    EXPECT_EQ(c.kinds_size(), 1) << c.node() << ": " << c.change();
    out.push_back(absl::StrCat(c.kinds_size() > 0 ? c.kinds(0) : "?", " ", c.node()));
  }
  return out;
}

// What a failure needs to say: which expected changes were missed, which were not expected.
std::string Difference(std::vector<std::string> expected, std::vector<std::string> reported) {
  std::sort(expected.begin(), expected.end());
  std::sort(reported.begin(), reported.end());
  std::vector<std::string> missed, extra;
  std::set_difference(expected.begin(), expected.end(), reported.begin(), reported.end(),
                      std::back_inserter(missed));
  std::set_difference(reported.begin(), reported.end(), expected.begin(), expected.end(),
                      std::back_inserter(extra));
  return absl::StrCat("missed: ", absl::StrJoin(missed, ", "),
                      "\nnot expected: ", absl::StrJoin(extra, ", "));
}

struct Generator {
  const char* name;
  v1::Graph (*make)(uint64_t seed);
};

const Generator kGenerators[] = {
    {"random", [](uint64_t seed) { return RandomGraph(kNodes, seed); }},
    {"layered", [](uint64_t) { return LayeredGraph(kNodes); }},
};

class IrDiffPropertyTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(IrDiffPropertyTest, ShuffledAndRenamedGraphIsUnchanged) {
  const uint64_t seed = GetParam();
  for (const Generator& gen : kGenerators) {
    SCOPED_TRACE(gen.name);
    const v1::Graph base = gen.make(seed);
    const v1::IrDiffSection s = Diff(base, ShuffleAndRename(base, seed * 7 + 1));
    EXPECT_THAT(Reported(s), IsEmpty());
    EXPECT_EQ(s.match_coverage(), 1.0);
  }
}

TEST_P(IrDiffPropertyTest, ShiftedSourceLinesAreNoChange) {
  const uint64_t seed = GetParam();
  for (const Generator& gen : kGenerators) {
    SCOPED_TRACE(gen.name);
    const v1::Graph base = gen.make(seed);
    v1::Graph head = ShuffleAndRename(base, seed + 11);
    ::cl::testing::ShiftLines(&head, 3);
    const v1::IrDiffSection s = Diff(base, head);
    EXPECT_THAT(Reported(s), IsEmpty());
    EXPECT_EQ(s.match_coverage(), 1.0);
  }
}

TEST_P(IrDiffPropertyTest, KRandomEditsAreExactlyKChanges) {
  const uint64_t seed = GetParam();
  for (const Generator& gen : kGenerators) {
    for (const int k : {1, 4, 16, 48}) {
      SCOPED_TRACE(absl::StrCat(gen.name, ", k = ", k));
      const v1::Graph base = gen.make(seed);
      v1::Graph edited = base;
      const std::vector<GraphEdit> edits = ApplyRandomEdits(&edited, k, seed * 31 + k);
      ASSERT_EQ(edits.size(), static_cast<size_t>(k));
      absl::flat_hash_map<std::string, std::string> names;
      v1::Graph head = ShuffleAndRename(edited, seed * 17 + k, &names);
      if (seed % 2 == 0) ::cl::testing::ShiftLines(&head, 2);  // an edit above, too

      std::vector<std::string> expected;
      for (const GraphEdit& e : edits) {
        // Removed nodes are reported by their base name; the rest by their (renamed) head name.
        expected.push_back(
            absl::StrCat(e.kind, " ", e.kind == "removed" ? e.node : names.at(e.node)));
      }
      const std::vector<std::string> reported = Reported(Diff(base, head));
      EXPECT_THAT(reported, UnorderedElementsAreArray(expected)) << Difference(expected, reported);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, IrDiffPropertyTest, ::testing::Range<uint64_t>(1, 51));

}  // namespace
}  // namespace cl

// Every FX graph payload of the TORCH_TRACE fixtures and the hero traces: each parses without
// a problem, and to as many nodes as a deliberately plain count of its lines finds; the scan that
// stands in for the parse where nodes are not kept (ScanFxSourceFiles) finds their source files.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "re2/re2.h"
#include "tests/capture/torch_trace/fx_graph_testing.h"
#include "tests/testing/fixtures.h"
#include "tests/testing/status_matchers.h"

namespace cl::fx_testing {
namespace {

// FX graph payloads: the events and artifacts that carry `print_readable` text.
constexpr absl::string_view kGraphEvents[] = {
    "dynamo_output_graph",      "aot_forward_graph",       "aot_backward_graph",
    "aot_joint_graph",          "aot_inference_graph",     "inductor_pre_grad_graph",
    "inductor_post_grad_graph", "compiled_autograd_graph", "optimize_ddp_split_graph",
    "optimize_ddp_split_child"};
constexpr absl::string_view kGraphArtifacts[] = {"before_pre_grad_graph", "after_pre_grad_graph",
                                                 "before_post_grad_graph", "after_post_grad_graph",
                                                 "dynamo_output_graph"};

struct Payload {
  size_t line = 0;
  std::string event;
  std::string text;
};

// A deliberately plain reader of the log format (docs/torch-trace-format.md §1.2): a header line,
// then the payload lines, each starting with a tab; empty lines are skipped.
std::vector<Payload> GraphPayloads(absl::string_view log) {
  std::vector<absl::string_view> lines = absl::StrSplit(log, '\n');
  std::vector<Payload> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const absl::string_view header = lines[i];
    if (header.empty() || header[0] == '\t' || !absl::StrContains(header, "\"has_payload\""))
      continue;
    std::string event;
    for (absl::string_view e : kGraphEvents) {
      if (absl::StrContains(header, absl::StrCat("{\"", e, "\": "))) event = std::string(e);
    }
    for (absl::string_view a : kGraphArtifacts) {
      if (absl::StrContains(header, absl::StrCat("{\"artifact\": {\"name\": \"", a, "\"")))
        event = absl::StrCat("artifact:", a);
    }
    if (event.empty()) continue;
    std::vector<absl::string_view> body;
    size_t j = i + 1;
    for (; j < lines.size() && (lines[j].empty() || lines[j][0] == '\t'); ++j) {
      if (!lines[j].empty()) body.push_back(lines[j].substr(1));
    }
    out.push_back({i + 1, event, absl::StrJoin(body, "\n")});
    i = j - 1;
  }
  return out;
}

// The nodes a graph should have, counted without the parser: the lines that define a node in the
// top-level forward (`name = ...` or `name: "ann" = ...`, but not dynamo's `l_x_ = L_x_`, which
// renames a placeholder), its inputs (the signature's parameters, or the names a pytree forward
// flattens them into) and the output.
re2::StringPiece Piece(absl::string_view s) { return re2::StringPiece(s.data(), s.size()); }

size_t CountNodesIndependently(absl::string_view payload) {
  static const RE2 kDef(R"(^(\s*)def \w+\()");
  static const RE2 kNested(R"(^\s*class )");
  static const RE2 kNode(R"(^\s+\w+(: "[^"]*")? = )");
  static const RE2 kRename(R"(^\s+\w+ = \w+$)");
  static const RE2 kFlatten(R"(^\s+((?:\w+, )+)= fx_pytree\.tree_flatten_spec)");
  static const RE2 kReturn(R"(^\s+return\b)");
  // An in-place operator prints as `x += 1;  step_t: "f32[]" = x;  x = None`: one node.
  static const RE2 kAugmented(
      R"(^\s+\w+ (?:\+|-|\*|/|//|%|\*\*|&|\||\^|<<|>>|@)= [^;]*;  \w+(: "[^"]*")? = )");
  // operator.setitem prints as `x[(slice(None, None, None), 0)] = v;  setitem = x;  v = None`.
  static const RE2 kSubscript(R"(^\s+\w+\[.*\] = [^;]*;  \w+ = )");
  static const RE2 kSignatureEnd(R"(\)(\s*->.*)?:$)");
  static const RE2 kQuoted(R"("[^"]*")");
  std::vector<absl::string_view> lines = absl::StrSplit(payload, '\n');
  for (absl::string_view& l : lines)
    l = absl::StripTrailingAsciiWhitespace(l);  // some logs have CRLF
  size_t i = 0;
  while (i < lines.size() && !RE2::PartialMatch(Piece(lines[i]), kDef)) ++i;
  if (i == lines.size()) return 0;
  std::string signature;
  for (; i < lines.size(); ++i) {
    std::string l(lines[i]);
    RE2::GlobalReplace(&l, kQuoted, "\"\"");
    l = l.substr(0, l.find('#'));
    absl::StrAppend(&signature, absl::StripAsciiWhitespace(l));
    if (RE2::PartialMatch(Piece(absl::StripAsciiWhitespace(l)), kSignatureEnd)) break;
  }
  size_t params = 0;
  const size_t open = signature.find('('), close = signature.rfind(')');
  for (absl::string_view p : absl::StrSplit(signature.substr(open + 1, close - open - 1), ',')) {
    p = absl::StripAsciiWhitespace(p);
    if (!p.empty() && p != "self") ++params;
  }
  size_t nodes = 0, output = 0;
  for (++i; i < lines.size() && !RE2::PartialMatch(Piece(lines[i]), kNested); ++i) {
    std::string flat;
    if (RE2::PartialMatch(Piece(lines[i]), kFlatten, &flat))
      params = std::count(flat.begin(), flat.end(), ',');
    if (RE2::PartialMatch(Piece(lines[i]), kAugmented) ||
        RE2::PartialMatch(Piece(lines[i]), kSubscript) ||
        (RE2::PartialMatch(Piece(lines[i]), kNode) && !RE2::FullMatch(Piece(lines[i]), kRename)))
      ++nodes;
    if (RE2::PartialMatch(Piece(lines[i]), kReturn)) output = 1;
  }
  return params + nodes + output;
}

// Payloads that are not real torch output, with why.
struct Exception {
  absl::string_view file_suffix;
  absl::string_view why;
};
constexpr Exception kNotTorchOutput[] = {
    {"tlparse_newer/subgraph_name.log",
     "a hand-written tlparse test: the payload is \"test payload no subgraph\""},
};

TEST(FxGraphCorpusTest, EveryFixtureGraph) {
  size_t total_graphs = 0;
  for (const std::string& root : {testing::FixturePath("torch_trace"),
                                  std::string(CL_SOURCE_DIR) + "/examples/hero/traces"}) {
    ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
    std::vector<std::filesystem::path> paths;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.is_regular_file() && entry.file_size() > 0) paths.push_back(entry.path());
    }
    std::sort(paths.begin(), paths.end());
    size_t files = 0, graphs = 0, nodes = 0, nested = 0;
    for (const std::filesystem::path& path : paths) {
      ASSERT_OK_AND_ASSIGN(const std::string log, testing::ReadFixture(path.string()));
      const std::vector<Payload> payloads = GraphPayloads(log);
      if (!payloads.empty()) ++files;
      const Exception* exception = nullptr;
      for (const Exception& e : kNotTorchOutput) {
        if (absl::EndsWith(path.string(), e.file_suffix)) exception = &e;
      }
      for (const Payload& payload : payloads) {
        SCOPED_TRACE(absl::StrCat(path.string(), ":", payload.line, " ", payload.event));
        const Parsed p = Parse(payload.text);
        ++graphs;
        nodes += p.result.nodes;
        nested += p.result.nested_classes;
        EXPECT_EQ(p.result.nodes, static_cast<size_t>(p.graph.nodes_size()));
        ExpectConsistent(p.graph);
        if (exception != nullptr) {
          std::cout << "[ fx corpus ] expected problems in " << path.filename() << " ("
                    << exception->why << "): " << absl::StrJoin(p.result.problems, "; ") << "\n";
          continue;
        }
        EXPECT_EQ(p.result.skipped_lines, 0u) << absl::StrJoin(p.result.problems, "\n");
        EXPECT_EQ(p.result.nodes, CountNodesIndependently(payload.text)) << Dump(p.graph, p.result);
        // The scan of a graph whose nodes nothing reads finds the files its nodes name.
        absl::flat_hash_set<std::string> scanned, named;
        EXPECT_TRUE(ScanFxSourceFiles(payload.text, &scanned));
        for (const v1::Node& n : p.graph.nodes()) {
          if (!n.source().file().empty()) named.insert(n.source().file());
        }
        EXPECT_EQ(scanned, named);
      }
    }
    std::cout << "[ fx corpus ] " << root << ": " << paths.size() << " files, " << files
              << " with graphs, " << graphs << " graphs, " << nodes << " nodes, " << nested
              << " nested classes skipped\n";
    total_graphs += graphs;
  }
  EXPECT_GT(total_graphs, 500u);
}

}  // namespace
}  // namespace cl::fx_testing

// Reads back the text torch prints for an FX GraphModule (`GraphModule.print_readable`).
//
// TORCH_TRACE carries graphs only in this printed form: the payloads of dynamo_output_graph,
// aot_{forward,backward,joint,inference}_graph, inductor_{pre,post}_grad_graph and the
// before_/after_{pre,post}_grad_graph artifacts. The TORCH_TRACE importer hands each such payload
// (tabs already removed) to ParseFxGraphText, which turns the top-level class's `forward` into
// capture-model nodes. The printed form is Python that FX generated, so the parser reads the few
// statement shapes FX's code generator writes (torch/fx/graph.py, `_CodeGen`) and nothing more:
//
//   def forward(self, L_x_: "f32[s0, 64][64, 1]cpu", s0: "Sym(s0)"):   -> placeholders
//   l_x_ = L_x_                                  -> renames the placeholder (name l_x_, target
//   L_x_) mm: "f32[8, 8][8, 1]cpu" = torch.ops.aten.mm.default(a, b);  a = b = None
//                                                -> call_function aten.mm.default
//   h_1 = h + l_resid_ / y = -x / g = t[0]       -> call_function operator.add / .neg / .getitem
//   pow_1 = h_1.pow(2)                           -> call_method pow (args[0] is the receiver)
//   fc = self.L__self___fc(x)                    -> call_module L__self___fc
//   w = self.fc1.weight                          -> get_attr fc1.weight
//   return (mul_5, view)                         -> output node "output", args [mul_5, view]
//
// plus the pytree forms (`a, b, = fx_pytree.tree_flatten_spec(...)`, `pytree.tree_unflatten(...)`),
// source comments (`# File: x.py:69 in forward, code: ...`, `# No stacktrace found ...`) and
// statements spread over several lines. Nested `class` bodies (the subgraphs of higher-order ops)
// are counted and skipped.
//
// What the printed form cannot give back, and the choices made:
//  - the output node's args are the returned values (`return (a, b)` -> [a, b]), not FX's single
//    tuple argument;
//  - a multi-output annotation `"(f32[..], i64[..])"` keeps the first output's meta;
//  - a SymInt `"Sym(s0 + 1)"` gets dtype "Sym" and no shape; TensorMeta has no field for the
//    expression, so it is dropped;
//  - a node's source is the last `# File:` comment above it (file, function and code capped at
//    1 KiB each); `no_stacktrace` is set only under a `# No stacktrace found` comment. Nodes above
//    the first comment get no source: FX prints that marker only after a node that had a trace;
//  - module_stack stays empty: print_readable writes no module path;
//  - keyword arguments lose their order (Node.kwargs is a map); dict arguments stay literals.
//
// The parser never fails: what it cannot read is counted in the result, and it keeps going. It
// runs in time linear in the text, and nothing it does recurses with the input's nesting depth
// (list arguments deeper than a fixed bound are kept as one literal).
//
// Its parts, each a file beside this one (in namespace cl::fx): fx_text.h, the characters;
// fx_scan.h, the top-level scans of a statement; fx_lines.h, the logical lines; fx_meta.h, the
// type annotations; fx_expression.h, the right-hand sides and argument values; fx_graph.cc, the
// statements of the forward and the nodes they make.
#ifndef CAPTURE_TORCH_TRACE_FX_GRAPH_H_
#define CAPTURE_TORCH_TRACE_FX_GRAPH_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

struct FxParseResult {
  // Nodes appended to the graph, placeholders and the output node included.
  size_t nodes = 0;
  // Statements that were not (fully) understood, plus a missing `def forward` or a forward that
  // never returns (cut-off text). Each one is also described in `problems`, while there is room.
  size_t skipped_lines = 0;
  // "line 12: <what>: <the text, escaped and shortened>"; at most kMaxFxProblems are kept.
  std::vector<std::string> problems;
  // `class ...(torch.nn.Module):` bodies after the top-level forward (subgraphs), not parsed.
  size_t nested_classes = 0;
};

inline constexpr size_t kMaxFxProblems = 20;

// How much of each node to keep: all the printed form gives (kFull), or what the analysis passes
// read of a lowered graph (kAnalysis: a tensor's dtype and shape, not its stride, device or
// SymInt expression; a source's file and line, not its function or code), which is about a
// quarter less memory a node where an analysis keeps tens of thousands of them.
enum class FxDetail { kFull, kAnalysis };

// Parses the printed FX GraphModule in `text` and appends the nodes of its top-level forward to
// `graph`, in order. Node arguments that name a node defined earlier (in the text, or already in
// `graph`) become Arg.node; everything else keeps FX's spelling as Arg.literal or nested Arg.list.
FxParseResult ParseFxGraphText(absl::string_view text, v1::Graph* graph,
                               FxDetail detail = FxDetail::kFull);

// Clears from `graph`'s nodes what FxDetail::kAnalysis leaves out: a kFull parse's graph becomes
// the one a kAnalysis parse of the same text makes. For checking the one against the other.
void ClearBeyondAnalysisDetail(v1::Graph* graph);

// The files the `# File:` source comments of the top-level forward name, as ParseFxGraphText
// would set them on its nodes, without reading a statement: for a graph whose nodes nothing reads
// (GraphNodes::kLoweredOnly), whose source files are still read. A tenth of a parse's time. True
// when the text has the outline of a printed GraphModule (nothing but comments, class lines and
// wrap() calls before the `def`, and a `return` ending the forward); false, adding nothing, when
// it does not: the caller parses such a text, to report what is wrong with it.
bool ScanFxSourceFiles(absl::string_view text, absl::flat_hash_set<std::string>* files);

}  // namespace cl

#endif  // CAPTURE_TORCH_TRACE_FX_GRAPH_H_

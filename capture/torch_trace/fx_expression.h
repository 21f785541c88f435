// The expressions of FX's node statements, for the FX text parser (fx_graph.h): the right-hand
// side of `name = <expression>` read into the node's op, target and arguments, in the shapes FX's
// code generator writes (operators, calls of functions, methods and modules, getitem, get_attr),
// and the values of its arguments.
#ifndef CAPTURE_TORCH_TRACE_FX_EXPRESSION_H_
#define CAPTURE_TORCH_TRACE_FX_EXPRESSION_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "capture/torch_trace/fx_scan.h"
#include "capture/torch_trace/fx_text.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl::fx {

namespace v1 = ::compile_lens::v1;

// The names of the nodes defined so far, viewing the nodes' own names: name -> index in the graph.
using DefinedNames = absl::flat_hash_map<absl::string_view, int>;

// Reads the expressions of the statement that `index` holds; a name in `defined` is a node, any
// other name a literal. Both belong to the graph reader and must outlive this one; the scratch
// lists it keeps are reused from one statement to the next.
class ExpressionReader {
 public:
  ExpressionReader(const StatementIndex* index, const DefinedNames* defined)
      : index_(*index), defined_(*defined) {}

  // The right-hand side of a node statement: sets `node`'s op, target and arguments, or returns
  // false (having perhaps set some) for a shape FX does not print.
  bool ReadExpression(absl::string_view rhs, v1::Node* node);

  // A name defined earlier is a node; `[...]` and `(...,)` are lists (down to kMaxArgNesting);
  // anything else is a literal in FX's spelling. `depth` is the list nesting `v` sits at.
  void ReadValue(absl::string_view v, int depth, v1::Arg* out);

 private:
  void ReadCallArgs(absl::string_view text, v1::Node* node);

  const StatementIndex& index_;
  const DefinedNames& defined_;
  std::vector<absl::string_view> call_items_;
  std::vector<absl::string_view> list_items_[kMaxArgNesting];  // one per depth
};

inline void SetCall(v1::Node* node, absl::string_view op, absl::string_view target) {
  Assign(node->mutable_op(), op);
  Assign(node->mutable_target(), target);
}

// The `operator` function FX prints as the in-place operator `op` (`+=` -> "iadd"); "" for none.
absl::string_view InplaceOperatorName(absl::string_view op);

}  // namespace cl::fx

#endif  // CAPTURE_TORCH_TRACE_FX_EXPRESSION_H_

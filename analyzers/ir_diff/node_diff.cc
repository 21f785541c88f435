#include "analyzers/ir_diff/node_diff.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "analyzers/common/named_list.h"
#include "common/utf8.h"

namespace cl {
namespace {

constexpr char kArrow[] = " \u2192 ";  // →
// Capture strings are untrusted and literals can be whole lists: a detail shows this much of one.
constexpr size_t kMaxShown = 48;

enum class Outcome { kSame, kLiteral, kOperand };

std::string Clip(absl::string_view s) { return ClipUtf8(s, kMaxShown); }

std::string Repr(const v1::Arg* arg) {
  if (arg == nullptr) return "\u2014";  // —: no such argument on this side
  switch (arg->kind_case()) {
    case v1::Arg::kNode:
      return arg->node();
    case v1::Arg::kLiteral:
      return arg->literal();
    case v1::Arg::kList: {
      std::string items;
      for (const v1::Arg& item : arg->list().items()) {
        absl::StrAppend(&items, items.empty() ? "" : ", ", Repr(&item));
        if (items.size() > kMaxShown) break;
      }
      return arg->list().tuple() ? absl::StrCat("(", items, ")") : absl::StrCat("[", items, "]");
    }
    case v1::Arg::KIND_NOT_SET:
      break;
  }
  return "";
}

std::string Dims(const google::protobuf::RepeatedPtrField<std::string>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

bool SameDims(const google::protobuf::RepeatedPtrField<std::string>& a,
              const google::protobuf::RepeatedPtrField<std::string>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

// Compares arguments through the pairing (see the header).
class ArgComparer {
 public:
  ArgComparer(const GraphIndex& base, const GraphIndex& head, const NodeCorrespondence& pairs)
      : base_(base), head_(head), pairs_(pairs) {}

  Outcome Compare(const v1::Arg* b, const v1::Arg* h) const {
    if (b == nullptr && h == nullptr) return Outcome::kSame;
    if (b == nullptr || h == nullptr || b->kind_case() != h->kind_case()) {
      return HasOperand(b) || HasOperand(h) ? Outcome::kOperand : Outcome::kLiteral;
    }
    switch (b->kind_case()) {
      case v1::Arg::kNode:
        return SameOperand(b->node(), h->node()) ? Outcome::kSame : Outcome::kOperand;
      case v1::Arg::kLiteral:
        return b->literal() == h->literal() ? Outcome::kSame : Outcome::kLiteral;
      case v1::Arg::kList: {
        Outcome worst = Outcome::kSame;
        const int nb = b->list().items_size();
        const int nh = h->list().items_size();
        for (int i = 0; i < std::max(nb, nh); ++i) {
          worst = std::max(worst, Compare(i < nb ? &b->list().items(i) : nullptr,
                                          i < nh ? &h->list().items(i) : nullptr));
        }
        return worst;
      }
      case v1::Arg::KIND_NOT_SET:
        break;
    }
    return Outcome::kSame;
  }

  // The argument as order-free tokens: operands as their head-side identity, literals as text.
  // Operands without a partner (added, removed) are left out, as Compare leaves them out, and
  // named in `unpartnered`.
  void Tokens(const v1::Arg& arg, bool base_side, std::vector<std::string>* out,
              std::vector<std::string>* unpartnered) const {
    switch (arg.kind_case()) {
      case v1::Arg::kNode: {
        const int n = base_side ? base_.Find(arg.node()) : head_.Find(arg.node());
        if (n < 0) {
          out->push_back(absl::StrCat("?", arg.node()));
        } else if (base_side && pairs_.BaseMatched(n)) {
          out->push_back(absl::StrCat("#", pairs_.base_to_head[n]));
        } else if (!base_side && pairs_.HeadMatched(n)) {
          out->push_back(absl::StrCat("#", n));
        } else {
          unpartnered->push_back(arg.node());
        }
        break;
      }
      case v1::Arg::kLiteral:
        out->push_back(absl::StrCat("=", arg.literal()));
        break;
      case v1::Arg::kList:
        for (const v1::Arg& item : arg.list().items()) Tokens(item, base_side, out, unpartnered);
        break;
      case v1::Arg::KIND_NOT_SET:
        break;
    }
  }

 private:
  static bool HasOperand(const v1::Arg* arg) {
    if (arg == nullptr) return false;
    if (arg->kind_case() == v1::Arg::kNode) return true;
    if (arg->kind_case() != v1::Arg::kList) return false;
    for (const v1::Arg& item : arg->list().items()) {
      if (HasOperand(&item)) return true;
    }
    return false;
  }

  bool SameOperand(absl::string_view base_name, absl::string_view head_name) const {
    const int b = base_.Find(base_name);
    const int h = head_.Find(head_name);
    if (b < 0 || h < 0) return base_name == head_name;  // names that name no node: compare the text
    if (pairs_.base_to_head[b] == h) return true;
    // An added or removed operand is reported on its own (see the header).
    return !pairs_.BaseMatched(b) || !pairs_.HeadMatched(h);
  }

  const GraphIndex& base_;
  const GraphIndex& head_;
  const NodeCorrespondence& pairs_;
};

void Add(NodeDelta* delta, const char* kind, std::string detail) {
  delta->kinds.emplace_back(kind);
  delta->details.push_back(std::move(detail));
}

void CompareArgs(const v1::Node& b, const v1::Node& h, const ArgComparer& args, NodeDelta* delta) {
  std::vector<std::string> operands, literals;
  for (int i = 0; i < std::max(b.args_size(), h.args_size()); ++i) {
    const v1::Arg* ab = i < b.args_size() ? &b.args(i) : nullptr;
    const v1::Arg* ah = i < h.args_size() ? &h.args(i) : nullptr;
    const Outcome o = args.Compare(ab, ah);
    if (o == Outcome::kSame) continue;
    std::string what = absl::StrCat("arg ", i, ": ", Clip(Repr(ab)), kArrow, Clip(Repr(ah)));
    (o == Outcome::kOperand ? operands : literals).push_back(std::move(what));
  }
  if (!operands.empty()) {
    std::vector<std::string> tb, th, removed, added;
    for (const v1::Arg& a : b.args()) args.Tokens(a, /*base_side=*/true, &tb, &removed);
    for (const v1::Arg& a : h.args()) args.Tokens(a, /*base_side=*/false, &th, &added);
    std::sort(tb.begin(), tb.end());
    std::sort(th.begin(), th.end());
    // One side's operand with no partner on the other is an operand dropped (addmm's bias, when
    // `addmm(bias, x, w)` becomes `mm(x, w)`) or taken on, never a reordering.
    if (!removed.empty() || !added.empty()) {
      if (!removed.empty()) {
        Add(delta, node_change::kOperandRemoved,
            absl::StrCat("operand removed (", NamedList(removed), ")"));
      }
      if (!added.empty()) {
        Add(delta, node_change::kOperandAdded,
            absl::StrCat("operand added (", NamedList(added), ")"));
      }
      if (tb == th) return;
    } else if (tb == th) {
      Add(delta, node_change::kOperandsReordered, "operands reordered");
      return;
    }
    Add(delta, node_change::kOperandChanged,
        absl::StrCat("operand changed (", NamedList(operands), ")"));
  }
  if (!literals.empty()) {
    Add(delta, node_change::kLiteralChanged,
        absl::StrCat("literal changed (", NamedList(literals), ")"));
  }
}

void CompareKwargs(const v1::Node& b, const v1::Node& h, const ArgComparer& args,
                   NodeDelta* delta) {
  if (b.kwargs().empty() && h.kwargs().empty()) return;
  absl::InlinedVector<absl::string_view, 8> keys;
  for (const auto& [key, value] : b.kwargs()) keys.push_back(key);
  for (const auto& [key, value] : h.kwargs()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<std::string> changed;
  for (const absl::string_view key : keys) {
    auto ib = b.kwargs().find(std::string(key));
    auto ih = h.kwargs().find(std::string(key));
    const v1::Arg* ab = ib == b.kwargs().end() ? nullptr : &ib->second;
    const v1::Arg* ah = ih == h.kwargs().end() ? nullptr : &ih->second;
    if (args.Compare(ab, ah) == Outcome::kSame) continue;
    changed.push_back(
        absl::StrCat(Clip(std::string(key)), ": ", Clip(Repr(ab)), kArrow, Clip(Repr(ah))));
  }
  if (!changed.empty()) {
    Add(delta, node_change::kKwargsChanged,
        absl::StrCat("kwargs changed (", NamedList(changed), ")"));
  }
}

void CompareMeta(const v1::TensorMeta& b, const v1::TensorMeta& h, NodeDelta* delta) {
  if (b.dtype() != h.dtype()) {
    Add(delta, node_change::kDtypeChanged,
        absl::StrCat("dtype changed (", Clip(b.dtype()), kArrow, Clip(h.dtype()), ")"));
  }
  if (!SameDims(b.shape(), h.shape())) {
    Add(delta, node_change::kShapeChanged,
        absl::StrCat("shape changed (", Clip(Dims(b.shape())), kArrow, Clip(Dims(h.shape())), ")"));
  } else if (!SameDims(b.stride(), h.stride())) {
    Add(delta, node_change::kStrideChanged,
        absl::StrCat("stride changed (", Clip(Dims(b.stride())), kArrow, Clip(Dims(h.stride())),
                     ")"));
  }
}

// Most pairs are unchanged: the fingerprints and the operand indices say so without reading the
// nodes' arguments again. (The literal fingerprint also fixes where operands sit among literals and
// which keyword arguments there are.)
bool Unchanged(const GraphIndex& base, int b, const GraphIndex& head, int h,
               const NodeCorrespondence& pairs) {
  const NodeFacts& fb = base.facts(b);
  const NodeFacts& fh = head.facts(h);
  if (fb.target != fh.target || fb.literals != fh.literals || fb.meta != fh.meta || fb.unresolved ||
      fh.unresolved) {
    return false;
  }
  const absl::Span<const int32_t> ib = base.inputs(b);
  const absl::Span<const int32_t> ih = head.inputs(h);
  if (ib.size() != ih.size()) return false;
  for (size_t k = 0; k < ib.size(); ++k) {
    if (pairs.base_to_head[ib[k]] != ih[k]) return false;
  }
  return true;
}

}  // namespace

NodeDelta CompareNodes(const GraphIndex& base, int b, const GraphIndex& head, int h,
                       const NodeCorrespondence& pairs) {
  NodeDelta delta;
  if (Unchanged(base, b, head, h, pairs)) return delta;
  const v1::Node& nb = base.node(b);
  const v1::Node& nh = head.node(h);
  if (nb.op() != nh.op() || nb.target() != nh.target()) {
    Add(&delta, node_change::kOpChanged,
        absl::StrCat("op changed (", Clip(nb.target()), kArrow, Clip(nh.target()), ")"));
  }
  const ArgComparer args(base, head, pairs);
  CompareArgs(nb, nh, args, &delta);
  CompareKwargs(nb, nh, args, &delta);
  CompareMeta(nb.meta(), nh.meta(), &delta);
  return delta;
}

}  // namespace cl

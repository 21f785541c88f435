// Aliasing and storage detectors: in-place ops on aliased tensors, writes through overlapping
// views, `.data`, and storage-changing ops on views (docs/torch-semantics.md §5.2, the first four
// rows).
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lint/detectors.h"
#include "lint/torch_names.h"

namespace cl::lint {
namespace {

// How far the alias checks look from a write (reads after it, bindings before it).
constexpr size_t kMaxScan = 64;

bool ViewProducerMatches(const PatternSpec& spec, absl::string_view op) {
  if (op.empty()) return false;
  return spec.params.view_producers.empty() ? IsViewOp(op) : spec.params.view_producers.Matches(op);
}

bool OverlapProducerMatches(const PatternSpec& spec, absl::string_view op) {
  if (op.empty()) return false;
  return spec.params.overlap_producers.empty() ? IsOverlapOp(op)
                                               : spec.params.overlap_producers.Matches(op);
}

// Per storage group of a function: its first view binding, and an overlap producer in it.
struct Group {
  const Binding* view = nullptr;
  std::string overlap;
};

absl::flat_hash_map<uint32_t, Group> Groups(const PatternSpec& spec, const FunctionView& v) {
  absl::flat_hash_map<uint32_t, Group> groups;
  for (const Binding& b : v.bindings) {
    if (b.view_op.empty()) continue;
    Group& g = groups[b.storage];
    if (g.view == nullptr && ViewProducerMatches(spec, b.view_op)) g.view = &b;
    if (g.overlap.empty() && OverlapProducerMatches(spec, b.view_op)) g.overlap = b.view_op;
  }
  return groups;
}

// The assignment (or walrus) whose right-hand side holds `n`, within n's statement; kNoNode when
// `n` is not on one.
NodeId AssignmentOf(const SyntaxTree& t, NodeId n) {
  NodeId child = n;
  for (NodeId p = t.parent(n); p != kNoNode; child = p, p = t.parent(p)) {
    switch (t.kind(p)) {
      case Kind::kAssignment:
        return t[child].field == Field::kRight ? p : kNoNode;
      case Kind::kNamedExpression:
        return t[child].field == Field::kValue ? p : kNoNode;
      case Kind::kBlock:
      case Kind::kFunctionDefinition:
      case Kind::kLambda:
      case Kind::kModule:
        return kNoNode;
      default:
        break;
    }
  }
  return kNoNode;
}

// A finding for an in-place write `m`: its node, name, op and loop.
RawFinding MutationFinding(int file, int function, const Mutation& m, bool assumed) {
  RawFinding f = MakeFinding(file, function, m.node, /*form=*/"", m.in_loop, assumed);
  f.name = std::string(m.name);
  f.op = std::string(m.op);
  return f;
}

}  // namespace

// The reads of one function indexed by the binding they see and by its storage, built once per
// function that writes in place, so that each write's checks are a few binary searches.
class ReadIndex {
 public:
  explicit ReadIndex(const FunctionView& v) : v_(v) {
    for (size_t i = 0; i < v.reads.size(); ++i) {
      const int b = v.IndexAt(v.reads[i].name, v.reads[i].pos);
      if (b < 0) continue;
      by_binding_[b].push_back(i);
      by_storage_[v.bindings[b].storage].push_back(i);
    }
  }
  const std::vector<size_t>& OfBinding(int b) const { return Get(by_binding_, b); }
  const std::vector<size_t>& OfStorage(uint32_t s) const { return Get(by_storage_, s); }
  // The first entry of `list` at or after `pos`.
  size_t From(const std::vector<size_t>& list, uint32_t pos) const {
    return static_cast<size_t>(
        std::lower_bound(list.begin(), list.end(), pos,
                         [this](size_t i, uint32_t p) { return v_.reads[i].pos < p; }) -
        list.begin());
  }

 private:
  template <typename Map, typename Key>
  static const std::vector<size_t>& Get(const Map& map, Key key) {
    static const auto* const kNone = new std::vector<size_t>;
    auto it = map.find(key);
    return it == map.end() ? *kNone : it->second;
  }
  const FunctionView& v_;
  absl::flat_hash_map<int, std::vector<size_t>> by_binding_;
  absl::flat_hash_map<uint32_t, std::vector<size_t>> by_storage_;
};

// An in-place write (`v.op_()`, `v += …`, `f(v, inplace=True)`) where (a) v shares storage with a
// view relationship and another name of that storage is read after the write, or (b) a value
// computed from v before the write is read after it.
void DetectInplaceOnAlias(const DetectInput& in, const PatternSpec& spec,
                          std::vector<RawFinding>* out) {
  ForEachScopedView(
      in, spec.scope, [&](int file, int function, const FunctionView& v, bool assumed) {
        const SyntaxTree& t = in.files[file]->tree();
        std::optional<ReadIndex> index;
        absl::flat_hash_map<uint32_t, Group> groups;
        for (const Mutation& m : v.mutations) {
          if (m.form == Mutation::Form::kSetItem || m.form == Mutation::Form::kOutKeyword) continue;
          if (m.form == Mutation::Form::kMethod) {
            if (spec.params.exclude_methods.Matches(m.op)) continue;
            if (!spec.params.method_names.empty() && !spec.params.method_names.Matches(m.op))
              continue;
          }
          if (m.name == "self" || m.name == "cls") continue;
          const int bi = v.IndexAt(m.name, m.pos);
          if (bi < 0) continue;
          if (!index) {
            index.emplace(v);
            groups = Groups(spec, v);
          }
          const Binding& b = v.bindings[bi];
          RawFinding f = MutationFinding(file, function, m, assumed);
          const uint32_t after = t[m.node].end;

          // (a) Another name of the same storage, read after the write, with a view in the group.
          const auto group = groups.find(b.storage);
          if (group != groups.end() && group->second.view != nullptr) {
            const std::vector<size_t>& reads = index->OfStorage(b.storage);
            const size_t from = index->From(reads, after);
            for (size_t k = from; k < reads.size() && k < from + kMaxScan; ++k) {
              const Read& r = v.reads[reads[k]];
              if (r.name == m.name) continue;
              f.form = "view_alias";
              const bool mutated_is_view = ViewProducerMatches(spec, b.view_op);
              f.producer = mutated_is_view ? b.view_op : group->second.view->view_op;
              // An overlap producer anywhere in the group decides the escalation.
              if (!group->second.overlap.empty()) f.producer = group->second.overlap;
              f.base = mutated_is_view && b.base >= 0 ? std::string(v.bindings[b.base].name)
                                                      : std::string(r.name);
              if (f.base == f.name) f.base = std::string(r.name);
              f.detail = absl::StrCat("`", r.name, "` is read again at line ", t.line(r.node));
              out->push_back(std::move(f));
              break;
            }
            if (!f.form.empty()) continue;
          }

          // (b) `y = f(x); x.op_(); … y …`: a value computed from the pre-write x, used after it.
          // The reads of x's binding just before the write that sit on an assignment's right-hand
          // side.
          if (!b.tensor) continue;
          const std::vector<size_t>& reads = index->OfBinding(bi);
          const size_t before = index->From(reads, m.pos);
          for (size_t k = before, seen = 0; k-- > 0 && seen++ < kMaxScan;) {
            const Read& r = v.reads[reads[k]];
            const NodeId site = AssignmentOf(t, r.node);
            if (site == kNoNode) continue;
            const NodeId target = t.Unparen(t.Child(
                site, t.kind(site) == Kind::kNamedExpression ? Field::kName : Field::kLeft));
            if (target == kNoNode || t.kind(target) != Kind::kIdentifier ||
                t.Text(target) == m.name)
              continue;
            const int wi = v.IndexAt(t.Text(target), t[site].end);
            if (wi < 0 || v.bindings[wi].site != site || v.bindings[wi].storage == b.storage)
              continue;
            const Binding& w = v.bindings[wi];
            const std::vector<size_t>& uses = index->OfBinding(wi);
            const size_t use = index->From(uses, after);
            if (use == uses.size()) continue;
            f.form = "read_before_write";
            f.base = std::string(w.name);
            f.producer = "";
            f.detail = absl::StrCat("`", w.name, "` was computed from `", m.name,
                                    "` before the write (line ", t.line(w.site),
                                    ") and is read at line ", t.line(v.reads[uses[use]].node));
            out->push_back(std::move(f));
            break;
          }
        }
      });
}

// Writes through overlapping views: `v[...] = …` where v comes from expand/unfold/as_strided,
// `x[1:] = x[:-1]`, `v[idx] = v[idx] + c`, and index_* ops on an expanded tensor.
void DetectSubscriptAssignOverlap(const DetectInput& in, const PatternSpec& spec,
                                  std::vector<RawFinding>* out) {
  ForEachScopedView(
      in, spec.scope, [&](int file, int function, const FunctionView& v, bool assumed) {
        const SyntaxTree& t = in.files[file]->tree();
        auto emit = [&](NodeId node, absl::string_view form, absl::string_view name,
                        absl::string_view producer, std::string detail, bool in_loop) {
          RawFinding f = MakeFinding(file, function, node, form, in_loop, assumed);
          f.name = std::string(name);
          f.base = std::string(name);
          f.op = form == "index_op" ? std::string(producer) : "[]=";
          f.producer = std::string(producer);
          f.detail = std::move(detail);
          out->push_back(std::move(f));
        };
        for (NodeId a : v.assignments) {
          const NodeId left = t.Unparen(t.Child(a, Field::kLeft));
          if (left == kNoNode || t.kind(left) != Kind::kSubscript) continue;
          const NodeId base = t.Unparen(t.Child(left, Field::kValue));
          if (base == kNoNode || t.kind(base) != Kind::kIdentifier) continue;
          const absl::string_view name = t.Text(base);
          const Binding* b = v.At(name, t[a].start);
          const bool in_loop = InLoop(t, a);
          if (b != nullptr && OverlapProducerMatches(spec, b->view_op)) {
            emit(a, "overlapping_view", name, b->view_op,
                 absl::StrCat("`", name, "` is a `", b->view_op,
                              "` view whose elements share memory"),
                 in_loop);
            continue;
          }
          auto computed_index = [&]() {
            for (NodeId s = t.first_child(left); s != kNoNode; s = t.next_sibling(s)) {
              if (t[s].field != Field::kSubscript) continue;
              if (t.kind(s) == Kind::kCall) return true;
              if (t.kind(s) == Kind::kIdentifier) {
                // A local tensor (or tensor-like parameter); a module-level name is a constant.
                const Binding* ib = v.At(t.Text(s), t[s].start);
                if (ib != nullptr && ib->tensor) return true;
              }
            }
            return false;
          };
          const NodeId right = t.Child(a, Field::kRight);
          if (t.kind(a) == Kind::kAugmentedAssignment) {
            // `v[idx] += c` with a computed index: duplicates make the read-modify-write ambiguous.
            if (computed_index()) {
              emit(a, "advanced_index_rmw", name, "",
                   "the index may repeat; each repeat reads the old value", in_loop);
            }
            continue;
          }
          if (right == kNoNode) continue;
          const absl::string_view left_text = t.Text(left);
          const bool left_slice =
              SubtreeHas(t, left, [&](NodeId n) { return t.kind(n) == Kind::kSlice; });
          const uint32_t storage = b == nullptr ? 0 : b->storage;
          NodeId same = kNoNode;
          NodeId overlapping = kNoNode;
          SubtreeHas(t, right, [&](NodeId n) {
            if (t.kind(n) != Kind::kSubscript) return false;
            const NodeId value = t.Unparen(t.Child(n, Field::kValue));
            if (value == kNoNode || t.kind(value) != Kind::kIdentifier) return false;
            const Binding* rb = v.At(t.Text(value), t[n].start);
            const bool same_storage =
                storage != 0 ? rb != nullptr && rb->storage == storage : t.Text(value) == name;
            if (!same_storage) return false;
            if (t.Text(n) == left_text) {
              same = n;
            } else if (left_slice &&
                       SubtreeHas(t, n, [&](NodeId s) { return t.kind(s) == Kind::kSlice; })) {
              overlapping = n;
              return true;
            }
            return false;
          });
          if (overlapping != kNoNode) {
            emit(a, "shifted_self_copy", name, "",
                 absl::StrCat("the right-hand side reads `", t.Snippet(overlapping, 40),
                              "` of the same storage"),
                 in_loop);
            continue;
          }
          if (same != kNoNode && computed_index()) {
            emit(a, "advanced_index_rmw", name, "",
                 "the index may repeat; each repeat reads the old value", in_loop);
          }
        }
        for (const CallSite& c : v.calls) {
          if (c.method.empty() || c.object == kNoNode || t.kind(c.object) != Kind::kIdentifier)
            continue;
          if (spec.params.method_names.empty() || !spec.params.method_names.Matches(c.method))
            continue;
          const Binding* b = v.At(t.Text(c.object), t[c.node].start);
          if (b == nullptr || !OverlapProducerMatches(spec, b->view_op)) continue;
          emit(c.node, "index_op", t.Text(c.object), c.method,
               absl::StrCat("`", t.Text(c.object), "` is a `", b->view_op,
                            "` view whose elements share memory"),
               c.in_loop);
        }
      });
}

// `.data`: assigned (error), written in place (error), read (info); `set_` and storage writes.
void DetectDataAttr(const DetectInput& in, const PatternSpec& spec, std::vector<RawFinding>* out) {
  ForEachScopedView(
      in, spec.scope, [&](int file, int function, const FunctionView& v, bool assumed) {
        const SyntaxTree& t = in.files[file]->tree();
        auto emit = [&](NodeId node, absl::string_view form, absl::string_view name,
                        absl::string_view op, bool in_loop) {
          out->push_back(MakeOpFinding(file, function, node, form, name, op, in_loop, assumed));
        };
        auto attr_named = [&](NodeId n, absl::string_view attr) {
          n = t.Unparen(n);
          if (n == kNoNode || t.kind(n) != Kind::kAttribute) return false;
          const NodeId a = t.Child(n, Field::kAttribute);
          return a != kNoNode && t.Text(a) == attr;
        };
        for (NodeId a : v.assignments) {
          const NodeId left = t.Unparen(t.Child(a, Field::kLeft));
          if (left == kNoNode) continue;
          if (attr_named(left, "data")) {
            emit(a, "assign", t.Text(t.Child(left, Field::kObject)), ".data =", false);
          } else if (t.kind(left) == Kind::kSubscript &&
                     attr_named(t.Child(left, Field::kValue), "data")) {
            emit(a, "inplace",
                 t.Text(t.Child(t.Unparen(t.Child(left, Field::kValue)), Field::kObject)),
                 ".data[]=", false);
          }
        }
        for (const CallSite& c : v.calls) {
          if (c.method.empty() || c.object == kNoNode) continue;
          const bool inplace =
              c.method.size() > 1 && c.method.back() == '_' && !absl::StartsWith(c.method, "__");
          if (inplace && attr_named(c.object, "data")) {
            emit(c.node, "inplace", t.Text(t.Child(c.object, Field::kObject)), c.method, c.in_loop);
          } else if (inplace && t.kind(c.object) == Kind::kCall &&
                     in.files[file]->Callee(c.object, &v).ends_with("untyped_storage")) {
            emit(c.node, "storage", t.Text(c.object), c.method, c.in_loop);
          } else if (c.method == "set_") {
            // On a view or a graph input it is resize_or_set_on_view's.
            const Binding* b = t.kind(c.object) == Kind::kIdentifier
                                   ? v.At(t.Text(c.object), t[c.node].start)
                                   : nullptr;
            if (b != nullptr && (!b->view_op.empty() || b->param)) continue;
            emit(c.node, "set_", t.Text(c.object), "set_", c.in_loop);
          }
        }
        // Reads: `.data` nodes not covered above.
        for (const Read& r : v.reads) {
          const NodeId attr = t.parent(r.node);
          if (attr == kNoNode || t.kind(attr) != Kind::kAttribute ||
              t[r.node].field != Field::kObject)
            continue;
          if (!attr_named(attr, "data")) continue;
          const NodeId p = t.parent(attr);
          if (p != kNoNode && t.kind(p) == Kind::kAssignment && t.Child(p, Field::kLeft) == attr)
            continue;
          if (p != kNoNode && t.kind(p) == Kind::kAttribute) {
            const NodeId method = t.Child(p, Field::kAttribute);
            if (method != kNoNode && absl::EndsWith(t.Text(method), "_")) continue;
          }
          if (p != kNoNode && t.kind(p) == Kind::kSubscript) {
            const NodeId pp = t.parent(p);
            if (pp != kNoNode &&
                (t.kind(pp) == Kind::kAssignment || t.kind(pp) == Kind::kAugmentedAssignment) &&
                t.Child(pp, Field::kLeft) == p) {
              continue;
            }
          }
          emit(attr, "read", r.name, ".data", false);
        }
      });
}

// resize_/resize_as_/set_ on a view or on a graph input.
void DetectStorageChangeOnView(const DetectInput& in, const PatternSpec& spec,
                               std::vector<RawFinding>* out) {
  ForEachScopedView(
      in, spec.scope, [&](int file, int function, const FunctionView& v, bool assumed) {
        for (const Mutation& m : v.mutations) {
          if (m.form != Mutation::Form::kMethod || !spec.params.method_names.Matches(m.op))
            continue;
          const int bi = v.IndexAt(m.name, m.pos);
          if (bi < 0) continue;
          const Binding& b = v.bindings[bi];
          RawFinding f = MutationFinding(file, function, m, assumed);
          if (!b.view_op.empty()) {
            f.form = "view";
            f.producer = b.view_op;
            f.base = b.base >= 0 ? std::string(v.bindings[b.base].name) : "";
            f.detail = absl::StrCat("`", m.name, "` is a `", b.view_op, "` view");
          } else if (b.param && b.tensor) {
            f.form = "graph_input";
            f.detail = absl::StrCat("`", m.name, "` is an input of the compiled function");
          } else {
            continue;
          }
          out->push_back(std::move(f));
        }
      });
}

}  // namespace cl::lint

#include "analyzers/ir_diff/index.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/strip.h"
#include "analyzers/common/location.h"
#include "analyzers/ir_diff/fingerprint.h"

namespace cl {
namespace {

// "arg3_1", "primals_12", "tangents_2": the names AOTAutograd gives inputs, by position.
bool IsPositionalInputName(absl::string_view name) {
  absl::string_view rest = name;
  if (!absl::ConsumePrefix(&rest, "arg") && !absl::ConsumePrefix(&rest, "primals_") &&
      !absl::ConsumePrefix(&rest, "tangents_")) {
    return false;
  }
  bool digit = false;
  for (char c : rest) {
    if (c == '_') continue;
    if (c < '0' || c > '9') return false;
    digit = true;
  }
  return digit;
}

// Markers that keep the literal fingerprint positional: "f(x, 2)" and "f(2, x)" differ.
constexpr uint64_t kOperandMark = 0x6f706572616e64ULL;  // an operand's place among the literals
constexpr uint64_t kListOpen = 0x5b;
constexpr uint64_t kTupleOpen = 0x28;
constexpr uint64_t kListClose = 0x5d;
constexpr uint64_t kKwargMark = 0x3d;

NodeKind KindOf(absl::string_view op) {
  if (op == "placeholder") return NodeKind::kPlaceholder;
  if (op == "output") return NodeKind::kOutput;
  return NodeKind::kOther;
}

uint64_t MetaFingerprint(const v1::TensorMeta& meta) {
  uint64_t h = FingerprintString(meta.dtype());
  h = Combine(h, FingerprintString(meta.device()));
  h = Combine(h, static_cast<uint64_t>(meta.shape_size()));
  for (const std::string& d : meta.shape()) h = Combine(h, FingerprintString(d));
  h = Combine(h, static_cast<uint64_t>(meta.stride_size()));
  for (const std::string& s : meta.stride()) h = Combine(h, FingerprintString(s));
  return h;
}

}  // namespace

int PositionalInputCount(const v1::Graph& graph) {
  int n = 0;
  for (const v1::Node& node : graph.nodes()) {
    n += node.op() == "placeholder" && IsPositionalInputName(node.target()) ? 1 : 0;
  }
  return n;
}

GraphIndex::GraphIndex(const v1::Graph& graph, absl::string_view project_root,
                       bool inputs_by_content)
    : graph_(&graph) {
  const int n = graph.nodes_size();
  facts_.resize(n);
  by_name_.reserve(n);
  for (int i = 0; i < n; ++i) by_name_.try_emplace(graph.nodes(i).name(), i);

  // A graph names a handful of files many times over: make each one relative once.
  absl::flat_hash_map<absl::string_view, uint64_t> file_fingerprints;
  auto file_fingerprint = [&](absl::string_view file) {
    auto [it, inserted] = file_fingerprints.try_emplace(file, 0);
    if (inserted) it->second = FingerprintString(RelativeToProjectRoot(project_root, file));
    return it->second;
  };

  input_start_.reserve(n + 1);
  input_start_.push_back(0);
  inputs_.reserve(static_cast<size_t>(n) * 2);
  for (int i = 0; i < n; ++i) {
    const v1::Node& node = graph.nodes(i);
    NodeFacts& f = facts_[i];
    f.kind = KindOf(node.op());
    // An AOT or post-grad graph names its inputs by position (arg0_1, primals_3): see the
    // constructor's comment. Dynamo's own names (L_x_) always say what the input is.
    if (inputs_by_content && node.op() == "placeholder" && IsPositionalInputName(node.target())) {
      f.target = Combine(FingerprintString(node.op()), MetaFingerprint(node.meta()));
    } else {
      f.target = Combine(FingerprintString(node.op()), FingerprintString(node.target()));
    }
    const v1::SourceLoc& source = node.source();
    if (!source.no_stacktrace() && (!source.file().empty() || !source.fn().empty())) {
      f.site = Combine(file_fingerprint(source.file()), FingerprintString(source.fn()));
      f.line = source.line();
    }
    f.module = static_cast<uint64_t>(node.module_stack_size());
    for (const std::string& m : node.module_stack()) {
      f.module = Combine(f.module, FingerprintString(m));
    }
    f.meta = MetaFingerprint(node.meta());

    // Operands become edges; literals (and where operands sat among them) the literal fingerprint.
    uint64_t literals = 0;
    auto walk = [&](const v1::Arg& arg, auto& self) -> void {
      switch (arg.kind_case()) {
        case v1::Arg::kNode: {
          literals = Combine(literals, kOperandMark);
          const int target = Find(arg.node());
          if (target >= 0) {
            inputs_.push_back(target);
          } else {
            f.unresolved = true;
            ++unresolved_operands_;
          }
          break;
        }
        case v1::Arg::kLiteral:
          literals = Combine(literals, FingerprintString(arg.literal()));
          break;
        case v1::Arg::kList:
          literals = Combine(literals, arg.list().tuple() ? kTupleOpen : kListOpen);
          for (const v1::Arg& item : arg.list().items()) self(item, self);
          literals = Combine(literals, kListClose);
          break;
        case v1::Arg::KIND_NOT_SET:
          break;
      }
    };
    for (const v1::Arg& arg : node.args()) walk(arg, walk);
    if (!node.kwargs().empty()) {
      // Protobuf maps iterate in no fixed order; keyword arguments are compared by key.
      absl::InlinedVector<std::pair<absl::string_view, const v1::Arg*>, 4> kwargs;
      for (const auto& [key, value] : node.kwargs()) kwargs.emplace_back(key, &value);
      std::sort(kwargs.begin(), kwargs.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [key, value] : kwargs) {
        literals = Combine(Combine(literals, kKwargMark), FingerprintString(key));
        walk(*value, walk);
      }
    }
    f.literals = literals;
    input_start_.push_back(static_cast<int32_t>(inputs_.size()));
  }

  // Users, by a counting sort over the distinct operands of each node, so each list stays in
  // graph order.
  std::vector<int32_t> count(n + 1, 0);
  absl::InlinedVector<int32_t, 8> distinct;
  auto distinct_inputs = [&](int i) {
    const absl::Span<const int32_t> in = inputs(i);
    distinct.assign(in.begin(), in.end());
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  };
  for (int i = 0; i < n; ++i) {
    distinct_inputs(i);
    for (const int32_t in : distinct) ++count[in + 1];
  }
  user_start_.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) user_start_[i + 1] = user_start_[i] + count[i + 1];
  users_.resize(user_start_[n]);
  std::vector<int32_t> fill(user_start_.begin(), user_start_.end() - 1);
  for (int i = 0; i < n; ++i) {
    distinct_inputs(i);
    for (const int32_t in : distinct) users_[fill[in]++] = i;
  }
}

int GraphIndex::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

}  // namespace cl

#include "analyzers/common/post_grad_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "analyzers/common/location.h"
#include "capture/torch_trace/lowered_graphs.h"

namespace cl {
namespace {

void CollectNodeNames(const v1::Arg& arg, std::vector<absl::string_view>* out) {
  if (arg.kind_case() == v1::Arg::kNode) out->push_back(arg.node());
  if (arg.kind_case() == v1::Arg::kList) {
    for (const v1::Arg& item : arg.list().items()) CollectNodeNames(item, out);
  }
}

const std::vector<const v1::Node*>& NoUsers() {
  static const auto* const kNone = new std::vector<const v1::Node*>();
  return *kNone;
}

}  // namespace

int DtypeBytes(absl::string_view dtype) {
  if (dtype == "f64" || dtype == "i64" || dtype == "c64") return 8;
  if (dtype == "f32" || dtype == "i32") return 4;
  if (dtype == "bf16" || dtype == "f16" || dtype == "i16") return 2;
  if (absl::StartsWith(dtype, "f8") || dtype == "i8" || dtype == "u8" || dtype == "b8") return 1;
  if (dtype == "c128") return 16;
  return 0;
}

PostGradGraph::PostGradGraph(const v1::Graph& graph, SizeHints hints)
    : graph_(graph), hints_(std::move(hints)) {
  for (const v1::Node& node : graph.nodes()) by_name_[node.name()] = &node;
  for (const v1::Node& node : graph.nodes()) {
    std::vector<absl::string_view> names;
    for (const v1::Arg& arg : node.args()) CollectNodeNames(arg, &names);
    for (const auto& [key, arg] : node.kwargs()) CollectNodeNames(arg, &names);
    std::set<const v1::Node*> seen;  // a node used twice (x * x) is one user
    for (absl::string_view name : names) {
      const v1::Node* input = Find(name);
      if (input != nullptr && seen.insert(input).second) users_[input].push_back(&node);
    }
  }
}

const v1::Node* PostGradGraph::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const v1::Node* PostGradGraph::Input(const v1::Node& node, int i) const {
  if (i < 0 || i >= node.args_size() || node.args(i).kind_case() != v1::Arg::kNode) return nullptr;
  return Find(node.args(i).node());
}

const std::vector<const v1::Node*>& PostGradGraph::Users(const v1::Node& node) const {
  auto it = users_.find(&node);
  return it == users_.end() ? NoUsers() : it->second;
}

std::vector<const v1::Node*> PostGradGraph::UsersThroughViews(const v1::Node& node) const {
  return UsersThroughViews(node, [](const v1::Node&) { return true; });
}

std::vector<const v1::Node*> PostGradGraph::UsersThroughViews(
    const v1::Node& node, absl::FunctionRef<bool(const v1::Node& view)> look_through) const {
  std::vector<const v1::Node*> out;
  std::vector<const v1::Node*> stack = {&node};
  absl::flat_hash_set<const v1::Node*> seen = {&node};
  while (!stack.empty()) {
    const v1::Node* current = stack.back();
    stack.pop_back();
    for (const v1::Node* user : Users(*current)) {
      if (!seen.insert(user).second) continue;
      if (IsViewLike(*user) && look_through(*user)) {
        stack.push_back(user);
      } else {
        out.push_back(user);
      }
    }
  }
  return out;
}

const v1::Node* PostGradGraph::SkipViewsUp(const v1::Node* node) const {
  while (node != nullptr && IsViewLike(*node)) {
    const v1::Node* input = Input(*node, 0);
    if (input == nullptr) break;
    node = input;
  }
  return node;
}

std::optional<uint64_t> PostGradGraph::Dim(const v1::Node& node, int i) const {
  const int rank = node.meta().shape_size();
  if (i < 0) i += rank;
  if (i < 0 || i >= rank) return std::nullopt;
  const std::optional<int64_t> value = hints_.Evaluate(node.meta().shape(i));
  if (!value || *value < 0) return std::nullopt;
  return static_cast<uint64_t>(*value);
}

std::optional<uint64_t> PostGradGraph::Numel(const v1::Node& node) const {
  uint64_t numel = 1;
  for (int i = 0; i < node.meta().shape_size(); ++i) {
    const std::optional<uint64_t> d = Dim(node, i);
    if (!d || __builtin_mul_overflow(numel, *d, &numel)) return std::nullopt;
  }
  return numel;
}

std::string PostGradGraph::SizeHintsOf(absl::Span<const v1::Node* const> nodes) const {
  std::map<std::string, int64_t> used;
  for (const v1::Node* node : nodes) {
    if (node == nullptr) continue;
    for (const std::string& size : node->meta().shape()) hints_.Evaluate(size, &used);
  }
  return FormatSizeHints(used);
}

std::string PostGradGraph::SizeHintsWithOperands(absl::Span<const v1::Node* const> nodes) const {
  std::vector<const v1::Node*> read;
  for (const v1::Node* node : nodes) {
    read.push_back(node);
    for (int i = 0; node != nullptr && i < node->args_size(); ++i) read.push_back(Input(*node, i));
  }
  return SizeHintsOf(read);
}

bool IsCall(const v1::Node& node, std::initializer_list<absl::string_view> targets) {
  if (node.op() != "call_function") return false;
  for (absl::string_view target : targets) {
    if (node.target() == target) return true;
    if (absl::StartsWith(node.target(), target) && node.target().size() > target.size() &&
        node.target()[target.size()] == '.' &&
        node.target().find('.', target.size() + 1) == std::string::npos) {
      return true;
    }
  }
  return false;
}

bool IsGemm(const v1::Node& node) {
  return IsCall(node, {"aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm"});
}

bool IsViewLike(const v1::Node& node) {
  return IsCall(node, {"aten.view", "aten.reshape", "aten._unsafe_view", "aten.permute",
                       "aten.transpose", "aten.t", "aten.expand", "aten.clone", "aten.squeeze",
                       "aten.unsqueeze", "aten.alias", "aten.contiguous", "aten.view_as_complex",
                       "aten.view_as_real", "prims.convert_element_type"});
}

absl::string_view GraphEvent(const v1::Graph& graph) {
  absl::string_view id = graph.id();
  if (!absl::ConsumePrefix(&id, graph.compile_id()) || !absl::ConsumePrefix(&id, "/")) return "";
  return id.substr(0, id.find('#'));
}

bool IsBeforeCopy(const v1::Graph& graph) { return IsBeforeEvent(GraphEvent(graph)); }

std::vector<const v1::Graph*> LoweredGraphsPerFrame(const v1::SessionCapture& capture) {
  absl::flat_hash_map<absl::string_view, std::pair<uint32_t, int>> compiles;  // frame, index
  for (int i = 0; i < capture.compiles_size(); ++i) {
    compiles.try_emplace(capture.compiles(i).id(), capture.compiles(i).frame_id(), i);
  }
  LoweredGraphChoice choice;
  std::vector<int> unread;
  for (int i = 0; i < capture.graphs_size(); ++i) {
    const v1::Graph& graph = capture.graphs(i);
    if (graph.stage() != v1::Graph::POST_GRAD) continue;
    auto compile = compiles.find(graph.compile_id());
    if (compile == compiles.end()) continue;
    choice.Add({compile->second.first, compile->second.second, i, GraphEvent(graph)}, &unread);
  }
  std::vector<const v1::Graph*> out;
  for (int i : choice.Chosen()) out.push_back(&capture.graphs(i));
  return out;
}

namespace {

// Whether the compiles ran a backend other than Inductor (`aot_eager`, `eager`, a custom one): some
// compiled a graph in backend time, and no compile's metrics give Inductor any time (torch
// writes inductor_compile_time_s as null when Inductor did not run). False for a log whose metrics
// lack the fields.
bool RanAnotherBackend(const v1::SessionCapture& capture) {
  bool backend_ran = false;
  for (const v1::Compile& c : capture.compiles()) {
    const auto& fields = c.metrics().fields();
    auto inductor = fields.find("inductor_compile_time_s");
    auto backend = fields.find("backend_compile_time_s");
    if (inductor == fields.end() || backend == fields.end()) continue;
    if (!inductor->second.has_null_value()) return false;
    backend_ran =
        backend_ran || (c.status() == v1::Compile::OK && backend->second.has_number_value() &&
                        backend->second.number_value() > 0);
  }
  return backend_ran;
}

}  // namespace

std::string NoLoweredGraphReason(const v1::SessionCapture& capture) {
  const bool before_copies = std::any_of(
      capture.graphs().begin(), capture.graphs().end(),
      [](const v1::Graph& g) { return g.stage() == v1::Graph::POST_GRAD && IsBeforeCopy(g); });
  if (before_copies) {
    return "no post-grad graph that Inductor lowered: the log holds only the copies torch logged "
           "before its post-grad passes ran (before_post_grad_graph)";
  }
  // A graph the FX graph cache served was not compiled, so Inductor logged no post-grad graph of
  // it: a warm cache is the usual reason a log of a real run has none.
  int hits = 0;
  for (const v1::Compile& c : capture.compiles()) {
    for (const v1::CacheEvent& e : c.cache_events())
      hits += e.cache() == "fx_graph" && e.status() == "hit";
  }
  if (hits == 0 && !capture.compiles().empty() &&
      std::all_of(capture.compiles().begin(), capture.compiles().end(), IsExportCompile)) {
    return "no post-grad graph in the capture: torch.export traced the session's graphs, and "
           "nothing lowered them (the fusions and kernels these sections read are Inductor's: "
           "compile the exported program, with AOTInductor or torch.compile, and log that run)";
  }
  if (hits == 0 && RanAnotherBackend(capture)) {
    return "no post-grad graph in the capture: a backend other than Inductor compiled the graphs "
           "(`aot_eager`, `eager` or a custom one; no compile spent time in Inductor), and the "
           "fusions and kernels these sections read are Inductor's";
  }
  if (hits == 0) return "no post-grad graph in the capture (Inductor's inductor_post_grad_graph)";
  return absl::StrCat("no post-grad graph in the capture: the FX graph cache served ", hits,
                      hits == 1 ? " graph" : " graphs",
                      ", and Inductor logs a post-grad graph only for one it compiles (run with "
                      "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 to log them)");
}

}  // namespace cl

#include "tests/analyzers/ir_diff/synthetic_graphs.h"

#include <algorithm>
#include <functional>
#include <random>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace cl::testing {
namespace {

namespace v1 = ::compile_lens::v1;

constexpr char kFile[] = "/proj/model.py";

// Raw engine output modulo n: the same sequence on every standard library, unlike the
// distributions.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  uint64_t Below(uint64_t n) { return engine_() % n; }
  bool Chance(int percent) { return Below(100) < static_cast<uint64_t>(percent); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }

 private:
  std::mt19937_64 engine_;
};

struct OpSpec {
  const char* target;
  int operands;
  const char* literal;  // a trailing literal argument, or null
};

const std::vector<OpSpec>& Ops() {
  static const auto* const kOps = new std::vector<OpSpec>{
      {"aten.add.Tensor", 2, nullptr},    {"aten.mul.Tensor", 2, nullptr},
      {"aten.sub.Tensor", 2, nullptr},    {"aten.mm.default", 2, nullptr},
      {"aten.div.Tensor", 2, nullptr},    {"aten.relu.default", 1, nullptr},
      {"aten.tanh.default", 1, nullptr},  {"aten.exp.default", 1, nullptr},
      {"aten.mul.Tensor", 1, "0.5"},      {"aten.add.Tensor", 1, "1"},
      {"aten.pow.Tensor_Scalar", 1, "2"}, {"aten.addmm.default", 3, nullptr},
  };
  return *kOps;
}

const std::vector<std::vector<std::string>>& Shapes() {
  static const auto* const kShapes = new std::vector<std::vector<std::string>>{
      {"8", "64"}, {"8", "128"}, {"64", "64"}, {"8"}, {"s0", "64"}};
  return *kShapes;
}

v1::Node* AddNode(v1::Graph* g, std::string name, const char* target,
                  const std::vector<std::string>& shape) {
  v1::Node* n = g->add_nodes();
  n->set_name(std::move(name));
  n->set_op("call_function");
  n->set_target(target);
  n->mutable_meta()->set_dtype("f32");
  for (const std::string& d : shape) n->mutable_meta()->add_shape(d);
  return n;
}

void AddPlaceholder(v1::Graph* g, int i, const std::vector<std::string>& shape) {
  v1::Node* n = g->add_nodes();
  n->set_name(absl::StrCat("arg", i, "_1"));
  n->set_op("placeholder");
  n->set_target(n->name());
  n->mutable_meta()->set_dtype("f32");
  for (const std::string& d : shape) n->mutable_meta()->add_shape(d);
}

void SetSource(v1::Node* n, const char* fn, uint32_t line) {
  n->mutable_source()->set_file(kFile);
  n->mutable_source()->set_fn(fn);
  n->mutable_source()->set_line(line);
}

// The output returns every value nothing else reads, as in a real FX graph (where dead code is
// gone): every node then has a user.
void AddOutput(v1::Graph* g) {
  absl::flat_hash_set<std::string> read;
  for (const v1::Node& n : g->nodes()) {
    for (const v1::Arg& a : n.args()) {
      if (a.kind_case() == v1::Arg::kNode) read.insert(a.node());
    }
  }
  v1::Node* out = g->add_nodes();
  out->set_name("output");
  out->set_op("output");
  out->set_target("output");
  v1::ArgList* results = out->add_args()->mutable_list();
  results->set_tuple(true);
  for (int i = 0; i < g->nodes_size() - 1; ++i) {
    const v1::Node& n = g->nodes(i);
    if (n.op() != "placeholder" && !read.contains(n.name())) {
      results->add_items()->set_node(n.name());
    }
  }
}

// Calls `fn` on every operand name of `node` (args, nested lists, kwargs), which may rewrite it.
void ForEachOperand(v1::Node* node, const std::function<void(std::string*)>& fn) {
  std::function<void(v1::Arg*)> walk = [&](v1::Arg* arg) {
    if (arg->kind_case() == v1::Arg::kNode) fn(arg->mutable_node());
    if (arg->kind_case() == v1::Arg::kList) {
      for (v1::Arg& item : *arg->mutable_list()->mutable_items()) walk(&item);
    }
  };
  for (v1::Arg& arg : *node->mutable_args()) walk(&arg);
  for (auto& [key, value] : *node->mutable_kwargs()) walk(&value);
}

std::vector<std::vector<int>> Operands(v1::Graph& g,
                                       const absl::flat_hash_map<std::string, int>& index) {
  std::vector<std::vector<int>> operands(g.nodes_size());
  for (int i = 0; i < g.nodes_size(); ++i) {
    ForEachOperand(g.mutable_nodes(i), [&](std::string* name) {
      auto it = index.find(*name);
      if (it != index.end()) operands[i].push_back(it->second);
    });
  }
  return operands;
}

}  // namespace

v1::Graph RandomGraph(int nodes, uint64_t seed) {
  Rng rng(seed);
  v1::Graph g;
  const int placeholders = std::max(2, nodes / 10);
  for (int i = 0; i < placeholders; ++i) AddPlaceholder(&g, i, rng.Pick(Shapes()));
  const uint64_t lines = std::max(1, nodes / 3);
  static const std::vector<const char*> kFns = {"forward", "block", "head"};
  for (int i = placeholders; i < nodes - 1; ++i) {
    const OpSpec& op = rng.Pick(Ops());
    v1::Node* n = AddNode(&g, absl::StrCat("t", i), op.target, rng.Pick(Shapes()));
    for (int k = 0; k < op.operands; ++k) {
      // Mostly a recent node, as in real graphs; sometimes anything earlier (a residual, a weight).
      const int from = rng.Chance(70) ? i - 1 - static_cast<int>(rng.Below(std::min(i, 16)))
                                      : static_cast<int>(rng.Below(i));
      n->add_args()->set_node(g.nodes(from).name());
    }
    if (op.literal != nullptr) n->add_args()->set_literal(op.literal);
    // Two draws, sequenced: as arguments of one call their order was up to the compiler (GCC drew
    // the line first, clang the function), so the two builds tested different graphs.
    const auto line = 10 + static_cast<uint32_t>(rng.Below(lines));
    const char* fn = kFns[rng.Below(kFns.size())];
    SetSource(n, fn, line);
  }
  AddOutput(&g);
  return g;
}

v1::Graph LayeredGraph(int nodes) {
  constexpr int kPerBlock = 17;  // 4 weights + 13 ops
  const int blocks = std::max(1, (nodes - 2) / kPerBlock);
  v1::Graph g;
  AddPlaceholder(&g, 0, {"8", "64"});
  for (int b = 0; b < blocks; ++b) {
    AddPlaceholder(&g, 1 + 4 * b, {"256", "64"});  // up
    AddPlaceholder(&g, 2 + 4 * b, {"256"});        // up bias
    AddPlaceholder(&g, 3 + 4 * b, {"64", "256"});  // down
    AddPlaceholder(&g, 4 + 4 * b, {"64"});         // norm weight
  }
  std::string x = "arg0_1";
  int next = 0;
  auto op = [&](const char* target, uint32_t line, std::vector<std::string> operands,
                const char* literal, std::vector<std::string> shape) {
    v1::Node* n = AddNode(&g, absl::StrCat("n", next++), target, shape);
    for (const std::string& o : operands) n->add_args()->set_node(o);
    if (literal != nullptr) n->add_args()->set_literal(literal);
    SetSource(n, "forward", line);
    return n->name();
  };
  for (int b = 0; b < blocks; ++b) {
    const std::string w = absl::StrCat("arg", 1 + 4 * b, "_1"),
                      bias = absl::StrCat("arg", 2 + 4 * b, "_1");
    const std::string down = absl::StrCat("arg", 3 + 4 * b, "_1"),
                      gain = absl::StrCat("arg", 4 + 4 * b, "_1");
    const std::string up_t = op("aten.permute.default", 20, {w}, "[1, 0]", {"64", "256"});
    const std::string h = op("aten.mm.default", 20, {x, up_t}, nullptr, {"8", "256"});
    const std::string hb = op("aten.add.Tensor", 21, {h, bias}, nullptr, {"8", "256"});
    const std::string a = op("aten.relu.default", 22, {hb}, nullptr, {"8", "256"});
    const std::string down_t = op("aten.permute.default", 23, {down}, "[1, 0]", {"256", "64"});
    const std::string d = op("aten.mm.default", 23, {a, down_t}, nullptr, {"8", "64"});
    const std::string r = op("aten.add.Tensor", 24, {d, x}, nullptr, {"8", "64"});
    const std::string p = op("aten.pow.Tensor_Scalar", 25, {r}, "2", {"8", "64"});
    const std::string m = op("aten.mean.dim", 25, {p}, "[-1]", {"8", "1"});
    const std::string e = op("aten.add.Tensor", 25, {m}, "1e-06", {"8", "1"});
    const std::string s = op("aten.rsqrt.default", 25, {e}, nullptr, {"8", "1"});
    const std::string n = op("aten.mul.Tensor", 26, {r, s}, nullptr, {"8", "64"});
    x = op("aten.mul.Tensor", 26, {n, gain}, nullptr, {"8", "64"});
  }
  AddOutput(&g);
  return g;
}

v1::Graph ShuffleAndRename(const v1::Graph& graph, uint64_t seed,
                           absl::flat_hash_map<std::string, std::string>* new_names) {
  Rng rng(seed);
  v1::Graph g = graph;
  const int n = g.nodes_size();
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < n; ++i) index.emplace(g.nodes(i).name(), i);
  const std::vector<std::vector<int>> operands = Operands(g, index);

  // Placeholders keep their places (they are the compiled function's parameters), the output
  // stays last; everything else goes in a random topological order (Kahn's, random pick).
  std::vector<int> order, ready, pending(n, 0);
  std::vector<std::vector<int>> users(n);
  for (int i = 0; i < n; ++i) {
    absl::flat_hash_set<int> distinct(operands[i].begin(), operands[i].end());
    pending[i] = static_cast<int>(distinct.size());
    for (const int o : distinct) users[o].push_back(i);
  }
  auto is_fixed = [&](int i) {
    return g.nodes(i).op() == "placeholder" || g.nodes(i).op() == "output";
  };
  auto release = [&](int i) {
    for (const int u : users[i]) {
      if (--pending[u] == 0 && !is_fixed(u)) ready.push_back(u);
    }
  };
  for (int i = 0; i < n; ++i) {
    if (g.nodes(i).op() == "placeholder") order.push_back(i);
  }
  for (int i = 0; i < n; ++i) {
    if (!is_fixed(i) && pending[i] == 0) ready.push_back(i);
  }
  for (const int p : std::vector<int>(order)) release(p);
  while (!ready.empty()) {
    const size_t k = rng.Below(ready.size());
    std::swap(ready[k], ready.back());
    const int i = ready.back();
    ready.pop_back();
    order.push_back(i);
    release(i);
  }
  for (int i = 0; i < n; ++i) {
    if (g.nodes(i).op() == "output") order.push_back(i);
  }

  absl::flat_hash_map<std::string, std::string> names;
  for (int pos = 0; pos < n; ++pos) {
    const v1::Node& node = g.nodes(order[pos]);
    names[node.name()] =
        node.op() == "output" ? "output" : absl::StrCat("v", pos, "_", rng.Below(1000));
  }
  v1::Graph out;
  out.set_id(graph.id());
  out.set_compile_id(graph.compile_id());
  out.set_stage(graph.stage());
  for (const int i : order) {
    v1::Node* node = out.add_nodes();
    *node = g.nodes(i);
    node->set_name(names[node->name()]);
    ForEachOperand(node, [&](std::string* name) {
      auto it = names.find(*name);
      if (it != names.end()) *name = it->second;
    });
  }
  if (new_names != nullptr) *new_names = std::move(names);
  return out;
}

void ShiftLines(v1::Graph* graph, uint32_t lines) {
  for (v1::Node& node : *graph->mutable_nodes()) {
    if (node.source().line() != 0) node.mutable_source()->set_line(node.source().line() + lines);
  }
}

std::vector<GraphEdit> ApplyRandomEdits(v1::Graph* graph, int count, uint64_t seed) {
  Rng rng(seed);
  v1::Graph& g = *graph;
  const int n = g.nodes_size();
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < n; ++i) index.emplace(g.nodes(i).name(), i);
  const std::vector<std::vector<int>> operands = Operands(g, index);
  std::vector<std::vector<int>> users(n);
  for (int i = 0; i < n; ++i) {
    for (const int o : operands[i]) users[o].push_back(i);
  }
  auto neighbours = [&](int i) {
    std::vector<int> out = operands[i];
    out.insert(out.end(), users[i].begin(), users[i].end());
    return out;
  };

  // Edits stay three steps apart, so that each one is reported on its own.
  std::vector<bool> touched(n, false);
  auto free_around = [&](int i) {
    if (touched[i]) return false;
    for (const int j : neighbours(i)) {
      if (touched[j]) return false;
    }
    return true;
  };
  auto touch_around = [&](int i) {
    touched[i] = true;
    for (const int j : neighbours(i)) {
      touched[j] = true;
      for (const int k : neighbours(j)) touched[k] = true;
    }
  };

  std::vector<int> candidates;
  for (int i = 0; i < n; ++i) {
    if (g.nodes(i).op() == "call_function") candidates.push_back(i);
  }
  for (size_t i = candidates.size(); i > 1; --i) {
    std::swap(candidates[i - 1], candidates[rng.Below(i)]);
  }

  static const std::vector<std::string> kKinds = {
      "op_changed", "literal_changed", "shape_changed", "operands_reordered", "added", "removed"};
  std::vector<GraphEdit> edits;
  absl::flat_hash_map<std::string, std::string> removed;     // removed node → its operand
  absl::flat_hash_map<int, std::vector<v1::Node>> inserted;  // before node i
  for (const int e : candidates) {
    if (static_cast<int>(edits.size()) == count) break;
    if (!free_around(e)) continue;
    v1::Node& node = *g.mutable_nodes(e);
    const size_t first_kind = rng.Below(kKinds.size());
    for (size_t t = 0; t < kKinds.size(); ++t) {
      const std::string& kind = kKinds[(first_kind + t) % kKinds.size()];
      std::vector<int> node_args, literal_args;
      for (int a = 0; a < node.args_size(); ++a) {
        if (node.args(a).kind_case() == v1::Arg::kNode) node_args.push_back(a);
        if (node.args(a).kind_case() == v1::Arg::kLiteral) literal_args.push_back(a);
      }
      bool done = false;
      if (kind == "op_changed") {
        node.set_target(absl::StrCat("aten.edited_", edits.size(), ".default"));
        done = true;
      } else if (kind == "literal_changed" && !literal_args.empty()) {
        v1::Arg* lit = node.mutable_args(literal_args.front());
        lit->set_literal(absl::StrCat(lit->literal(), "25"));
        done = true;
      } else if (kind == "shape_changed") {
        // (A std::string, not "7": GCC 12 at -O3 warns falsely about the const char* overload.)
        node.mutable_meta()->add_shape(std::string(1, '7'));
        done = true;
      } else if (kind == "operands_reordered" && node_args.size() >= 2 &&
                 node.args(node_args[0]).node() != node.args(node_args[1]).node()) {
        std::string first = node.args(node_args[0]).node();
        node.mutable_args(node_args[0])->set_node(node.args(node_args[1]).node());
        node.mutable_args(node_args[1])->set_node(std::move(first));
        done = true;
      } else if (kind == "added" && !node_args.empty()) {
        // h = x * 2 between the operand x and this node, from a line of its own.
        v1::Arg* slot = node.mutable_args(node_args.front());
        v1::Node added;
        added.set_name(absl::StrCat("added_", edits.size()));
        added.set_op("call_function");
        added.set_target("aten.mul.Tensor");
        added.add_args()->set_node(slot->node());
        added.add_args()->set_literal("2");
        *added.mutable_meta() = g.nodes(index.at(slot->node())).meta();
        added.mutable_source()->set_file(kFile);
        added.mutable_source()->set_fn("forward");
        added.mutable_source()->set_line(1000000 + static_cast<uint32_t>(edits.size()));
        slot->set_node(added.name());
        edits.push_back({kind, added.name()});
        inserted[e].push_back(std::move(added));
        touch_around(e);
        break;
      } else if (kind == "removed" && node_args.size() == 1 && !users[e].empty()) {
        removed[node.name()] = node.args(node_args.front()).node();
        done = true;
      }
      if (done) {
        edits.push_back({kind, node.name()});
        touch_around(e);
        break;
      }
    }
  }

  if (!removed.empty() || !inserted.empty()) {
    v1::Graph out;
    out.set_id(g.id());
    out.set_compile_id(g.compile_id());
    out.set_stage(g.stage());
    for (int i = 0; i < n; ++i) {
      if (auto it = inserted.find(i); it != inserted.end()) {
        for (v1::Node& added : it->second) *out.add_nodes() = std::move(added);
      }
      if (removed.contains(g.nodes(i).name())) continue;
      v1::Node* node = out.add_nodes();
      *node = g.nodes(i);
      ForEachOperand(node, [&](std::string* name) {
        auto it = removed.find(*name);
        if (it != removed.end()) *name = it->second;
      });
    }
    g = std::move(out);
  }
  return edits;
}

v1::SessionCapture CaptureOf(v1::Graph graph) {
  v1::SessionCapture c;
  c.set_schema("0.5.0");
  c.mutable_session()->set_id("synthetic");
  c.mutable_session()->set_project_root("/proj");
  v1::Frame* frame = c.add_frames();
  frame->set_name("forward");
  frame->set_file(kFile);
  frame->set_line(1);
  v1::Compile* compile = c.add_compiles();
  compile->set_id("0/0");
  compile->set_status(v1::Compile::OK);
  graph.set_id("0/0/inductor_post_grad_graph");
  graph.set_compile_id("0/0");
  graph.set_stage(v1::Graph::POST_GRAD);
  compile->add_graph_ids(graph.id());
  *c.add_graphs() = std::move(graph);
  return c;
}

}  // namespace cl::testing

#include "capture/validate.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/utf8.h"

namespace cl {
namespace {

// Quotes a user string for an error message, escaping anything unprintable and capping its length.
std::string Quote(absl::string_view s) { return absl::StrCat("\"", EscapedExcerpt(s, 80), "\""); }

// Collects problems in document order; the first is the one reported.
class Problems {
 public:
  void Add(std::string path, std::string what) {
    if (first_.empty()) first_ = absl::StrCat(path, ": ", what);
    ++count_;
  }
  absl::Status ToStatus() const {
    if (count_ == 0) return absl::OkStatus();
    if (count_ == 1) return absl::InvalidArgumentError(first_);
    return absl::InvalidArgumentError(
        absl::StrCat(first_, " (and ", count_ - 1, " more problem", count_ > 2 ? "s" : "", ")"));
  }

 private:
  std::string first_;
  int count_ = 0;
};

bool IsNodeOp(absl::string_view op) {
  return op == "placeholder" || op == "call_function" || op == "call_method" ||
         op == "call_module" || op == "get_attr" || op == "output";
}

using FrameMap = absl::flat_hash_map<uint32_t, const v1::Frame*>;

void ValidateFrames(const v1::SessionCapture& c, FrameMap* ids, Problems* p) {
  for (int i = 0; i < c.frames_size(); ++i) {
    const v1::Frame& f = c.frames(i);
    if (f.no_frame() && f.reset_round() > 0) {
      p->Add(absl::StrCat("frames[", i, "]"), "a no_frame frame has no reset_round");
    }
    if (!ids->try_emplace(f.id(), &f).second) {
      p->Add(absl::StrCat("frames[", i, "].id"), absl::StrCat(f.id(), " is used by another frame"));
    }
  }
}

// What the frame a compile names must be for the compile's id: its own, of its reset round, or the
// stand-in for "no frame".
std::string FrameMismatch(const CompileId& id, const v1::Frame& f) {
  if (id.no_frame) return f.no_frame() ? "" : "is not a no_frame frame";
  if (f.no_frame()) return "is a no_frame frame";
  if (f.reset_round() != id.reset_round) {
    return absl::StrCat("is of reset round ", f.reset_round(), ", not ", id.reset_round);
  }
  const uint32_t torch_id = id.reset_round > 0 ? f.torch_id() : f.id();
  if (torch_id != id.frame_id) return absl::StrCat("is torch's frame ", torch_id);
  return "";
}

// The analyses evaluate symbolic sizes at the hints: a hint must be a number (an integer for a
// size, a decimal for torch's float symbols, "zf0"), a name unique.
void ValidateSymbols(const v1::Compile& cp, const std::string& path, Problems* p) {
  absl::flat_hash_set<absl::string_view> names;
  for (int j = 0; j < cp.symbols_size(); ++j) {
    const v1::Symbol& symbol = cp.symbols(j);
    const std::string at = absl::StrCat(path, ".symbols[", j, "]");
    double hint = 0;
    if (symbol.name().empty()) {
      p->Add(at + ".name", "is empty");
    } else if (!names.insert(symbol.name()).second) {
      p->Add(at + ".name", absl::StrCat(Quote(symbol.name()), " is used by another symbol"));
    }
    if (!symbol.hint().empty() &&
        !(absl::SimpleAtod(symbol.hint(), &hint) && std::isfinite(hint))) {
      p->Add(at + ".hint", absl::StrCat(Quote(symbol.hint()), " is not a number"));
    } else if (symbol.unbacked() && !symbol.hint().empty()) {
      p->Add(at + ".hint", "is set on an unbacked symbol, which has none");
    }
  }
}

void ValidateCompiles(const v1::SessionCapture& c, const FrameMap& frames,
                      absl::flat_hash_set<absl::string_view>* ids, Problems* p) {
  for (int i = 0; i < c.compiles_size(); ++i) {
    const v1::Compile& cp = c.compiles(i);
    const std::string path = absl::StrCat("compiles[", i, "]");
    const std::optional<CompileId> id = ParseCompileId(cp.id());
    if (!id) {
      p->Add(path + ".id",
             absl::StrCat(Quote(cp.id()),
                          " is not a compile id (\"0/1\", \"0/1_1\", \"0/1@1\" or \"-/0\")"));
    } else if (id->frame_compile_id != cp.frame_compile_id() || id->attempt != cp.attempt()) {
      p->Add(path, absl::StrCat("id ", Quote(cp.id()), " disagrees with frame_compile_id ",
                                cp.frame_compile_id(), ", attempt ", cp.attempt()));
    }
    if (!cp.id().empty() && !ids->insert(cp.id()).second) {
      p->Add(path + ".id", absl::StrCat(Quote(cp.id()), " is used by another compile"));
    }
    if (auto f = frames.find(cp.frame_id()); f == frames.end()) {
      p->Add(path + ".frame_id", absl::StrCat(cp.frame_id(), " names no frame in frames[]"));
    } else if (id) {
      if (std::string why = FrameMismatch(*id, *f->second); !why.empty()) {
        p->Add(path, absl::StrCat("id ", Quote(cp.id()), " disagrees with frame_id ", cp.frame_id(),
                                  ", which ", why));
      }
    }
    if (cp.duration_us() < 0) p->Add(path + ".duration_us", "is negative");
    for (int j = 0; j < cp.cache_events_size(); ++j) {
      if (cp.cache_events(j).cache().empty()) {
        p->Add(absl::StrCat(path, ".cache_events[", j, "].cache"), "is empty");
      }
    }
    ValidateSymbols(cp, path, p);
    if (auto f = frames.find(cp.frame_id()); f != frames.end()) {
      const int table = f->second->guarded_sources_size();
      for (int j = 0; j < cp.guarded_source_ids_size(); ++j) {
        if (cp.guarded_source_ids(j) >= static_cast<uint32_t>(table)) {
          p->Add(absl::StrCat(path, ".guarded_source_ids[", j, "]"),
                 absl::StrCat(cp.guarded_source_ids(j), " is past frame ", cp.frame_id(), "'s ",
                              table, " guarded_sources"));
        }
      }
    }
  }
}

// Paths are built only for a problem (FunctionRef): a valid capture of thousands of nodes should
// not pay a string per argument.
void ValidateArg(const v1::Arg& arg, absl::FunctionRef<std::string()> path,
                 const absl::flat_hash_set<absl::string_view>& defined, absl::string_view graph,
                 Problems* p) {
  if (arg.kind_case() == v1::Arg::kNode && !defined.contains(arg.node())) {
    p->Add(path(), absl::StrCat("node ", Quote(arg.node()), " is not defined before it in graph ",
                                Quote(graph)));
  }
  for (int i = 0; i < arg.list().items_size(); ++i) {
    ValidateArg(
        arg.list().items(i), [&] { return absl::StrCat(path(), "[", i, "]"); }, defined, graph, p);
  }
}

// FX graphs are topologically ordered, so an argument must name an earlier node; this also rules
// out cycles. `defined` gets the graph's node names.
void ValidateNodes(const v1::Graph& g, const std::string& path,
                   absl::flat_hash_set<absl::string_view>& defined, Problems* p) {
  defined.reserve(g.nodes_size());
  for (int j = 0; j < g.nodes_size(); ++j) {
    const v1::Node& n = g.nodes(j);
    const auto npath = [&] { return absl::StrCat(path, ".nodes[", j, "]"); };
    if (n.name().empty()) p->Add(npath() + ".name", "is empty");
    if (!IsNodeOp(n.op()))
      p->Add(npath() + ".op", absl::StrCat(Quote(n.op()), " is not an FX node op"));
    for (int k = 0; k < n.args_size(); ++k) {
      ValidateArg(
          n.args(k), [&] { return absl::StrCat(npath(), ".args[", k, "]"); }, defined, g.id(), p);
    }
    for (const auto& kwarg : n.kwargs()) {  // not a structured binding: clang 14 cannot capture one
      ValidateArg(
          kwarg.second, [&] { return absl::StrCat(npath(), ".kwargs[", Quote(kwarg.first), "]"); },
          defined, g.id(), p);
    }
    if (!n.name().empty() && !defined.insert(n.name()).second) {
      p->Add(npath() + ".name",
             absl::StrCat(Quote(n.name()), " is used by another node of the graph"));
    }
  }
}

// Node names by graph id; the views point into the capture, which outlives the validation.
using NodeNames = absl::flat_hash_map<absl::string_view, absl::flat_hash_set<absl::string_view>>;

void ValidateGraphs(const v1::SessionCapture& c,
                    const absl::flat_hash_set<absl::string_view>& compiles, NodeNames* nodes,
                    Problems* p) {
  for (int i = 0; i < c.graphs_size(); ++i) {
    const v1::Graph& g = c.graphs(i);
    const std::string path = absl::StrCat("graphs[", i, "]");
    if (g.id().empty()) p->Add(path + ".id", "is empty");
    if (nodes->contains(g.id()))
      p->Add(path + ".id", absl::StrCat(Quote(g.id()), " is used by another graph"));
    if (!g.compile_id().empty() && !compiles.contains(g.compile_id())) {
      p->Add(path + ".compile_id",
             absl::StrCat(Quote(g.compile_id()), " names no compile in compiles[]"));
    }
    ValidateNodes(g, path, (*nodes)[g.id()], p);
  }
}

void ValidateRest(const v1::SessionCapture& c, const FrameMap& frames,
                  const absl::flat_hash_set<absl::string_view>& compiles, const NodeNames& nodes,
                  Problems* p) {
  for (int i = 0; i < c.iterations_size(); ++i) {
    const v1::Iteration& it = c.iterations(i);
    const auto path = [i] { return absl::StrCat("iterations[", i, "]"); };
    if (!it.compile_id().empty() && !compiles.contains(it.compile_id())) {
      p->Add(path() + ".compile_id",
             absl::StrCat(Quote(it.compile_id()), " names no compile in compiles[]"));
    }
    if (!frames.contains(it.frame_id())) {
      p->Add(path() + ".frame_id", absl::StrCat(it.frame_id(), " names no frame in frames[]"));
    }
  }
  for (int i = 0; i < c.kernels_size(); ++i) {
    const v1::Kernel& k = c.kernels(i);
    const auto path = [i] { return absl::StrCat("kernels[", i, "]"); };
    if (k.graph_id().empty()) continue;
    auto graph = nodes.find(k.graph_id());
    if (graph == nodes.end()) {
      p->Add(path() + ".graph_id",
             absl::StrCat(Quote(k.graph_id()), " names no graph in graphs[]"));
      continue;
    }
    for (int j = 0; j < k.source_nodes_size(); ++j) {
      if (!graph->second.contains(k.source_nodes(j))) {
        p->Add(absl::StrCat(path(), ".source_nodes[", j, "]"),
               absl::StrCat("node ", Quote(k.source_nodes(j)), " does not exist in graph ",
                            Quote(k.graph_id())));
      }
    }
  }
  absl::flat_hash_set<std::string> paths;
  for (int i = 0; i < c.sources_size(); ++i) {
    const std::string path = absl::StrCat("sources[", i, "].path");
    if (c.sources(i).path().empty())
      p->Add(path, "is empty");
    else if (!paths.insert(c.sources(i).path()).second)
      p->Add(path, absl::StrCat(Quote(c.sources(i).path()), " appears twice"));
  }
  for (int i = 0; i < c.divergence().layers_size(); ++i) {
    if (c.divergence().layers(i).name().empty()) {
      p->Add(absl::StrCat("divergence.layers[", i, "].name"), "is empty");
    }
  }
  const v1::Session& s = c.session();
  if (s.world_size() < 0) p->Add("session.world_size", "is negative");
  if (s.rank() < 0 || (s.world_size() > 0 && s.rank() >= s.world_size())) {
    p->Add("session.rank", absl::StrCat(s.rank(), " is outside world_size ", s.world_size()));
  }
}

}  // namespace

std::optional<CompileId> ParseCompileId(absl::string_view id) {
  // "F/C" or "F/C_A", each part a decimal number, after "!CA/" for compiled autograd and before
  // "@R" for a reset round; or "-/N".
  const auto all_digits = [](absl::string_view s) {
    if (s.empty() || s.size() > kCompileIdDigits) return false;
    for (char ch : s)
      if (ch < '0' || ch > '9') return false;
    return true;
  };
  const auto number = [&](absl::string_view s, uint32_t* out) {
    return all_digits(s) && absl::SimpleAtoi(s, out);
  };
  CompileId out;
  if (absl::ConsumePrefix(&id, "-/")) {
    out.no_frame = true;
    if (!number(id, &out.frame_compile_id)) return std::nullopt;
    return out;
  }
  if (const size_t at = id.find('@'); at != absl::string_view::npos) {
    if (!number(id.substr(at + 1), &out.reset_round) || out.reset_round == 0) return std::nullopt;
    id = id.substr(0, at);
  }
  if (absl::ConsumePrefix(&id, "!")) {
    const size_t slash = id.find('/');
    uint32_t n = 0;
    if (slash == absl::string_view::npos || !number(id.substr(0, slash), &n)) return std::nullopt;
    out.compiled_autograd_id = n;
    id.remove_prefix(slash + 1);
  }
  const size_t slash = id.find('/');
  if (slash == absl::string_view::npos) return std::nullopt;
  absl::string_view frame = id.substr(0, slash), rest = id.substr(slash + 1), attempt = "0";
  if (const size_t us = rest.find('_'); us != absl::string_view::npos) {
    attempt = rest.substr(us + 1);
    rest = rest.substr(0, us);
  }
  if (!number(frame, &out.frame_id) || !number(rest, &out.frame_compile_id) ||
      !number(attempt, &out.attempt)) {
    return std::nullopt;
  }
  return out;
}

absl::Status ValidateGraphNodes(const v1::Graph& graph) {
  Problems p;
  absl::flat_hash_set<absl::string_view> defined;
  ValidateNodes(graph, absl::StrCat("graph ", Quote(graph.id())), defined, &p);
  return p.ToStatus();
}

absl::Status ValidateCapture(const v1::SessionCapture& capture) {
  Problems problems;
  FrameMap frames;
  absl::flat_hash_set<absl::string_view> compiles;
  NodeNames nodes;
  ValidateFrames(capture, &frames, &problems);
  ValidateCompiles(capture, frames, &compiles, &problems);
  ValidateGraphs(capture, compiles, &nodes, &problems);
  ValidateRest(capture, frames, compiles, nodes, &problems);
  return problems.ToStatus();
}

}  // namespace cl

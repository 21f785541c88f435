#include "analyzers/ir_diff/plan.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "analyzers/common/location.h"
#include "analyzers/common/post_grad_graph.h"
#include "proto/report_words.h"

namespace cl {
namespace {

// How lowered a stage is: higher is closer to what runs. 0: not a stage the diff reads.
int Level(v1::Graph::Stage stage) {
  switch (stage) {
    case v1::Graph::POST_GRAD:
      return 4;
    case v1::Graph::AOT_FORWARD:
    case v1::Graph::AOT_BACKWARD:
    case v1::Graph::AOT_INFERENCE:
    case v1::Graph::AOT_JOINT:
      return 3;
    case v1::Graph::PRE_GRAD:
      return 2;
    case v1::Graph::DYNAMO:
      return 1;
    default:
      return 0;
  }
}

constexpr int kMaxLevel = 4;

const char* LevelName(int level) {
  switch (level) {
    case 4:
      return "POST_GRAD";
    case 3:
      return "AOT";
    case 2:
      return "PRE_GRAD";
    case 1:
      return "DYNAMO";
    default:
      return "none";
  }
}

using FrameKey = std::tuple<std::string, std::string, uint32_t>;  // name, relative file, line

struct CompileGraphs {
  std::string id;
  uint32_t frame_compile_id = 0;
  uint32_t attempt = 0;
  std::vector<const v1::Graph*> graphs;  // in capture order
};

struct SideFrame {
  FrameKey key;
  std::vector<CompileGraphs> compiles;
  unsigned levels = 0;  // bit L: a graph of level L
};

// What one capture compiled, frame by frame.
struct Side {
  std::vector<SideFrame> frames;  // in order of appearance
  absl::flat_hash_map<FrameKey, int> by_key;

  int Intern(FrameKey key) {
    auto [it, inserted] = by_key.try_emplace(key, static_cast<int>(frames.size()));
    if (inserted) frames.push_back(SideFrame{std::move(key), {}, 0});
    return it->second;
  }
};

struct CompileRef {
  uint32_t frame_id = 0;
  uint32_t frame_compile_id = 0;
  uint32_t attempt = 0;
  bool known = false;
};

// A compile id without a compile record: torch spells it "F/C" or "F/C_A", sometimes with a
// prefix ("!0/0/1" for compiled autograd, "[0/1]" in log text).
CompileRef ParseCompileId(absl::string_view id) {
  CompileRef ref;
  id = absl::StripSuffix(id, "]");
  std::vector<absl::string_view> parts = absl::StrSplit(id, '/');
  if (parts.size() < 2) return ref;
  absl::string_view frame = parts[parts.size() - 2];
  while (!frame.empty() && !absl::ascii_isdigit(frame.front())) frame.remove_prefix(1);
  std::pair<absl::string_view, absl::string_view> compile =
      absl::StrSplit(parts.back(), absl::MaxSplits('_', 1));
  ref.known = absl::SimpleAtoi(frame, &ref.frame_id) &&
              absl::SimpleAtoi(compile.first, &ref.frame_compile_id) &&
              (compile.second.empty() || absl::SimpleAtoi(compile.second, &ref.attempt));
  return ref;
}

Side Collect(const v1::SessionCapture& capture) {
  const std::string& root = capture.session().project_root();
  Side side;
  absl::flat_hash_map<uint32_t, int> frame_by_id;
  for (const v1::Frame& f : capture.frames()) {
    frame_by_id.try_emplace(
        f.id(), side.Intern(FrameKey{f.name(), RelativeToProjectRoot(root, f.file()), f.line()}));
  }
  absl::flat_hash_map<absl::string_view, const v1::Compile*> compile_by_id;
  for (const v1::Compile& c : capture.compiles()) compile_by_id.try_emplace(c.id(), &c);
  absl::flat_hash_map<absl::string_view, std::pair<int, int>> slot_by_compile;  // → frame, compile

  for (const v1::Graph& g : capture.graphs()) {
    const int level = Level(g.stage());
    if (level == 0) continue;
    CompileRef ref;
    if (auto it = compile_by_id.find(g.compile_id()); it != compile_by_id.end()) {
      ref = {it->second->frame_id(), it->second->frame_compile_id(), it->second->attempt(), true};
    } else {
      ref = ParseCompileId(g.compile_id());
    }
    auto [slot, inserted] = slot_by_compile.try_emplace(g.compile_id(), -1, -1);
    if (inserted) {
      int frame;
      if (auto it = frame_by_id.find(ref.frame_id); ref.known && it != frame_by_id.end()) {
        frame = it->second;
      } else {
        frame = side.Intern(
            FrameKey{ref.known ? absl::StrCat("frame ", ref.frame_id) : "unknown frame", "", 0});
      }
      std::vector<CompileGraphs>& compiles = side.frames[frame].compiles;
      compiles.push_back(CompileGraphs{g.compile_id(), ref.frame_compile_id, ref.attempt, {}});
      slot->second = {frame, static_cast<int>(compiles.size()) - 1};
    }
    SideFrame& frame = side.frames[slot->second.first];
    frame.compiles[slot->second.second].graphs.push_back(&g);
    frame.levels |= 1u << level;
  }
  return side;
}

std::string Display(const FrameKey& key) {
  const auto& [name, file, line] = key;
  if (file.empty()) return name;
  return line == 0 ? absl::StrCat(name, " (", file, ")")
                   : absl::StrCat(name, " (", file, ":", line, ")");
}

// The frame's first compile with a graph of `level`, and those graphs.
const CompileGraphs* FirstCompileAt(const SideFrame& frame, int level) {
  const CompileGraphs* first = nullptr;
  for (const CompileGraphs& c : frame.compiles) {
    const bool has = std::any_of(c.graphs.begin(), c.graphs.end(),
                                 [&](const v1::Graph* g) { return Level(g->stage()) == level; });
    if (has && (first == nullptr || std::tie(c.frame_compile_id, c.attempt) <
                                        std::tie(first->frame_compile_id, first->attempt))) {
      first = &c;
    }
  }
  return first;
}

std::vector<const v1::Graph*> GraphsAt(const CompileGraphs& compile, int level) {
  std::vector<const v1::Graph*> out;
  for (const v1::Graph* g : compile.graphs) {
    if (Level(g->stage()) == level) out.push_back(g);
  }
  return out;
}

// Pairs graphs by stage and the torch event that logged them (GraphEvent: a before_post_grad_graph
// one side logged and the other did not must not take the other's inductor_post_grad_graph), by
// order within those; then what is left by stage and order alone (ids that name no event). A
// before_ copy left without a partner is left out: one side's torch logged it and the other's did
// not, which says nothing of the model.
std::vector<GraphPairing> PairGraphs(const std::vector<const v1::Graph*>& base,
                                     const std::vector<const v1::Graph*>& head) {
  std::vector<const v1::Graph*> paired(head.size(), nullptr);
  std::vector<bool> used(base.size(), false);
  const auto pair_by = [&](auto same) {
    for (size_t j = 0; j < head.size(); ++j) {
      if (paired[j] != nullptr) continue;
      for (size_t i = 0; i < base.size(); ++i) {
        if (used[i] || !same(*base[i], *head[j])) continue;
        paired[j] = base[i];
        used[i] = true;
        break;
      }
    }
  };
  pair_by([](const v1::Graph& b, const v1::Graph& h) {
    return b.stage() == h.stage() && GraphEvent(b) == GraphEvent(h);
  });
  pair_by([](const v1::Graph& b, const v1::Graph& h) { return b.stage() == h.stage(); });
  std::vector<GraphPairing> out;
  for (size_t j = 0; j < head.size(); ++j) {
    if (paired[j] != nullptr || !IsBeforeCopy(*head[j]))
      out.push_back(GraphPairing{paired[j], head[j]});
  }
  for (size_t i = 0; i < base.size(); ++i) {
    if (!used[i] && !IsBeforeCopy(*base[i])) out.push_back(GraphPairing{base[i], nullptr});
  }
  return out;
}

std::string StageName(const std::vector<GraphPairing>& graphs) {
  std::vector<std::string> names;
  for (const GraphPairing& p : graphs) {
    const std::string name = std::string(Word((p.head != nullptr ? p.head : p.base)->stage()));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return absl::StrJoin(names, "+");
}

std::string Levels(unsigned levels) {
  std::vector<std::string> names;
  for (int level = kMaxLevel; level > 0; --level) {
    if (levels & (1u << level)) names.push_back(LevelName(level));
  }
  return names.empty() ? "no graphs" : absl::StrJoin(names, ", ");
}

FramePlan PlanFrame(const SideFrame& base, const SideFrame& head) {
  FramePlan plan;
  std::tie(plan.name, plan.file, plan.line) = head.key;
  const unsigned common = base.levels & head.levels;
  if (common == 0) {
    plan.note = absl::StrCat("no graph stage on both sides (base: ", Levels(base.levels),
                             "; head: ", Levels(head.levels), ")");
    return plan;
  }
  int level = kMaxLevel;
  while (!(common & (1u << level))) --level;
  const CompileGraphs* b = FirstCompileAt(base, level);
  const CompileGraphs* h = FirstCompileAt(head, level);
  plan.base_compile = b->id;
  plan.head_compile = h->id;
  plan.graphs = PairGraphs(GraphsAt(*b, level), GraphsAt(*h, level));
  plan.stage = StageName(plan.graphs);
  return plan;
}

}  // namespace

IrDiffPlan PlanIrDiff(const v1::SessionCapture& base, const v1::SessionCapture& head) {
  const Side b = Collect(base);
  const Side h = Collect(head);
  IrDiffPlan plan;
  for (const SideFrame& frame : h.frames) {
    auto it = b.by_key.find(frame.key);
    if (it == b.by_key.end()) {
      plan.only_in_head.push_back(Display(frame.key));
    } else if (frame.levels != 0 || b.frames[it->second].levels != 0) {
      plan.frames.push_back(PlanFrame(b.frames[it->second], frame));
    }
  }
  for (const SideFrame& frame : b.frames) {
    if (!h.by_key.contains(frame.key)) plan.only_in_base.push_back(Display(frame.key));
  }
  return plan;
}

}  // namespace cl

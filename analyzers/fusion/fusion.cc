#include "analyzers/fusion/fusion.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzers/common/location.h"
#include "analyzers/common/post_grad_graph.h"
#include "analyzers/common/size_hints.h"
#include "analyzers/fusion/advice.h"
#include "analyzers/fusion/match_util.h"
#include "analyzers/fusion/patterns.h"
#include "common/number_format.h"

namespace cl {
namespace {

// Where a match sits in user code: the span of its anchors' lines in the first anchor's file.
// Anchors in another file (a norm module's forward, say) would stretch the span over unrelated
// lines, so they are left out; so are anchors inside torch (nn.RMSNorm's node is at
// torch/nn/functional.py) while another anchor is in the user's code.
v1::Location MatchLocation(const v1::Session& session, const PostGradGraph& graph,
                           const FusionMatch& match, const v1::Compile* compile) {
  const bool user_anchor =
      std::any_of(match.anchors.begin(), match.anchors.end(), [&](const v1::Node* anchor) {
        const v1::SourceLoc* source = SourceOf(graph, *anchor);
        return source != nullptr && !IsLibraryFile(source->file());
      });
  std::string file;
  uint32_t first = 0, last = 0;
  for (const v1::Node* anchor : match.anchors) {
    const v1::SourceLoc* source = SourceOf(graph, *anchor);
    if (source == nullptr || (user_anchor && IsLibraryFile(source->file()))) continue;
    if (file.empty()) {
      file = source->file();
      first = last = source->line();
    } else if (source->file() == file) {
      first = std::min(first, source->line());
      last = std::max(last, source->line());
    }
  }
  // Where the graph's code is torch's own wrapper (all torch writes for a compiled nn.Sequential),
  // or names no file, the user's line that called the compiled module says more.
  if (compile != nullptr) {
    const v1::StackFrame* user =
        file.empty() ? InnermostUserFrame(compile->stack()) : TorchWrapperCallSite(*compile, file);
    if (user != nullptr) return MakeLocation(session, user->file(), user->line());
  }
  if (file.empty()) return v1::Location();
  v1::Location location = MakeLocation(session, file, first);
  if (last != first) {
    location.clear_line();
    location.set_line_start(first);
    location.set_line_end(last);
  }
  return location;
}

// An addmm whose addend is a full [m,n] tensor: Inductor's CPU-side mm + add rewrite.
bool HasResidualAddmm(const PostGradGraph& graph, const FusionMatch& match) {
  if (match.pattern != FusionPattern::kGemmResidRmsNormGemm) return false;
  const v1::Node* bias = GemmBias(graph, *match.anchors.front());
  return bias != nullptr && NumelOr0(graph, *bias) == match.m * match.n;
}

using GroupKey = std::tuple<std::string, std::string, uint32_t, uint32_t, uint32_t, uint64_t,
                            uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, std::string>;

// Whether a node's shape holds a size with no value, even at a hint (an unbacked "u0", or a log
// that recorded no create_symbol).
bool HasUnknownSize(const PostGradGraph& graph) {
  return std::any_of(graph.graph().nodes().begin(), graph.graph().nodes().end(),
                     [&](const v1::Node& node) {
                       return !node.meta().shape().empty() && !graph.Numel(node).has_value();
                     });
}

}  // namespace

absl::Status FusionPass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  v1::FusionSection* section = out->mutable_fusion();
  const std::vector<const v1::Graph*> graphs = LoweredGraphsPerFrame(in.head);
  if (graphs.empty()) {
    section->set_status(v1::SKIPPED);
    section->set_reason(NoLoweredGraphReason(in.head));
    return absl::OkStatus();
  }
  std::map<GroupKey, v1::FusionOpportunity> groups;
  std::vector<GroupKey> order;
  bool residual_addmm = false;
  size_t unknown_sizes = 0;  // graphs with a size that has no value, even at a hint
  bool at_hints = false;
  const SizeHintsByCompile hints(in.head);
  absl::flat_hash_map<absl::string_view, const v1::Compile*> compiles;
  for (const v1::Compile& c : in.head.compiles()) compiles.emplace(c.id(), &c);
  for (const v1::Graph* graph_proto : graphs) {
    if (in.Cancelled()) return absl::CancelledError("fusion pass cancelled");
    const PostGradGraph graph(*graph_proto, hints.For(graph_proto->compile_id()));
    const auto compile_it = compiles.find(graph_proto->compile_id());
    const v1::Compile* compile = compile_it != compiles.end() ? compile_it->second : nullptr;
    unknown_sizes += HasUnknownSize(graph) ? 1 : 0;
    for (const FusionMatch& match : FindFusionMatches(graph)) {
      residual_addmm |= HasResidualAddmm(graph, match);
      const v1::Location location = MatchLocation(in.head.session(), graph, match, compile);
      std::string size_hints = graph.SizeHintsWithOperands(match.anchors);
      at_hints |= !size_hints.empty();
      const GroupKey key{match.label,
                         location.file(),
                         location.line(),
                         location.line_start(),
                         location.line_end(),
                         match.m,
                         match.n,
                         match.k0,
                         match.k1,
                         match.bytes.before,
                         match.bytes.after,
                         size_hints};
      auto [it, inserted] = groups.try_emplace(key);
      v1::FusionOpportunity& o = it->second;
      if (inserted) {
        order.push_back(key);
        o.set_pattern(match.label);
        *o.mutable_location() = location;
        o.mutable_shape()->set_m(match.m);
        o.mutable_shape()->set_n(match.n);
        o.mutable_shape()->set_k0(match.k0);
        o.mutable_shape()->set_k1(match.k1);
        o.set_hbm_bytes_before(match.bytes.before);
        o.set_hbm_bytes_after(match.bytes.after);
        if (match.bytes.after > 0) {
          o.set_speedup_bound(static_cast<double>(match.bytes.before) / match.bytes.after);
        }
        o.set_byte_model(match.bytes.model);
        o.set_change(FusionChange(match.pattern));
        o.set_how(FusionHow(match.pattern));
        o.set_size_hints(std::move(size_hints));
      }
      o.set_count(o.count() + 1);
    }
  }
  std::vector<v1::FusionOpportunity> ranked;
  for (const GroupKey& key : order) ranked.push_back(groups[key]);
  // Most bytes saved in all first: the ranking the upper bound is for.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const v1::FusionOpportunity& a, const v1::FusionOpportunity& b) {
                     auto saved = [](const v1::FusionOpportunity& o) {
                       const uint64_t per = o.hbm_bytes_before() > o.hbm_bytes_after()
                                                ? o.hbm_bytes_before() - o.hbm_bytes_after()
                                                : 0;
                       return per * o.count();
                     };
                     return saved(a) > saved(b);
                   });
  for (v1::FusionOpportunity& o : ranked) *section->add_opportunities() = std::move(o);
  // The patterns compare sizes. Symbolic ones (mark_dynamic, dynamic=True: s0) are evaluated at
  // torch's size hints; a size with none (an unbacked u0, a log without create_symbol records)
  // matches nothing, which is not "no chain": say so rather than report a clean graph.
  if (unknown_sizes > 0 && section->opportunities().empty()) {
    section->set_status(v1::SKIPPED);
    section->set_reason(absl::StrCat(
        FormatCount(unknown_sizes, "post-grad graph has", "post-grad graphs have"),
        " symbolic sizes with no size hint in the log (an unbacked symbol, or no create_symbol "
        "record), which the fusion patterns cannot compare: no claim either way"));
    return absl::OkStatus();
  }
  section->set_status(v1::OK);
  std::string note = absl::StrCat(
      "HBM bytes are the compulsory traffic of the kernels Inductor emits for a GPU, from the "
      "shapes and dtypes on the post-grad nodes; the graphs Inductor lowered for each frame's "
      "first "
      "compile (forward and backward, in training), ",
      FormatCount(graphs.size(), "graph", "graphs"), " read.");
  if (at_hints) {
    absl::StrAppend(&note,
                    " Symbolic sizes (mark_dynamic, dynamic=True) are evaluated at the size hints "
                    "torch logged when it created each symbol (the sizes of the call that "
                    "compiled); a row says which.");
  }
  if (residual_addmm) {
    absl::StrAppend(&note,
                    " On GPU Inductor splits an `addmm` whose users are pointwise back into `mm` "
                    "+ add (`unfuse_bias_add_to_pointwise`), so the `addmm(resid, x, W)` of this "
                    "trace is modelled as GEMM + add.");
  }
  section->set_note(note);
  return absl::OkStatus();
}

}  // namespace cl

#include "analyzers/fusion/fusion.h"

#include <algorithm>
#include <map>
#include <optional>
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
#include "analyzers/lowered_facts.h"
#include "common/number_format.h"

namespace cl {
namespace {

// Where a match's anchors are: the span of their lines in the first anchor's file. Anchors in
// another file (a norm module's forward, say) would stretch the span over unrelated lines, so
// they are left out; so are anchors inside torch (nn.RMSNorm's node is at torch/nn/functional.py)
// while another anchor is in the user's code.
void AnchorSpan(const PostGradGraph& graph, const FusionMatch& match, FusionMatchFacts* facts) {
  const bool user_anchor =
      std::any_of(match.anchors.begin(), match.anchors.end(), [&](const v1::Node* anchor) {
        const v1::SourceLoc* source = SourceOf(graph, *anchor);
        return source != nullptr && !IsLibraryFile(source->file());
      });
  for (const v1::Node* anchor : match.anchors) {
    const v1::SourceLoc* source = SourceOf(graph, *anchor);
    if (source == nullptr || (user_anchor && IsLibraryFile(source->file()))) continue;
    if (facts->file.empty()) {
      facts->file = source->file();
      facts->first_line = facts->last_line = source->line();
    } else if (source->file() == facts->file) {
      facts->first_line = std::min(facts->first_line, source->line());
      facts->last_line = std::max(facts->last_line, source->line());
    }
  }
}

// Where a match sits in user code: its anchors' span, or where the graph's code is torch's own
// wrapper (all torch writes for a compiled nn.Sequential) or names no file, the user's line that
// called the compiled module, which says more.
v1::Location MatchLocation(const v1::Session& session, const FusionMatchFacts& match,
                           const v1::Compile* compile) {
  if (compile != nullptr) {
    const v1::StackFrame* user = match.file.empty() ? InnermostUserFrame(compile->stack())
                                                    : TorchWrapperCallSite(*compile, match.file);
    if (user != nullptr) return MakeLocation(session, user->file(), user->line());
  }
  if (match.file.empty()) return v1::Location();
  v1::Location location = MakeLocation(session, match.file, match.first_line);
  if (match.last_line != match.first_line) {
    location.clear_line();
    location.set_line_start(match.first_line);
    location.set_line_end(match.last_line);
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

FusionGraphFacts ComputeFusionFacts(const PostGradGraph& graph) {
  FusionGraphFacts facts;
  facts.unknown_size = HasUnknownSize(graph);
  for (FusionMatch& match : FindFusionMatches(graph)) {
    FusionMatchFacts& m = facts.matches.emplace_back();
    m.pattern = match.pattern;
    m.label = std::move(match.label);
    m.m = match.m;
    m.n = match.n;
    m.k0 = match.k0;
    m.k1 = match.k1;
    m.size_hints = graph.SizeHintsWithOperands(match.anchors);
    m.residual_addmm = HasResidualAddmm(graph, match);
    AnchorSpan(graph, match, &m);
    m.bytes = std::move(match.bytes);
  }
  return facts;
}

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
  std::optional<SizeHintsByCompile> hints;  // for the graphs with no facts kept, read here
  absl::flat_hash_map<absl::string_view, const v1::Compile*> compiles;
  for (const v1::Compile& c : in.head.compiles()) compiles.emplace(c.id(), &c);
  for (const v1::Graph* graph_proto : graphs) {
    if (in.Cancelled()) return absl::CancelledError("fusion pass cancelled");
    const LoweredGraphFacts* kept = LoweredFactsOf(in, *graph_proto);
    FusionGraphFacts computed;
    if (kept == nullptr) {
      if (!hints) hints.emplace(in.head);
      computed =
          ComputeFusionFacts(PostGradGraph(*graph_proto, hints->For(graph_proto->compile_id())));
    }
    const FusionGraphFacts& facts = kept != nullptr ? kept->fusion : computed;
    const auto compile_it = compiles.find(graph_proto->compile_id());
    const v1::Compile* compile = compile_it != compiles.end() ? compile_it->second : nullptr;
    unknown_sizes += facts.unknown_size ? 1 : 0;
    for (const FusionMatchFacts& match : facts.matches) {
      residual_addmm |= match.residual_addmm;
      const v1::Location location = MatchLocation(in.head.session(), match, compile);
      at_hints |= !match.size_hints.empty();
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
                         match.size_hints};
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
        o.set_size_hints(match.size_hints);
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

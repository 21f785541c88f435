#include "analyzers/ir_diff/ir_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzers/common/location.h"
#include "analyzers/ir_diff/anchors.h"
#include "analyzers/ir_diff/index.h"
#include "analyzers/ir_diff/matcher.h"
#include "analyzers/ir_diff/node_diff.h"
#include "analyzers/ir_diff/plan.h"
#include "common/status_macros.h"

namespace cl {
namespace {

absl::Status Cancelled() { return absl::CancelledError("ir_diff pass cancelled"); }

// Figures rounded as the report prints them, so that the JSON reads 0.9, not 0.9000000000000001.
double Round2(double x) { return std::round(x * 100) / 100; }

// Over every diffed graph pair of the section.
struct Totals {
  int64_t matched = 0;
  int64_t larger_side = 0;  // Σ max(|base|, |head|)
  AnchorUniqueness anchors;
};

class SectionWriter {
 public:
  SectionWriter(const PassInput& in, v1::IrDiffSection* section)
      : in_(in),
        base_session_(in.base->session()),
        head_session_(in.head.session()),
        section_(section) {}

  absl::Status Diff(const GraphPairing& pairing, v1::IrDiffFrame* frame) {
    if (pairing.base == nullptr || pairing.head == nullptr) return DiffOneSided(pairing, frame);
    const bool inputs_by_content =
        PositionalInputCount(*pairing.base) != PositionalInputCount(*pairing.head);
    const GraphIndex base(*pairing.base, base_session_.project_root(), inputs_by_content);
    const GraphIndex head(*pairing.head, head_session_.project_root(), inputs_by_content);
    if (in_.Cancelled()) return Cancelled();
    const GraphAnchors base_anchors = ComputeAnchors(base);
    const GraphAnchors head_anchors = ComputeAnchors(head);
    const AnchorUniqueness u = CountAnchorUniqueness(base_anchors.strict, head_anchors.strict);
    totals_.anchors.unique_on_both_sides += u.unique_on_both_sides;
    totals_.anchors.distinct += u.distinct;
    CL_ASSIGN_OR_RETURN(const GraphMatch match,
                        MatchGraphs(base, base_anchors, head, head_anchors, in_.cancelled));

    for (int h = 0; h < head.size(); ++h) {
      if (in_.Cancelled()) return Cancelled();
      const int b = match.pairs.head_to_base[h];
      if (b < 0) {
        *section_->add_added() =
            Change(head_session_, head.node(h), "added", match.head_confidence[h]);
        continue;
      }
      NodeDelta delta = CompareNodes(base, b, head, h, match.pairs);
      if (!delta.changed()) continue;
      v1::NodeChange* change = section_->add_modified();
      *change = Change(head_session_, head.node(h), absl::StrJoin(delta.details, "; "),
                       match.head_confidence[h]);
      change->set_base_node(base.node(b).name());
      for (std::string& kind : delta.kinds) change->add_kinds(std::move(kind));
    }
    for (int b = 0; b < base.size(); ++b) {
      if (in_.Cancelled()) return Cancelled();
      if (!match.pairs.BaseMatched(b)) {
        *section_->add_removed() =
            Change(base_session_, base.node(b), "removed", match.base_confidence[b]);
      }
    }
    Count(base.size(), head.size(), match.pairs.matched, frame);
    return absl::OkStatus();
  }

  const Totals& totals() const { return totals_; }

 private:
  // A graph without a partner on the other side: every node of it was added (or removed).
  absl::Status DiffOneSided(const GraphPairing& pairing, v1::IrDiffFrame* frame) {
    const bool added = pairing.base == nullptr;
    const v1::Graph& graph = added ? *pairing.head : *pairing.base;
    for (const v1::Node& node : graph.nodes()) {
      if (in_.Cancelled()) return Cancelled();
      *(added ? section_->add_added() : section_->add_removed()) =
          Change(added ? head_session_ : base_session_, node, added ? "added" : "removed", 1.0);
    }
    Count(added ? 0 : graph.nodes_size(), added ? graph.nodes_size() : 0, 0, frame);
    return absl::OkStatus();
  }

  void Count(int base_nodes, int head_nodes, int matched, v1::IrDiffFrame* frame) {
    totals_.matched += matched;
    totals_.larger_side += std::max(base_nodes, head_nodes);
    frame->set_base_nodes(frame->base_nodes() + base_nodes);
    frame->set_head_nodes(frame->head_nodes() + head_nodes);
    frame->set_matched(frame->matched() + matched);
  }

  static v1::NodeChange Change(const v1::Session& session, const v1::Node& node, std::string what,
                               double confidence) {
    v1::NodeChange change;
    change.set_node(node.name());
    change.set_op(node.target());
    change.set_change(std::move(what));
    const v1::SourceLoc& source = node.source();
    if (!source.no_stacktrace() && (!source.file().empty() || source.line() != 0)) {
      *change.mutable_location() = MakeLocation(session, source.file(), source.line());
    }
    change.set_confidence(Round2(std::clamp(confidence, 0.0, 1.0)));
    return change;
  }

  const PassInput& in_;
  const v1::Session& base_session_;
  const v1::Session& head_session_;
  v1::IrDiffSection* section_;
  Totals totals_;
};

bool HasGraphs(const v1::SessionCapture& capture) {
  return std::any_of(capture.graphs().begin(), capture.graphs().end(),
                     [](const v1::Graph& g) { return g.nodes_size() > 0; });
}

void Skip(v1::IrDiffSection* section, const char* reason) {
  section->set_status(v1::SKIPPED);
  section->set_reason(reason);
}

// "POST_GRAD (0/0 vs 0/0)": which stage and compiles a frame's diff compared.
std::string DiffedStage(const FramePlan& frame) {
  return absl::StrCat(frame.stage, " (", frame.base_compile, " vs ", frame.head_compile, ")");
}

}  // namespace

absl::Status IrDiffPass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  v1::IrDiffSection* section = out->mutable_ir_diff();
  if (in.base == nullptr) {
    Skip(section, "no base capture");
    return absl::OkStatus();
  }
  const bool base_graphs = HasGraphs(*in.base);
  const bool head_graphs = HasGraphs(in.head);
  if (!base_graphs || !head_graphs) {
    Skip(section, !base_graphs && !head_graphs ? "no graphs in the captures"
                  : !base_graphs               ? "no graphs in the base capture"
                                               : "no graphs in the head capture");
    return absl::OkStatus();
  }

  const IrDiffPlan plan = PlanIrDiff(*in.base, in.head);
  for (const std::string& f : plan.only_in_base) section->add_frames_only_in_base(f);
  for (const std::string& f : plan.only_in_head) section->add_frames_only_in_head(f);
  SectionWriter writer(in, section);
  std::vector<std::string> stages;  // "forward: POST_GRAD (0/0 vs 0/0)", one per diffed frame
  std::string only_stage;
  for (const FramePlan& frame : plan.frames) {
    v1::IrDiffFrame* f = section->add_frames();
    f->set_frame(frame.name);
    f->mutable_location()->set_file(frame.file);
    f->mutable_location()->set_line(frame.line);
    f->set_stage(frame.stage);
    f->set_base_compile(frame.base_compile);
    f->set_head_compile(frame.head_compile);
    f->set_note(frame.note);
    if (frame.stage.empty()) continue;
    only_stage = DiffedStage(frame);
    stages.push_back(absl::StrCat(frame.name, ": ", only_stage));
    for (const GraphPairing& pairing : frame.graphs) CL_RETURN_IF_ERROR(writer.Diff(pairing, f));
  }
  if (stages.empty()) {
    Skip(section, "no frame has graphs of one stage on both sides");
    return absl::OkStatus();
  }
  section->set_stage(stages.size() == 1 ? only_stage : absl::StrJoin(stages, "; "));
  const Totals& t = writer.totals();
  section->set_match_coverage(t.larger_side == 0 ? 1.0
                                                 : static_cast<double>(t.matched) / t.larger_side);
  section->set_anchor_uniqueness(t.anchors.distinct == 0
                                     ? 1.0
                                     : static_cast<double>(t.anchors.unique_on_both_sides) /
                                           t.anchors.distinct);
  section->set_status(v1::OK);
  return absl::OkStatus();
}

}  // namespace cl

#include "analyzers/recompile/recompile.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzers/common/location.h"
#include "analyzers/recompile/advice.h"
#include "analyzers/recompile/cache_limits.h"
#include "analyzers/recompile/cause.h"
#include "analyzers/recompile/frames.h"
#include "analyzers/recompile/graph_breaks.h"
#include "analyzers/recompile/reason.h"
#include "capture/validate.h"
#include "common/number_format.h"
#include "common/utf8.h"
#include "proto/report_words.h"

namespace cl {
namespace {

using Category = v1::RecompileCategory;

constexpr char kArrow[] = "\u2192";  // →, as the seed report prints transitions

void AddUnique(std::vector<std::string>* list, std::string value) {
  if (std::find(list->begin(), list->end(), value) == list->end())
    list->push_back(std::move(value));
}

// The bullet against the frame's first cache entry, else the newest (the first listed).
size_t PrimaryBullet(const std::vector<std::vector<GuardFailure>>& bullets, uint32_t first_entry) {
  for (size_t i = 0; i < bullets.size(); ++i) {
    for (const GuardFailure& f : bullets[i]) {
      auto parts = ParseCompileId(f.entry_id);
      if (parts && parts->frame_compile_id == first_entry) return i;
    }
  }
  return 0;
}

}  // namespace

absl::Status RecompilePass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  const v1::SessionCapture& capture = in.head;
  v1::RecompileSection* section = out->mutable_recompile();
  if (capture.compiles().empty()) {
    section->set_status(v1::SKIPPED);
    section->set_reason("no compiles in the capture");
    return absl::OkStatus();
  }
  std::map<uint32_t, FrameStats> frames = CollectFrames(capture);

  // Parse every recompile and file its primary reason under a cluster.
  std::vector<Cluster> clusters;
  std::map<std::tuple<uint32_t, Category::Value, std::string>, size_t> cluster_index;
  // Per frame, every (category, axis) torch named against one of its entries.
  std::map<uint32_t, std::set<std::pair<Category::Value, std::string>>> named;
  std::set<std::pair<uint32_t, uint32_t>> recompiles;  // (frame, frame_compile_id)
  uint32_t unrecognised = 0;
  std::string first_unrecognised;
  // The recompiles torch failed to compile, on any attempt: their fail_type.
  std::map<std::pair<uint32_t, uint32_t>, std::string> failed;
  for (const v1::Compile& compile : capture.compiles()) {
    if (compile.status() == v1::Compile::FAILED)
      failed[{compile.frame_id(), compile.frame_compile_id()}] = compile.fail_type();
  }
  for (const v1::Compile& compile : capture.compiles()) {
    if (in.Cancelled()) return absl::CancelledError("recompile pass cancelled");
    if (compile.recompile_reasons().empty()) continue;
    // A restarted compile ("0/1_1") repeats its first attempt's reasons: one recompile.
    if (!recompiles.emplace(compile.frame_id(), compile.frame_compile_id()).second) continue;
    FrameStats& frame = frames[compile.frame_id()];
    ++frame.recompiles;

    std::vector<std::vector<GuardFailure>> bullets;
    for (const std::string& reason : compile.recompile_reasons()) {
      bullets.push_back(ParseRecompileReason(reason));
      for (const GuardFailure& f : bullets.back()) {
        v1::ParsedReason* parsed = section->add_reasons();
        parsed->set_compile_id(compile.id());
        parsed->set_entry_id(f.entry_id);
        parsed->set_category(f.category);
        parsed->set_variable(f.variable);
        parsed->set_axis(f.Axis());
        parsed->set_expected(f.expected);
        parsed->set_actual(f.actual);
        parsed->set_raw(reason);
        if (f.category == Category::OTHER) {
          if (unrecognised == 0) first_unrecognised = reason;
          ++unrecognised;
        }
      }
    }
    const uint32_t first_entry = frame.entries.empty() ? 0 : *frame.entries.begin();
    // A recompile is filed under what no cache entry had (CauseFailures); its observed values
    // read against the first entry where that entry failed on the same axis (16→32, 16→64,
    // 16→128 for a size that doubles), else as the cause's own entry saw them.
    const std::vector<GuardFailure>& first_failures = bullets[PrimaryBullet(bullets, first_entry)];
    const auto against_first = [&](const GuardFailure& f) -> const GuardFailure& {
      for (const GuardFailure& g : first_failures) {
        if (g.category == f.category && g.Axis() == f.Axis() && !g.actual.empty()) return g;
      }
      return f;
    };
    // One count per cluster per recompile.
    std::set<std::pair<Category::Value, std::string>> filed;
    for (const GuardFailure* cause : CauseFailures(bullets)) {
      const GuardFailure& f = against_first(*cause);
      const std::string axis = f.Axis();
      if (!filed.emplace(f.category, axis).second) continue;
      auto [it, inserted] =
          cluster_index.try_emplace({compile.frame_id(), f.category, axis}, clusters.size());
      if (inserted) {
        Cluster& c = clusters.emplace_back();
        c.frame_id = compile.frame_id();
        c.category = f.category;
        c.axis = axis;
        c.example = f;
        c.first_seen = clusters.size() - 1;
      }
      Cluster& c = clusters[it->second];
      ++c.count;
      if (auto fail = failed.find({compile.frame_id(), compile.frame_compile_id()});
          fail != failed.end())
        c.failed.push_back(fail->second.empty() ? "a failure" : fail->second);
      for (const std::vector<GuardFailure>& bullet : bullets) {
        for (const GuardFailure& g : bullet) {
          if (!c.specialized_by.empty() || g.source.empty() || g.category != f.category ||
              g.Axis() != axis)
            continue;
          c.NoteGuardComment(g);
        }
      }
      // A size the code needs the exact value of: each new one compiles again, dynamic or not.
      if (f.rule == "size" && c.size_specialized_at.empty()) {
        const v1::StackFrame* user = SpecializedAt(compile, [&](absl::string_view source) {
          const GuardFailure size = ClassifyGuardCheck(source);
          return absl::StrContains(source, ".size()[") && size.variable == f.variable &&
                 size.dim == f.dim;
        });
        if (user != nullptr) {
          const v1::Location where = MakeLocation(capture.session(), user->file(), user->line());
          c.size_specialized_at = absl::StrCat(where.file(), ":", where.line());
          c.specialized_by = SourceLine(capture, user->file(), user->line());
        }
      }
      if (!f.expected.empty() && !f.actual.empty()) {
        AddUnique(&c.transitions, absl::StrCat(f.expected, kArrow, f.actual));
      } else if (!f.expected.empty()) {
        AddUnique(&c.guarded_values, f.expected);
      }
    }
    // Every guard torch named against an entry, for what the frame's clusters leave unsaid.
    for (const std::vector<GuardFailure>& bullet : bullets) {
      for (const GuardFailure& g : bullet) {
        if (g.category == Category::UNSPECIFIED || g.category == Category::OTHER) continue;
        for (std::string& axis : g.ChangedAxes())
          named[compile.frame_id()].emplace(g.category, axis);
      }
    }
  }

  section->set_status(v1::OK);
  section->set_total(static_cast<uint32_t>(recompiles.size()));

  // Frames, most recompiles first.
  std::vector<const FrameStats*> recompiling;
  for (const auto& [id, frame] : frames) {
    if (frame.recompiles > 0) recompiling.push_back(&frame);
  }
  std::stable_sort(
      recompiling.begin(), recompiling.end(),
      [](const FrameStats* a, const FrameStats* b) { return a->recompiles > b->recompiles; });
  for (const FrameStats* frame : recompiling) {
    v1::RecompileFrame* f = section->add_frames();
    f->set_name(frame->name);
    f->set_recompiles(frame->recompiles);
    if (!frame->file.empty())
      *f->mutable_location() = MakeLocation(capture.session(), frame->file, frame->line);
  }
  if (section->frames_size() > 0) *section->mutable_frame() = section->frames(0);

  // Clusters, largest first; their suggestions in the same order, expected behaviour last.
  std::stable_sort(clusters.begin(), clusters.end(),
                   [](const Cluster& a, const Cluster& b) { return a.count > b.count; });
  // A guard torch named against some entry of a frame but that no recompile of it is filed under
  // (a call that flipped grad mode and train/eval at once shows one against one entry, the other
  // against another): the frame's largest cluster says so.
  for (const Cluster& c : clusters) {
    auto it = named.find(c.frame_id);
    if (it == named.end()) continue;
    for (std::string& axis : c.example.ChangedAxes()) it->second.erase({c.category, axis});
  }
  std::set<uint32_t> said;
  for (Cluster& c : clusters) {
    if (!said.insert(c.frame_id).second) continue;
    for (const auto& [category, axis] : named[c.frame_id]) {
      c.also.push_back(axis.empty() ? std::string(Word(category))
                                    : absl::StrCat(Word(category), " of ", axis));
    }
  }
  std::set<Category::Value> categories;
  std::vector<v1::Suggestion> expected;
  const std::vector<v1::CacheLimitHit> limit_hits = FindCacheLimitHits(capture, frames);
  for (const v1::CacheLimitHit& hit : limit_hits) {
    v1::Suggestion* s = section->add_suggestions();
    s->set_category(Category::CACHE_LIMIT);
    s->set_text(AdviseCacheLimit(hit));
    s->set_evidence(hit.evidence());
  }
  for (const v1::CacheLimitHit& hit : limit_hits) *section->add_cache_limit_hits() = hit;
  const bool several_frames = recompiling.size() > 1;
  // Every dimension of one input that keeps changing size gets one suggestion naming them all
  // (`mark_dynamic(idx, 0)` and `mark_dynamic(idx, 1)`), at the place of its largest cluster.
  const auto size_group = [](const Cluster& c) {
    return std::make_pair(c.frame_id, c.example.variable);
  };
  std::map<std::pair<uint32_t, std::string>, std::vector<const Cluster*>> size_clusters;
  for (const Cluster& c : clusters) {
    if (c.category == Category::SIZE && c.example.rule == "size" && !c.example.dim.empty()) {
      size_clusters[size_group(c)].push_back(&c);
    }
  }
  // Likewise the global states one frame recompiled on: one suggestion, each with its setter.
  std::map<uint32_t, std::vector<const Cluster*>> state_clusters;
  for (const Cluster& c : clusters) {
    if (c.category == Category::GLOBAL_STATE && c.example.rule == "global_state" &&
        c.failed.empty() && !Advise(c, frames[c.frame_id]).expected)  // not a grad-mode flip
      state_clusters[c.frame_id].push_back(&c);
  }
  for (const Cluster& c : clusters) {
    const FrameStats& frame = frames[c.frame_id];
    categories.insert(c.category);
    v1::RecompileCluster* rc = section->add_clusters();
    rc->set_category(c.category);
    rc->set_count(c.count);
    rc->set_variable(c.example.variable);
    rc->set_axis(c.axis);
    for (const std::string& t : c.transitions) rc->add_transitions(t);
    for (const std::string& v : c.guarded_values) rc->add_guarded_values(v);
    rc->set_frame(frame.name);
    if (!frame.file.empty())
      *rc->mutable_location() = MakeLocation(capture.session(), frame.file, frame.line);

    Advice advice = Advise(c, frame);
    if (!c.failed.empty()) {
      // A recompile torch could not compile is no expected one: those calls did not run compiled,
      // and the failure (often the same call failing eagerly: the new value does not fit the code)
      // comes first.
      const std::string failure = absl::StrCat(
          c.failed.size() == c.count
              ? "torch's recompile for it failed"
              : absl::StrCat(c.failed.size(), " of these ", c.count, " recompiles failed"),
          " (", c.failed.front(),
          "; see Failures), so those calls did not run compiled: read the failure first — a "
          "new value the code cannot take (a shape or type bug in the caller) is no "
          "recompile to tune.");
      // What it changed from: the transitions, else the values the guards held ("== 0.5").
      const std::string values =
          !c.transitions.empty() ? absl::StrCat(" (", absl::StrJoin(c.transitions, ", "), ")")
          : !c.guarded_values.empty()
              ? absl::StrCat(" (from ", absl::StrJoin(c.guarded_values, ", "), ")")
              : "";
      advice.text = advice.expected
                        ? absl::StrCat("`", c.axis, "` changed", values, " and ", failure)
                        : absl::StrCat(failure, " Otherwise: ", advice.text);
      advice.expected = false;
    }
    rc->set_expected(advice.expected);
    v1::Suggestion s;
    s.set_text(advice.text);
    s.set_evidence(Evidence(c, frame, several_frames));
    s.set_category(c.category);
    s.set_expected(advice.expected);
    if (auto group = size_clusters.find(size_group(c));
        !advice.expected && c.category == Category::SIZE && group != size_clusters.end() &&
        group->second.size() > 1) {
      if (group->second.front() != &c) continue;  // said with the group's first cluster
      std::vector<const Cluster*> dims;
      std::vector<std::string> evidence;
      for (const Cluster* member : group->second) {
        dims.push_back(member);
        evidence.push_back(Evidence(*member, frame, several_frames));
      }
      s.set_text(AdviseSizes(dims));
      s.set_evidence(absl::StrJoin(evidence, "; "));
    }
    if (auto group = state_clusters.find(c.frame_id);
        !advice.expected && c.category == Category::GLOBAL_STATE && group != state_clusters.end() &&
        group->second.size() > 1 &&
        std::find(group->second.begin(), group->second.end(), &c) != group->second.end()) {
      if (group->second.front() != &c) continue;  // said with the frame's first state
      std::vector<std::string> evidence;
      for (const Cluster* member : group->second)
        evidence.push_back(Evidence(*member, frame, several_frames));
      s.set_text(AdviseGlobalStates(group->second));
      s.set_evidence(absl::StrJoin(evidence, "; "));
    }
    if (advice.expected) {
      expected.push_back(std::move(s));
    } else {
      *section->add_suggestions() = std::move(s);
    }
  }
  for (v1::Suggestion& s : expected) *section->add_suggestions() = std::move(s);
  section->set_categories(static_cast<uint32_t>(categories.size()));

  absl::StatusOr<std::vector<v1::GraphBreakSummary>> breaks = SummarizeGraphBreaks(in);
  if (!breaks.ok()) return breaks.status();
  for (v1::GraphBreakSummary& gb : *breaks) *section->add_graph_breaks() = std::move(gb);

  // Unrecognised text is reported, never silently dropped.
  if (unrecognised > 0) {
    v1::Diagnostic* d = out->add_diagnostics();
    d->set_severity(v1::Diagnostic::WARNING);
    d->set_where("pass recompile");
    d->set_message(absl::StrCat(FormatCount(unrecognised, "recompile reason", "recompile reasons"),
                                " not recognised (category "
                                "\"other\"); first: ",
                                ClipUtf8(first_unrecognised, 200)));
  }
  return absl::OkStatus();
}

}  // namespace cl

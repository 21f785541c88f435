#include "analyzers/runtime/cache_stability.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analyzers/recompile/guard_sources.h"
#include "common/number_format.h"

namespace cl {
namespace {

using StateMap = google::protobuf::Map<std::string, std::string>;
using Verdict = v1::CacheStabilityFinding::Verdict;

constexpr absl::string_view kMissing = "—";

// Keys that change every step by design: not staleness, only context.
bool IsNoisy(absl::string_view key) {
  return absl::StartsWith(key, "rng.") || absl::EndsWith(key, "._version") ||
         absl::EndsWith(key, ".step") || absl::StrContains(key, "step_count");
}

struct Change {
  std::string key;
  const std::string* before = nullptr;  // null: the key is absent on that side
  const std::string* after = nullptr;
};

// The non-noisy keys whose value differs between `before` and `after`, sorted; the noisy ones that
// differ go to `noisy`.
std::vector<Change> Diff(const StateMap& before, const StateMap& after,
                         std::set<std::string>* noisy) {
  std::vector<Change> changed;
  const auto consider = [&](const std::string& key, const std::string* bv, const std::string* av) {
    if (bv != nullptr && av != nullptr && *bv == *av) return;
    if (IsNoisy(key)) {
      noisy->insert(key);
      return;
    }
    changed.push_back({key, bv, av});
  };
  // Most keys hold still between iterations: look each up on the other side, and copy and sort
  // only the few that changed.
  for (const auto& [key, value] : before) {
    auto a = after.find(key);
    consider(key, &value, a == after.end() ? nullptr : &a->second);
  }
  for (const auto& [key, value] : after) {
    if (before.find(key) == before.end()) consider(key, nullptr, &value);
  }
  std::sort(changed.begin(), changed.end(),
            [](const Change& a, const Change& b) { return a.key < b.key; });
  return changed;
}

// A finding being built: its first iteration, and how many later ones repeat it.
struct Pending {
  v1::CacheStabilityFinding finding;
  int later = 0;
};

class Findings {
 public:
  void Add(uint32_t frame_id, const std::string& frame, const v1::Iteration& it,
           const Change& change, size_t changed, Verdict verdict, const std::string& evidence) {
    const auto id =
        std::make_tuple(frame_id, it.compile_id(), change.key, static_cast<int>(verdict));
    auto [slot, inserted] = index_.try_emplace(id, pending_.size());
    if (!inserted) {
      ++pending_[slot->second].later;
      return;
    }
    Pending& p = pending_.emplace_back();
    v1::CacheStabilityFinding& f = p.finding;
    f.set_state_key(change.key);
    f.set_iteration(it.index());
    f.set_compile_id(it.compile_id());
    f.set_verdict(verdict);
    if (change.before != nullptr) f.set_before(*change.before);
    if (change.after != nullptr) f.set_after(*change.after);
    f.set_confidence(1.0 / static_cast<double>(changed));
    f.set_frame(frame);
    f.set_evidence(evidence);
  }

  // STALE first, then by iteration; within those, in the order found.
  void MoveTo(v1::CacheStabilitySection* section) {
    std::stable_sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
      const bool a_stale = a.finding.verdict() == v1::CacheStabilityFinding::STALE;
      const bool b_stale = b.finding.verdict() == v1::CacheStabilityFinding::STALE;
      if (a_stale != b_stale) return a_stale;
      return a.finding.iteration() < b.finding.iteration();
    });
    for (Pending& p : pending_) {
      if (p.later > 0) {
        absl::StrAppend(p.finding.mutable_evidence(), "; also at ",
                        FormatCount(p.later, "later iteration", "later iterations"));
      }
      *section->add_findings() = std::move(p.finding);
    }
  }

 private:
  std::map<std::tuple<uint32_t, std::string, std::string, int>, size_t> index_;
  std::vector<Pending> pending_;
};

std::string Transition(const Change& change) {
  return absl::StrCat(change.key, ": ", change.before ? *change.before : kMissing, " → ",
                      change.after ? *change.after : kMissing, "; no recompile");
}

// The baseline of each cache entry among one frame's iterations (in index order).
absl::flat_hash_map<std::string, const v1::Iteration*> Baselines(
    const std::vector<const v1::Iteration*>& frame) {
  absl::flat_hash_map<std::string, const v1::Iteration*> out;
  for (const v1::Iteration* it : frame) {
    if (it->recompiled() && !it->compile_id().empty()) out.try_emplace(it->compile_id(), it);
  }
  for (const v1::Iteration* it : frame) {
    if (!it->compile_id().empty()) out.try_emplace(it->compile_id(), it);
  }
  return out;
}

}  // namespace

absl::Status CacheStabilityPass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  const v1::SessionCapture& capture = in.head;
  v1::CacheStabilitySection* section = out->mutable_cache_stability();
  if (capture.iterations().empty()) {
    section->set_status(v1::SKIPPED);
    section->set_reason("no iterations tracked (wrap the compiled model with compile_lens.track)");
    return absl::OkStatus();
  }
  absl::flat_hash_map<uint32_t, const v1::Frame*> frames_by_id;
  for (const v1::Frame& f : capture.frames()) frames_by_id.try_emplace(f.id(), &f);
  absl::flat_hash_map<std::string, const v1::Compile*> compiles;
  for (const v1::Compile& c : capture.compiles()) compiles.try_emplace(c.id(), &c);

  std::map<uint32_t, std::vector<const v1::Iteration*>> frames;
  uint32_t eager_checks = 0;
  for (const v1::Iteration& it : capture.iterations()) {
    frames[it.frame_id()].push_back(&it);
    if (it.has_output_diverged()) ++eager_checks;
  }

  std::set<std::string> noisy;
  uint32_t benign = 0;
  Findings findings;
  for (auto& [frame_id, iterations] : frames) {
    if (in.Cancelled()) return absl::CancelledError("cache_stability pass cancelled");
    std::stable_sort(
        iterations.begin(), iterations.end(),
        [](const v1::Iteration* a, const v1::Iteration* b) { return a->index() < b->index(); });
    auto found = frames_by_id.find(frame_id);
    const std::string frame = found == frames_by_id.end() ? "" : found->second->name();
    const auto baselines = Baselines(iterations);
    const v1::Iteration* previous = nullptr;
    for (const v1::Iteration* it : iterations) {
      const v1::Iteration* prev = previous;
      previous = it;
      if (it->recompiled()) {
        if (prev != nullptr)
          benign += static_cast<uint32_t>(Diff(prev->state(), it->state(), &noisy).size());
        continue;
      }
      auto base_it = baselines.find(it->compile_id());
      if (it->compile_id().empty() || base_it == baselines.end() || base_it->second == it) continue;
      const v1::Iteration& base = *base_it->second;
      const std::vector<Change> changed = Diff(base.state(), it->state(), &noisy);
      if (changed.empty()) continue;

      const bool diverged_now = it->has_output_diverged() && it->output_diverged();
      const bool diverged_then = base.has_output_diverged() && base.output_diverged();
      if (diverged_now && !diverged_then) {
        std::string diverged = "output diverged from eager";
        if (it->has_output_max_abs_diff())
          absl::StrAppend(&diverged, " by ", FormatScientific(it->output_max_abs_diff()));
        absl::StrAppend(&diverged, " (entry ", it->compile_id(),
                        base.has_output_diverged() ? " matched eager when compiled)"
                                                   : " had no eager check when compiled)");
        for (const Change& change : changed) {
          findings.Add(frame_id, frame, *it, change, changed.size(),
                       v1::CacheStabilityFinding::STALE,
                       absl::StrCat(Transition(change), "; ", diverged));
        }
        continue;
      }
      if (it->has_output_diverged()) continue;  // the eager check passed: the change did not matter
      auto compile = compiles.find(it->compile_id());
      if (compile == compiles.end()) continue;
      auto compile_frame = frames_by_id.find(compile->second->frame_id());
      const GuardedKeys guarded(
          compile_frame == frames_by_id.end() ? nullptr : compile_frame->second, *compile->second);
      if (!guarded.known()) continue;
      for (const Change& change : changed) {
        if (guarded.Guards(change.key)) continue;
        findings.Add(frame_id, frame, *it, change, changed.size(),
                     v1::CacheStabilityFinding::SUSPICIOUS,
                     absl::StrCat(Transition(change), "; no guard of entry ", it->compile_id(),
                                  " reads it, and no eager check ran"));
      }
    }
  }

  section->set_status(v1::OK);
  section->set_iterations(static_cast<uint32_t>(capture.iterations_size()));
  section->set_eager_checks(eager_checks);
  section->set_benign_changes(benign);
  for (const std::string& key : noisy) section->add_noisy_keys(key);
  findings.MoveTo(section);
  return absl::OkStatus();
}

}  // namespace cl

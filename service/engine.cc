#include "service/engine.h"

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/blocking_counter.h"
#include "analyzers/health/gates.h"
#include "analyzers/health/health.h"
#include "analyzers/registry.h"
#include "common/number_format.h"
#include "common/proto_utf8.h"
#include "common/status_macros.h"
#include "compile_lens/v1/report_code.h"
#include "service/summary.h"

namespace cl {
namespace {

// The report section a pass fills, by the name its Section() gives; null for none.
const ReportSection* FindSection(absl::string_view name) {
  for (const ReportSection& section : kReportSections) {
    if (section.name == name) return &section;
  }
  return nullptr;
}

struct PassRun {
  absl::Status status;
  v1::AnalysisReport report;
  double seconds = 0;
};

PassRun RunPass(const Pass& pass, const PassInput& input) {
  PassRun run;
  const auto start = std::chrono::steady_clock::now();
  try {
    run.status = pass.Run(input, &run.report);
  } catch (const std::exception& e) {
    run.status = absl::InternalError(absl::StrCat("the pass threw: ", e.what()));
  } catch (...) {
    run.status = absl::InternalError("the pass threw a non-standard exception");
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

// The state a fan-out shares with the pool helpers it schedules. Helpers hold it by shared_ptr: one
// that starts after the analysis is over finds no pass left and touches nothing else.
struct FanOut {
  explicit FanOut(size_t n) : runs(n), done(static_cast<int>(n)) {}
  std::atomic<size_t> next{0};
  std::vector<PassRun> runs;
  absl::BlockingCounter done;
};

// One pass over one side: the head, or the base as a head of its own (for the health table's
// base column).
struct Job {
  const Pass* pass;
  const PassInput* input;
};

void Work(FanOut& fan, const std::vector<Job>& jobs) {
  for (size_t i; (i = fan.next.fetch_add(1)) < jobs.size();) {
    fan.runs[i] = RunPass(*jobs[i].pass, *jobs[i].input);
    fan.done.DecrementCount();
  }
}

bool ReadByHealth(const Pass& pass) {
  for (absl::string_view section : HealthSections())
    if (pass.Section() == section) return true;
  return false;
}

}  // namespace

Engine::Engine(ThreadPool* pool) : Engine(pool, RegisteredPasses()) {}

Engine::Engine(ThreadPool* pool, std::vector<const Pass*> passes)
    : pool_(pool), passes_(std::move(passes)) {}

absl::StatusOr<EngineResult> Engine::Analyze(const v1::SessionCapture& head,
                                             const v1::SessionCapture* base,
                                             const v1::AnalyzeOptions& options,
                                             const std::atomic<bool>* cancelled,
                                             const LoweredFacts* head_lowered) const {
  // Select the passes, in registry order.
  std::vector<const Pass*> selected;
  if (options.passes().empty()) {
    selected = passes_;
  } else {
    absl::flat_hash_set<std::string> wanted(options.passes().begin(), options.passes().end());
    for (const std::string& name : wanted) {
      bool known = false;
      for (const Pass* p : passes_) known = known || p->Name() == name;
      if (!known) {
        std::vector<std::string> names;
        for (const Pass* p : passes_) names.emplace_back(p->Name());
        return absl::InvalidArgumentError(absl::StrCat(
            "unknown pass \"", name, "\"; the passes are: ", absl::StrJoin(names, ", ")));
      }
    }
    for (const Pass* p : passes_) {
      if (wanted.contains(std::string(p->Name()))) selected.push_back(p);
    }
  }

  CL_ASSIGN_OR_RETURN(const PassOptions pass_options,
                      PrepareOptions(passes_, options, pass_defaults_));
  if (absl::Status s = ValidateGates(options.gates()); !s.ok()) return s;
  // Held by shared_ptr with the jobs: a helper that starts late reads them, never this frame.
  struct Inputs {
    PassInput head, base;
  };
  auto inputs = std::make_shared<const Inputs>(
      Inputs{{head, base, pass_options, cancelled, head_lowered},
             {base != nullptr ? *base : head, nullptr, pass_options, cancelled}});
  auto jobs = std::make_shared<std::vector<Job>>();
  for (const Pass* p : selected) jobs->push_back({p, &inputs->head});
  // With a base, the passes the health table reads run on it too, for the table's base column.
  if (base != nullptr) {
    for (const Pass* p : selected)
      if (ReadByHealth(*p)) jobs->push_back({p, &inputs->base});
  }

  auto fan = std::make_shared<FanOut>(jobs->size());
  // One helper per job beyond the first, while pool threads are idle; the calling thread takes
  // its share. Under load no thread is idle and each analysis runs its passes itself: helpers never
  // take the queue slots that admit new calls.
  for (size_t i = 1; pool_ != nullptr && i < jobs->size(); ++i) {
    if (!pool_->TryScheduleIfIdle([fan, jobs, inputs] { Work(*fan, *jobs); })) break;
  }
  Work(*fan, *jobs);
  fan->done.Wait();
  // Cancelled only if a pass gave up for it: a cancellation that came after every pass had finished
  // leaves a whole report, which the server keeps for the retry that will follow.
  for (const PassRun& run : fan->runs) {
    if (absl::IsCancelled(run.status)) return absl::CancelledError("the analysis was cancelled");
  }

  EngineResult result;
  v1::AnalysisReport& report = result.report;
  FillMetadata(head, base, &report);
  FillRaw(head, &report);
  *report.mutable_diagnostics() = head.diagnostics();

  absl::flat_hash_set<const ReportSection*> filled;
  for (size_t i = 0; i < selected.size(); ++i) {  // the head's runs come first
    const Pass& pass = *selected[i];
    PassRun& run = fan->runs[i];
    v1::PassTiming* timing = &result.timings.emplace_back();
    timing->set_pass(std::string(pass.Name()));
    timing->set_seconds(run.seconds);

    const ReportSection* section = FindSection(pass.Section());
    if (section == nullptr) {
      return absl::InternalError(
          absl::StrCat("pass ", pass.Name(), " names no report section \"", pass.Section(), "\""));
    }
    filled.insert(section);
    if (!run.status.ok()) {
      section->set_status(&report, v1::ERROR, run.status.message());
      v1::Diagnostic* d = report.add_diagnostics();
      d->set_severity(v1::Diagnostic::ERROR);
      d->set_where(absl::StrCat("pass ", pass.Name()));
      d->set_message(std::string(run.status.message()));
      continue;
    }
    section->copy(run.report, &report);
    if (section->status(report) == v1::SECTION_STATUS_UNSPECIFIED)
      section->set_status(&report, v1::OK, "");
    for (v1::Diagnostic& d : *run.report.mutable_diagnostics())
      *report.add_diagnostics() = std::move(d);
  }

  // Sections that no selected pass filled say why.
  for (const ReportSection& section : kReportSections) {
    if (filled.contains(&section)) continue;
    bool registered = false;
    for (const Pass* p : passes_) registered = registered || p->Section() == section.name;
    section.set_status(
        &report, v1::SKIPPED,
        registered ? "pass not selected (--passes)" : "no pass for this section in this build yet");
  }
  // The health table, from the head's sections and, with a base, the base's (its runs follow the
  // head's in `jobs`; their diagnostics are about the base and are not the report's).
  v1::AnalysisReport base_report;
  if (base != nullptr) {
    FillRaw(*base, &base_report);
    for (size_t i = selected.size(); i < jobs->size(); ++i) {
      const PassRun& run = fan->runs[i];
      if (!run.status.ok()) continue;  // the section stays unset: the row says the base lacks it
      FindSection((*jobs)[i].pass->Section())->copy(run.report, &base_report);
    }
  }
  const HealthSide head_side{head, report};
  const std::optional<HealthSide> base_side =
      base != nullptr ? std::optional<HealthSide>(HealthSide{*base, base_report}) : std::nullopt;
  *report.mutable_health() = Health(head_side, base_side ? &*base_side : nullptr);
  if (HasGates(options.gates())) ApplyGates(options.gates(), base != nullptr, &report);
  FillVerdict(&report);
  const int clipped = RewriteReportStrings(report, [](const std::string& value, bool map_key) {
    return map_key ? std::nullopt : ClippedString(value, kMaxReportStringBytes);
  });
  if (clipped > 0) {
    v1::Diagnostic* d = report.add_diagnostics();
    d->set_severity(v1::Diagnostic::INFO);
    d->set_where("report");
    d->set_message(absl::StrCat(clipped, " string(s) longer than ",
                                FormatBytes(kMaxReportStringBytes),
                                " are clipped here (each says its full length)"));
  }
  return result;
}

}  // namespace cl

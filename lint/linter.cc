#include "lint/linter.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "lint/catalogue.h"
#include "lint/detectors.h"
#include "lint/module_index.h"
#include "lint/resolver.h"
#include "lint/suppressions.h"
#include "lint/torch_version.h"

namespace cl::lint {
namespace {

// The patterns to run: the built-in catalogue with the DB's version of each pattern it rates,
// then the DB's own patterns.
std::vector<const PatternSpec*> PatternsToRun(const CorrectnessDb* db) {
  std::vector<const PatternSpec*> out;
  for (const PatternSpec& p : BuiltinPatterns()) {
    const PatternSpec* rated = db == nullptr ? nullptr : db->Find(p.id);
    out.push_back(rated != nullptr ? rated : &p);
  }
  if (db != nullptr) {
    for (const PatternSpec& p : db->patterns()) {
      if (FindBuiltinPattern(p.id) == nullptr) out.push_back(&p);
    }
  }
  return out;
}

std::string Message(const PatternSpec& spec, const RawFinding& raw) {
  std::string message = absl::StrReplaceAll(
      spec.message, {{"{name}", raw.name}, {"{base}", raw.base}, {"{op}", raw.op}});
  if (!raw.detail.empty()) absl::StrAppend(&message, "; ", raw.detail);
  return message;
}

bool RuleMatches(const SeverityRule& rule, const RawFinding& raw,
                 const std::optional<TorchVersion>& version) {
  if (!rule.producer_in.empty() && !rule.producer_in.Matches(raw.producer)) return false;
  if (!rule.form_in.empty() && !rule.form_in.Matches(raw.form)) return false;
  if (rule.in_loop && *rule.in_loop != raw.in_loop) return false;
  if (!rule.torch.empty()) {
    std::string error;
    const std::optional<VersionSpecifier> spec = VersionSpecifier::Parse(rule.torch, &error);
    if (!version || !spec || !spec->Contains(*version)) return false;
  }
  return true;
}

// Severity, links and notes from the DB entry.
void Rate(const PatternSpec& spec, const RawFinding& raw, const std::string& torch,
          const std::optional<TorchVersion>& version, Finding& f) {
  Severity severity = spec.severity;
  for (const SeverityRule& rule : spec.rules) {
    if (RuleMatches(rule, raw, version)) {
      severity = rule.severity;
      break;
    }
  }
  std::vector<std::string> notes;
  if (raw.assumed) {
    severity = Lower(severity);
    notes.push_back(
        "no compiled root reaches this file: scanned as if compiled, severity lowered one step");
  }
  if (version) {
    std::string error;
    if (!spec.fixed_in.empty()) {
      if (const std::optional<TorchVersion> fixed = TorchVersion::Parse(spec.fixed_in);
          fixed && Compare(*version, *fixed) >= 0 && severity != Severity::kInfo) {
        severity = Severity::kInfo;
        notes.push_back(absl::StrCat("fixed in torch ", spec.fixed_in, " (the capture ran ", torch,
                                     "): downgraded to info"));
      }
    }
    if (severity != Severity::kInfo && !spec.affected_versions.empty()) {
      if (const std::optional<VersionSpecifier> affected =
              VersionSpecifier::Parse(spec.affected_versions, &error);
          affected && !affected->Contains(*version)) {
        severity = Severity::kInfo;
        notes.push_back(absl::StrCat("torch ", torch, " is outside the affected versions (",
                                     spec.affected_versions, "): downgraded to info"));
      }
    }
  } else if (!spec.fixed_in.empty() || !spec.affected_versions.empty()) {
    notes.push_back(torch.empty() ? "the capture names no torch version: not version-gated"
                                  : absl::StrCat("torch version \"", torch,
                                                 "\" not understood: not version-gated"));
  }
  f.severity = severity;
  f.title = spec.title;
  f.category = spec.category;
  f.confidence = spec.confidence;
  for (const IssueLink& link : spec.issues) f.links.push_back(link.url);
  for (const std::string& n : notes) {
    if (!f.version_note.empty()) f.version_note += "; ";
    f.version_note += n;
  }
}

}  // namespace

LintResult Lint(const std::vector<LintSource>& sources, const LintOptions& options) {
  LintResult result;
  auto cancelled = [&] {
    return options.cancelled != nullptr && options.cancelled->load(std::memory_order_relaxed);
  };

  // Parse and index each file (or take it from the cache). Parsed files own the text the indexes
  // point into.
  std::vector<std::shared_ptr<const ParsedFile>> parsed;
  std::vector<const ModuleIndex*> files;
  PythonParser parser;
  uint64_t total_bytes = 0;
  for (const LintSource& source : sources) {
    if (cancelled()) {
      result.cancelled = true;
      return result;
    }
    if (source.text.size() <= options.limits.max_bytes) total_bytes += source.text.size();
    if (total_bytes > options.max_total_bytes) {
      result.diagnostics.push_back(
          {source.path, 0,
           absl::StrCat("not scanned: the session's sources are over the ", options.max_total_bytes,
                        "-byte limit for one scan")});
      continue;
    }
    std::shared_ptr<const ParsedFile> p =
        options.cache != nullptr
            ? options.cache->Get(parser, source.path, source.text, options.limits)
            : ParseFile(parser, source.path, source.text, options.limits);
    ++result.files;
    result.lines += p->parsed.lines;
    for (const SourceDiagnostic& d : p->parsed.diagnostics)
      result.diagnostics.push_back({source.path, d.line, d.message});
    if (!p->index) continue;
    files.push_back(&*p->index);
    parsed.push_back(std::move(p));
  }
  if (cancelled()) {
    result.cancelled = true;
    return result;
  }

  const CompiledRegion region = CompiledRegion::Compute(files, options.frames);
  const Resolver resolver(files);
  for (const RegionRoot& root : region.roots()) {
    const FunctionInfo& fn = files[root.file]->functions()[root.function];
    result.roots.push_back({files[root.file]->path(), fn.first_line, fn.qualname, root.why});
  }
  for (size_t f = 0; f < files.size(); ++f) {
    if (region.Assumed(static_cast<int>(f)) && !files[f]->functions().empty()) {
      result.assumed_files.push_back(files[f]->path());
    }
  }

  std::vector<Suppressions> suppressions;
  for (const auto& p : parsed) suppressions.push_back(Suppressions::Scan(p->parsed.tree.source()));

  const std::optional<TorchVersion> version = TorchVersion::Parse(options.torch_version);
  const DetectInput input{files, region, resolver};
  absl::flat_hash_set<std::tuple<std::string, int, uint32_t>>
      seen;  // one finding per pattern and line
  std::vector<RawFinding> raw;
  for (const PatternSpec* spec : PatternsToRun(options.db)) {
    if (cancelled()) {
      result.cancelled = true;
      return result;
    }
    raw.clear();
    DetectorFor(spec->kind)(input, *spec, &raw);
    for (const RawFinding& r : raw) {
      const ModuleIndex& m = *files[r.file];
      const uint32_t line = m.tree().line(r.node);
      if (!seen.insert({spec->id, r.file, line}).second) continue;
      if (suppressions[r.file].Suppressed(spec->id, line)) {
        ++result.suppressed;
        continue;
      }
      Finding f;
      f.pattern = spec->id;
      f.file = m.path();
      f.line = line;
      f.snippet = m.tree().Snippet(r.node);
      f.message = Message(*spec, r);
      f.function = r.function >= 0 ? m.functions()[r.function].qualname : "";
      f.form = r.form;
      f.assumed_compiled = r.assumed;
      f.remedy = spec->remedy;
      if (spec->rated) Rate(*spec, r, options.torch_version, version, f);
      result.findings.push_back(std::move(f));
    }
  }
  std::stable_sort(
      result.findings.begin(), result.findings.end(), [](const Finding& a, const Finding& b) {
        return std::tie(a.file, a.line, a.pattern) < std::tie(b.file, b.line, b.pattern);
      });
  return result;
}

}  // namespace cl::lint

// Cache stability: compiled artifacts that silently went stale (state changed, no recompile
// followed, and the output diverged from eager), and state changes nothing would have noticed
// (no guard reads the state, no eager check ran). Below the verdict, what was tracked and the
// keys left out as noise, for context.
#include "absl/strings/str_cat.h"
#include "common/number_format.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {
namespace {

bool IsSuspicious(const v1::CacheStabilityFinding& finding) {
  return finding.verdict() == v1::CacheStabilityFinding::SUSPICIOUS;
}

// "12 iterations tracked, 4 with an eager check; 2 state changes followed by a recompile
// (see the recompile summary)." Written only for a capture that tracked iterations.
void WriteTracked(const v1::CacheStabilitySection& section, HtmlWriter& w) {
  if (section.iterations() == 0) return;
  w.Tag("<p class=\"muted\">")
      .Text(absl::StrCat(FormatCount(section.iterations(), "iteration", "iterations"), " tracked, ",
                         section.eager_checks(), " with an eager check; ",
                         FormatCount(section.benign_changes(), "state change", "state changes"),
                         " followed by a recompile"))
      .Tag(" (see the recompile summary).</p>\n");
}

void WriteNoisyKeys(const v1::CacheStabilitySection& section, HtmlWriter& w) {
  if (section.noisy_keys().empty()) return;
  w.Tag("<p class=\"muted\">Changed as expected, left out of the comparison: ");
  for (int i = 0; i < section.noisy_keys_size(); ++i) {
    if (i > 0) w.Tag(", ");
    w.Tag("<code>").Text(section.noisy_keys(i)).Tag("</code>");
  }
  w.Tag(" (RNG state, <code>_version</code> counters, step counts).</p>\n");
}

}  // namespace

void WriteCacheStabilityBody(const v1::CacheStabilitySection& section, HtmlWriter& w) {
  const auto& findings = section.findings();
  if (findings.empty()) {
    w.Tag(
        "<p class=\"good\">No silently-stale-cache findings — recompilation tracked the state "
        "changes.</p>");
    WriteTracked(section, w);
    WriteNoisyKeys(section, w);
    return;
  }
  int suspicious = 0;
  for (const v1::CacheStabilityFinding& finding : findings) suspicious += IsSuspicious(finding);
  const int stale = findings.size() - suspicious;
  if (stale > 0) {
    w.Tag("<p class=\"warn\"><strong>")
        .Text(absl::StrCat(stale))
        .Tag("</strong> silently-stale-cache ")
        .Text(Noun(stale, "finding", "findings"))
        .Tag(
            ": the state changed between iterations, no "
            "recompile followed, and the output diverged from eager.</p>\n");
  }
  if (suspicious > 0) {
    w.Tag("<p class=\"warn\"><strong>")
        .Text(absl::StrCat(suspicious))
        .Tag("</strong> suspicious state ")
        .Text(Noun(suspicious, "change", "changes"))
        .Tag(
            ": no recompile followed, no guard of the cache "
            "entry that ran reads the state, and no eager check ran to tell whether the output "
            "changed.</p>\n");
  }
  w.BeginTable(
      {"verdict", "state", "before → after", "iteration", "cache entry that ran", "evidence"});
  for (int i = 0; i < ShownRows(findings.size()); ++i) {
    const v1::CacheStabilityFinding& finding = findings[i];
    if (IsSuspicious(finding))
      w.Tag("<tr><td>suspicious");
    else
      w.Tag("<tr><td>stale");
    w.Tag("</td><td><code>").Text(OrDash(finding.state_key())).Tag("</code></td><td>");
    w.Text(OrDash(finding.before())).Tag(" → ").Text(OrDash(finding.after())).Tag("</td><td>");
    w.Text(absl::StrCat(finding.iteration())).Tag("</td><td><code>");
    w.Text(OrDash(finding.compile_id())).Tag("</code></td><td>").Text(OrDash(finding.evidence()));
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(findings.size(), w);
  WriteTracked(section, w);
}

}  // namespace cl

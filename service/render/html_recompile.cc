// Recompile summary: how often and why dynamo recompiled, the observed guard transitions, what
// to change, and the related cache-size-limit hits and graph breaks.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/number_format.h"
#include "proto/report_words.h"
#include "service/render/health_format.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"
#include "service/render/location_format.h"
#include "service/render/recompile_format.h"

namespace cl {
namespace {

void WriteHeadline(const v1::RecompileSection& section, HtmlWriter& w) {
  if (section.total() == 0) {
    w.Tag("<p class=\"good\">No recompilations.</p>");
    return;
  }
  w.Tag("<p><strong>")
      .Text(absl::StrCat(section.total()))
      .Tag("</strong> ")
      .Text(Noun(section.total(), "recompilation", "recompilations"))
      .Tag(", across <strong>")
      .Text(absl::StrCat(section.categories()))
      .Tag("</strong> guard ")
      .Text(Noun(section.categories(), "category", "categories"))
      .Tag(".</p>");
  if (const uint32_t expected = ExpectedRecompiles(section); expected > 0) {
    w.Tag("<p class=\"muted\">")
        .Text(expected == section.total()
                  ? (expected == 1 ? "It is" : "All are")
                  : absl::StrCat(expected, " of them ", expected == 1 ? "is" : "are"))
        // Not only automatic dynamic: another module through torch's wrapper, a no_grad
        // evaluation's graph, a decode step's size 1 are expected too; their suggestions say which.
        .Text(
            " expected: torch's normal behaviour for what changed (an input made dynamic, "
            "another module through torch's wrapper, a second grad mode; the suggestions below "
            "say which), and the next calls reuse those graphs.")
        .Tag("</p>");
  }
  const v1::RecompileFrame& frame = section.frame();
  const bool has_location = HasLocation(frame.location());
  if (frame.name().empty() && !has_location) return;
  if (section.frames().size() > 1) {
    // Not one frame's: say how many, and which recompiled most.
    w.Tag("<p class=\"muted\">Recompiling ")
        .Text(FormatCount(section.frames().size(), "frame", "frames"))
        .Tag("; most: <code>")
        .Text(OrDash(frame.name()))
        .Tag("</code> (")
        .Text(absl::StrCat(frame.recompiles()))
        .Tag(")");
    if (has_location) {
      w.Tag(" at ");
      WriteCodeLocation(frame.location(), w);
    }
    w.Tag(".</p>");
    return;
  }
  w.Tag("<p class=\"muted\">Recompiling <code>").Text(OrDash(frame.name())).Tag("</code>");
  if (has_location) {
    w.Tag(" at ");
    WriteCodeLocation(frame.location(), w);
  }
  w.Tag(".</p>");
}

void WriteClusters(const v1::RecompileSection& section, HtmlWriter& w) {
  if (section.clusters().empty()) return;
  // With several frames each row says whose it is: two frames' `k` rows are not duplicates.
  const bool frames = section.frames().size() > 1;
  if (frames) {
    w.BeginTable({"frame", "category", "count", "axis", "observed values"});
  } else {
    w.BeginTable({"category", "count", "axis", "observed values"});
  }
  for (int i = 0; i < ShownRows(section.clusters().size()); ++i) {
    const v1::RecompileCluster& cluster = section.clusters(i);
    // A size or stride guard names its dimension ("x[0]"); any other guard names its variable.
    const std::string& axis = cluster.axis().empty() ? cluster.variable() : cluster.axis();
    w.Tag("<tr><td>");
    if (frames) {
      // Frames share names (every module's `forward`): where each is tells them apart.
      w.Tag("<code>").Text(OrDash(cluster.frame())).Tag("</code>");
      if (HasLocation(cluster.location())) {
        w.Tag(" ");
        WriteCodeLocation(cluster.location(), w);
      }
      w.Tag("</td><td>");
    }
    w.Text(OrDash(Word(cluster.category()))).Tag("</td><td>");
    w.Text(absl::StrCat(cluster.count()));
    if (cluster.expected()) w.Tag(" <span class=\"muted\">(expected)</span>");
    w.Tag("</td><td><code>").Text(OrDash(axis));
    w.Tag("</code></td><td>").Text(OrDash(ObservedValues(cluster)));
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(section.clusters().size(), w);
}

// Only when more than one frame recompiled: the headline already names the single one.
void WriteFrames(const v1::RecompileSection& section, HtmlWriter& w) {
  if (section.frames().size() < 2) return;
  w.Tag("<h3>Frames that recompiled (").Text(absl::StrCat(section.frames().size())).Tag(")</h3>\n");
  w.BeginTable({"frame", "where", "recompiles"});
  for (int i = 0; i < ShownRows(section.frames().size()); ++i) {
    const v1::RecompileFrame& frame = section.frames(i);
    w.Tag("<tr><td><code>").Text(OrDash(frame.name())).Tag("</code></td><td>");
    WriteCodeLocation(frame.location(), w);
    w.Tag("</td><td>").Text(absl::StrCat(frame.recompiles())).Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(section.frames().size(), w);
}

void WriteCacheLimitHits(const v1::RecompileSection& section, HtmlWriter& w) {
  if (section.cache_limit_hits().empty()) return;
  w.Tag("<h3>Cache-size limit hits (")
      .Text(absl::StrCat(section.cache_limit_hits().size()))
      .Tag(")</h3>\n");
  w.BeginTable({"frame", "where", "limit", "value", "evidence"});
  for (int i = 0; i < ShownRows(section.cache_limit_hits().size()); ++i) {
    const v1::CacheLimitHit& hit = section.cache_limit_hits(i);
    w.Tag("<tr><td><code>").Text(OrDash(hit.frame())).Tag("</code></td><td>");
    WriteCodeLocation(hit.location(), w);
    w.Tag("</td><td><code>").Text(OrDash(hit.limit())).Tag("</code></td><td>");
    w.Text(absl::StrCat(hit.value())).Tag("</td><td>").Text(OrDash(hit.evidence()));
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(section.cache_limit_hits().size(), w);
}

void WriteGraphBreaks(const v1::RecompileSection& section, HtmlWriter& w) {
  if (section.graph_breaks().empty()) return;
  w.Tag("<h3>").Text(GraphBreakCount(section)).Tag("</h3>\n");
  w.BeginTable({"reason", "category", "count", "where", "remedy"});
  for (int i = 0; i < ShownRows(section.graph_breaks().size()); ++i) {
    const v1::GraphBreakSummary& brk = section.graph_breaks(i);
    w.Tag("<tr><td class=\"paths\">").Text(OrDash(brk.reason()));
    if (brk.frame_skipped()) w.Tag(" <span class=\"warn\">(the whole frame ran eager)</span>");
    w.Tag("</td><td>").Text(OrDash(Word(brk.category()))).Tag("</td><td>");
    w.Text(absl::StrCat(brk.count())).Tag("</td><td class=\"paths\">");
    if (!brk.frame().empty()) w.Tag("<code>").Text(brk.frame()).Tag("</code> ");
    WriteCodeLocation(brk.location(), w);
    if (!brk.source_line().empty()) w.Tag("<br><code>").Text(brk.source_line()).Tag("</code>");
    w.Tag("</td><td class=\"paths\">").Text(OrDash(brk.remedy())).Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(section.graph_breaks().size(), w);
}

}  // namespace

void WriteRecompileBody(const v1::RecompileSection& section, HtmlWriter& w) {
  WriteHeadline(section, w);
  WriteClusters(section, w);
  WriteFrames(section, w);
  WriteSuggestions(section.suggestions(), w);
  WriteCacheLimitHits(section, w);
  WriteGraphBreaks(section, w);
}

}  // namespace cl

// RenderHtml: the page skeleton (head, CSP, style sheet, header) and the section frames. Each
// section is a <details open> with the seed's id and heading; a pass that was skipped or failed
// shows its reason in place of a body, and the rest of the page still renders.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/number_format.h"
#include "service/render/html.h"
#include "service/render/html_page.h"
#include "service/render/html_sections.h"
#include "service/render/html_writer.h"
#include "service/render/report_css.h"

namespace cl {
namespace {

void WriteHeader(const v1::AnalysisReport& report, HtmlWriter& w) {
  const v1::Metadata& metadata = report.metadata();
  w.Tag("<header>\n<h1>compile-lens session report</h1>\n<p class=\"sub\">torch ");
  w.Text(metadata.torch_version().empty() ? "unknown" : metadata.torch_version());
  if (!metadata.started_at().empty()) w.Tag(" · ").Text(metadata.started_at());
  w.Tag("</p>\n");
  // A failed compile is the first thing to know: the frame ran without torch.compile. A failed
  // torch.export is counted as an export, as the verdict counts it.
  if (const int failed = report.failures().failed_size(); failed > 0) {
    int exports = 0;
    for (const v1::FailedCompile& f : report.failures().failed()) exports += f.exported();
    std::vector<std::string> counts;
    if (failed > exports) counts.push_back(FormatCount(failed - exports, "compile", "compiles"));
    if (exports > 0) counts.push_back(FormatCount(exports, "export", "exports"));
    w.Tag("<p><a class=\"warn\" href=\"#failures\"><strong>")
        .Text(absl::StrCat(absl::StrJoin(counts, " and "), " failed"))
        .Tag("</strong></a></p>\n");
  }
  w.Tag("</header>\n");
}

// A section written by a pass: its body when the pass ran, else why not.
template <typename Section>
void WritePassSection(Markup id, Markup title, const Section& section,
                      void (*write_body)(const Section&, HtmlWriter&), HtmlWriter& w) {
  OpenSection(id, title, w);
  switch (section.status()) {
    case v1::OK:
      write_body(section, w);
      break;
    case v1::SKIPPED:
      if (section.reason().empty()) {
        w.Tag("<p class=\"muted\">Skipped.</p>");
      } else {
        w.Tag("<p class=\"muted\">Skipped: ").Text(section.reason()).Tag("</p>");
      }
      break;
    case v1::ERROR:
      w.Tag("<p class=\"warn\">This pass failed: ").Text(section.reason()).Tag("</p>");
      break;
    default:
      // No status at all: the report came from an engine that did not run this pass.
      w.Tag("<p class=\"muted\">No result: this pass did not run.</p>");
      break;
  }
  CloseSection(w);
}

// What went wrong, most costly first, each a link to its section; a clean session says so. Absent
// from a report without a verdict (an older server's, a report built by hand).
void WriteVerdict(const v1::Verdict& verdict, HtmlWriter& w) {
  if (verdict.items().empty() && !verdict.clean()) return;
  OpenSection("verdict", "Verdict", w);
  if (verdict.clean()) {
    w.Tag(
        "<p class=\"good\">Nothing went wrong that this report can see: no failed compile, no "
        "recompilation, no graph break, no divergence, no stale cache, no lint error.</p>");
  } else {
    w.Tag("<ol>\n");
    for (const v1::VerdictItem& item : verdict.items()) {
      w.Tag("<li><a href=\"#").Text(item.section()).Tag("\">").Text(item.text()).Tag("</a></li>\n");
    }
    w.Tag("</ol>\n");
  }
  CloseSection(w);
}

}  // namespace

void WritePageHead(absl::string_view title, HtmlWriter& w) {
  w.Tag(
       "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
       "'unsafe-inline'\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       "<title>")
      .Text(title)
      .Tag("</title>\n<style>\n")
      .Tag(ReportCss())
      .Tag("</style>\n</head>\n");
}

void OpenSection(Markup id, Markup title, HtmlWriter& w) {
  w.Tag("<details open id=\"").Tag(id).Tag("\">\n<summary><h2>").Tag(title);
  w.Tag("</h2></summary>\n<div class=\"body\">");
}

void OpenFoldedSection(Markup id, Markup title, HtmlWriter& w) {
  w.Tag("<details id=\"").Tag(id).Tag("\">\n<summary><h2>").Tag(title);
  w.Tag("</h2></summary>\n<div class=\"body\">");
}

void CloseSection(HtmlWriter& w) { w.Tag("</div>\n</details>\n"); }

std::string RenderHtml(const v1::AnalysisReport& report) {
  return RenderHtmlWith(report, [](HtmlWriter&) {});
}

std::string RenderHtmlWith(const v1::AnalysisReport& report,
                           absl::FunctionRef<void(HtmlWriter&)> more) {
  HtmlWriter w;
  WritePageHead("compile-lens session report", w);
  w.Tag("<body>\n");
  WriteHeader(report, w);
  w.Tag("<main>\n");

  WriteVerdict(report.verdict(), w);
  OpenSection("metadata", "Session metadata", w);
  WriteMetadataBody(report.metadata(), w);
  CloseSection(w);
  // Not a seed section; absent from an older engine's report.
  if (report.health().status() != v1::SECTION_STATUS_UNSPECIFIED)
    WritePassSection("health", "Compile health", report.health(), &WriteHealthBody, w);
  // Absent from a report made by an engine without the failures pass (an older server), rather
  // than shown as "did not run".
  if (report.failures().status() != v1::SECTION_STATUS_UNSPECIFIED)
    WritePassSection("failures", "Failures", report.failures(), &WriteFailuresBody, w);
  // Not a seed section: it appears only for a multi-rank session (status OK), so a single-rank
  // page (SKIPPED here) stays the seed's page. A failure of the pass still shows, in Diagnostics.
  if (report.ranks().status() == v1::OK) {
    OpenSection("ranks", "Ranks (multi-rank session)", w);
    WriteRanksBody(report.ranks(), w);
    CloseSection(w);
  }
  WritePassSection("ir-diff", "IR Diff (base → head)", report.ir_diff(), &WriteIrDiffBody, w);
  WritePassSection("recompile", "Recompile summary", report.recompile(), &WriteRecompileBody, w);
  // Not a seed section; absent from an older engine's report, as failures is.
  if (report.compile_time().status() != v1::SECTION_STATUS_UNSPECIFIED) {
    WritePassSection("compile-time", "Compile time", report.compile_time(), &WriteCompileTimeBody,
                     w);
  }
  WritePassSection("cache-stability", "Cache stability", report.cache_stability(),
                   &WriteCacheStabilityBody, w);
  WritePassSection("divergence", "Divergence (eager vs compiled)", report.divergence(),
                   &WriteDivergenceBody, w);
  WritePassSection("lint", "Lint (Tool 4)", report.lint(), &WriteLintBody, w);
  WritePassSection("fusion", "Fusion opportunities (CODA)", report.fusion(), &WriteFusionBody, w);
  WritePassSection("roofline", "Roofline (Tool 5)", report.roofline(), &WriteRooflineBody, w);
  more(w);
  OpenSection("raw", "Raw artifacts", w);
  WriteRawBody(report.raw(), w);
  CloseSection(w);
  if (!report.diagnostics().empty()) {
    // Import counts alone are reference material: the section starts folded unless something in
    // it is a warning or an error.
    bool serious = false;
    for (const v1::Diagnostic& d : report.diagnostics()) {
      serious |= d.severity() == v1::Diagnostic::WARNING || d.severity() == v1::Diagnostic::ERROR;
    }
    if (serious) {
      OpenSection("diagnostics", "Diagnostics", w);
    } else {
      OpenFoldedSection("diagnostics", "Diagnostics", w);
    }
    WriteDiagnosticsBody(report.diagnostics(), w);
    CloseSection(w);
  }

  w.Tag("</main>\n</body>\n</html>\n");
  return w.Release();
}

}  // namespace cl

// RenderHtmlSite: the index, then each compile's page and each record of no compile, one page at a
// time into the sink; and the pieces the pages share.
#include "service/render/html_site.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzers/common/frame_skip.h"
#include "common/file_io.h"
#include "common/number_format.h"
#include "service/render/html_page.h"
#include "service/render/html_site_pages.h"

namespace cl {

absl::Status DirectorySink::Write(const std::string& path, absl::string_view content) {
  // The renderer makes its paths of [A-Za-z0-9_.-/]; a path from elsewhere (a server's response)
  // stays inside the folder or is refused.
  const bool safe =
      !path.empty() && path.front() != '/' &&
      std::all_of(path.begin(), path.end(),
                  [](char c) { return absl::ascii_isalnum(c) || absl::StrContains("_.-/", c); }) &&
      !absl::StrContains(absl::StrCat("/", path, "/"), "/../") &&
      !absl::StrContains(absl::StrCat("/", path, "/"), "/./");
  if (!safe) {
    return absl::InvalidArgumentError(
        absl::StrCat("a site file's path is not a plain relative one: \"", absl::CHexEscape(path),
                     "\" (refused)"));
  }
  const std::filesystem::path file = std::filesystem::path(dir_) / path;
  if (!folders_.contains(file.parent_path().string())) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec) {
      return absl::PermissionDeniedError(absl::StrCat(
          file.parent_path().string(), ": cannot create the folder (", ec.message(), ")"));
    }
    folders_.insert(file.parent_path().string());
  }
  if (absl::Status s = WriteFile(file.string(), content); !s.ok()) return s;
  ++files_;
  bytes_ += content.size();
  return absl::OkStatus();
}

absl::string_view OutcomeWord(const v1::Compile& c) {
  switch (c.status()) {
    case v1::Compile::FAILED:
      return "failed";
    case v1::Compile::RESTARTED:
      return "restarted";
    case v1::Compile::EMPTY_GRAPH:
      return "empty graph";
    case v1::Compile::OK:
      if (CompiledNothing(c)) return "skipped";
      for (const v1::CacheEvent& e : c.cache_events()) {
        if (e.cache() == "fx_graph" && e.status() == "hit") return "cache hit";
      }
      return "ok";
    default:
      return "no metrics";
  }
}

Markup OutcomeClass(const v1::Compile& c) {
  const absl::string_view word = OutcomeWord(c);
  if (word == "failed") return "st-failed";
  if (word == "restarted") return "st-restarted";
  if (word == "empty graph") return "st-empty";
  if (word == "skipped") return "st-skipped";
  if (word == "cache hit") return "st-hit";
  if (word == "ok") return "st-ok";
  return "st-missing";
}

std::string CacheOutcome(const v1::Compile& c, absl::string_view cache) {
  // In the order first seen: "miss", "hit, miss", "3 miss, 1 hit" (one per autotuned kernel).
  std::vector<std::pair<absl::string_view, int>> outcomes;
  for (const v1::CacheEvent& e : c.cache_events()) {
    if (e.cache() != cache) continue;
    auto it = std::find_if(outcomes.begin(), outcomes.end(),
                           [&](const auto& o) { return o.first == e.status(); });
    if (it == outcomes.end())
      outcomes.emplace_back(e.status(), 1);
    else
      ++it->second;
  }
  if (outcomes.empty()) return "—";
  const bool counted =
      std::any_of(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.second > 1; });
  return absl::StrJoin(outcomes, ", ", [&](std::string* out, const auto& o) {
    if (counted) absl::StrAppend(out, o.second, " ");
    absl::StrAppend(out, o.first);
  });
}

std::string FormatDuration(int64_t micros) {
  if (micros <= 0) return "—";
  if (micros < 1000) return absl::StrCat(micros, " µs");
  if (micros < 1000000) return absl::StrCat(FormatFixed(micros / 1e3, 0), " ms");
  return absl::StrCat(FormatFixed(micros / 1e6, 2), " s");
}

std::string NumberText(double n) {
  // 2^63 is exact as a double; below it, and at or above -2^63, the cast is defined.
  constexpr double kLimit = 9223372036854775808.0;
  if (std::isfinite(n) && n >= -kLimit && n < kLimit && n == std::trunc(n))
    return absl::StrCat(static_cast<int64_t>(n));
  return absl::StrCat(n);
}

int64_t ClampedMicros(double us) {
  return static_cast<int64_t>(std::isfinite(us) ? std::clamp(us, 0.0, 3.6e15) : 0.0);
}

void WriteCompileLink(const v1::Compile& c, const SiteModel& model, int index, Markup prefix,
                      HtmlWriter& w, Markup fragment) {
  w.Tag("<a class=\"").Tag(OutcomeClass(c)).Tag("\" href=\"").Tag(prefix);
  w.Text(model.compiles[index].page);
  if (!fragment.view().empty()) w.Tag("#").Tag(fragment);
  w.Tag("\" title=\"").Text(OutcomeWord(c)).Tag("\">");
  w.Text(c.id()).Tag("</a>");
}

void WriteStackFrame(const v1::StackFrame& f, const SiteModel& model, HtmlWriter& w) {
  w.Tag("<code>").Text(absl::StrCat(f.file(), ":", f.line())).Tag("</code> in <code>");
  w.Text(f.name()).Tag("</code>");
  if (std::optional<absl::string_view> code = SourceLine(model, f.file(), f.line())) {
    w.Tag("<br><code class=\"src\">").Text(*code).Tag("</code>");
  }
}

std::string UnownedRecordPage(int record) { return absl::StrCat("records/", record, ".html"); }

absl::Status WriteRecordPage(const v1::SessionCapture& capture, int index, SiteSink& sink) {
  const v1::Record& r = capture.records(index);
  const std::string title = absl::StrCat(r.kind(), r.name().empty() ? "" : " ", r.name());
  HtmlWriter w;
  WritePageHead(absl::StrCat(title, " · compile-lens"), w);
  w.Tag(
       "<body>\n<header>\n<p class=\"sub\"><a href=\"../index.html#other-records\">← the "
       "session</a></p>\n<h1>")
      .Text(title)
      .Tag("</h1>\n<p class=\"sub\">line ")
      .Text(absl::StrCat(r.line()))
      .Tag(" · ")
      .Text(FormatBytes(r.bytes()))
      .Tag("</p>\n</header>\n<main>\n");
  if (r.text().empty()) {
    w.Tag("<p class=\"muted\">The capture kept no text of this record");
    if (r.truncated()) w.Tag(" (its text budget was spent)");
    w.Tag(".</p>\n");
  } else {
    w.Tag("<pre>").Text(r.text()).Tag("</pre>\n");
    if (r.truncated()) w.Tag("<p class=\"warn\">Cut: the capture kept only its beginning.</p>\n");
  }
  w.Tag("</main>\n</body>\n</html>\n");
  return sink.Write(UnownedRecordPage(index), w.Release());
}

absl::Status RenderHtmlSite(const v1::SessionCapture& capture, const v1::AnalysisReport& report,
                            SiteSink& sink) {
  const SiteModel model = BuildSiteModel(capture, report);
  {
    const std::string index =
        RenderHtmlWith(report, [&](HtmlWriter& w) { WriteSiteIndex(capture, model, w); });
    if (absl::Status s = sink.Write("index.html", index); !s.ok()) return s;
  }
  for (int i = 0; i < capture.compiles_size(); ++i) {
    if (absl::Status s = WriteCompilePage(capture, report, model, i, sink); !s.ok()) return s;
  }
  for (int record : model.unowned_records) {
    if (absl::Status s = WriteRecordPage(capture, record, sink); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace cl

// The site's pages (html_site.h), and the pieces they share. Internal to the renderer.
#ifndef SERVICE_RENDER_HTML_SITE_PAGES_H_
#define SERVICE_RENDER_HTML_SITE_PAGES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"
#include "service/render/html_site.h"
#include "service/render/html_writer.h"
#include "service/render/site_model.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// How a compile ended, as the stack trie colours it: "ok", "failed", "restarted", "empty graph",
// "cache hit" (an OK compile whose FX graph came from the cache), "no metrics".
absl::string_view OutcomeWord(const v1::Compile& compile);
// Its CSS class: "st-ok", "st-failed", ...
Markup OutcomeClass(const v1::Compile& compile);
// "hit", "miss", "hit, miss" for one cache ("fx_graph", "aot_autograd"); "—" when it was not asked.
std::string CacheOutcome(const v1::Compile& compile, absl::string_view cache);
// "1.42 s", "35 ms", "—" for 0.
std::string FormatDuration(int64_t micros);

// A number from the log as text: an integer when it is one that an int64 holds, else as a double
// (so 1e300 from a hostile log prints, and converts nowhere).
std::string NumberText(double n);

// Microseconds as an int64 for FormatDuration, clamped to [0, a million hours]; not finite is 0.
int64_t ClampedMicros(double us);
// "<a class="st-ok" href="PREFIX compiles/0_1_0.html#FRAGMENT">0/1</a>" (FRAGMENT: "guards").
void WriteCompileLink(const v1::Compile& compile, const SiteModel& model, int index, Markup prefix,
                      HtmlWriter& w, Markup fragment = "");
// "file:line in name" and, when the capture embeds the file, the line's code.
void WriteStackFrame(const v1::StackFrame& frame, const SiteModel& model, HtmlWriter& w);

// The index's additions to the report page: the stack trie, the compiles in order, failures and
// restarts, the records of no compile (html_site_index.cc).
void WriteSiteIndex(const v1::SessionCapture& capture, const SiteModel& model, HtmlWriter& w);

// One compile's page, and its records as files of their own (html_site_compile.cc).
absl::Status WriteCompilePage(const v1::SessionCapture& capture, const v1::AnalysisReport& report,
                              const SiteModel& model, int index, SiteSink& sink);

// A record of no compile, viewable: "records/<n>.html" for capture.records(n).
std::string UnownedRecordPage(int record);
absl::Status WriteRecordPage(const v1::SessionCapture& capture, int record, SiteSink& sink);

}  // namespace cl

#endif  // SERVICE_RENDER_HTML_SITE_PAGES_H_

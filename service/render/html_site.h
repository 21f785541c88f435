// The HTML site (`cl-client analyze --html-dir DIR`): everything the log holds, browsable, with the
// analysis linked both ways, as tlparse's output directory is, under the report page's rules (no
// script, no external resource, every capture string escaped).
//
//   index.html              the report page, plus the log's index: the stack trie, the compiles in
//                           order, failures and restarts, the records of no compile
//   compiles/0_1_0.html     one page per compile attempt: stack, times, guards, dynamic shapes,
//                           graphs, output code, kernels, metrics, caches
//   compiles/0_1_0/…        each of that compile's records as a file of its own, to download
//   records/<line>.html     a record of no compile, viewable
//
// Pages are rendered one at a time and handed to the SiteSink as they are done, so a log with
// 10,000 compiles never holds more than one page.
#ifndef SERVICE_RENDER_HTML_SITE_H_
#define SERVICE_RENDER_HTML_SITE_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// Where the site's files go, one call per file: `path` is relative ("compiles/0_1_0.html"), made
// only of [A-Za-z0-9_.-/] by the renderer, never from capture text.
class SiteSink {
 public:
  virtual ~SiteSink() = default;
  virtual absl::Status Write(const std::string& path, absl::string_view content) = 0;
};

// Writes each file under `dir`, creating the folders it needs.
class DirectorySink : public SiteSink {
 public:
  explicit DirectorySink(std::string dir) : dir_(std::move(dir)) {}
  absl::Status Write(const std::string& path, absl::string_view content) override;
  uint64_t files() const { return files_; }
  uint64_t bytes() const { return bytes_; }

 private:
  std::string dir_;
  absl::flat_hash_set<std::string> folders_;  // made already: one create_directories each
  uint64_t files_ = 0;
  uint64_t bytes_ = 0;
};

// The site of `capture` and its analysis, `report` (the same session's). The records' texts are
// what the capture kept (TraceParseOptions::keep_record_texts); a record without one is listed by
// kind, line and size.
absl::Status RenderHtmlSite(const v1::SessionCapture& capture, const v1::AnalysisReport& report,
                            SiteSink& sink);

}  // namespace cl

#endif  // SERVICE_RENDER_HTML_SITE_H_

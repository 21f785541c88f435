// What the site's pages share about a capture, worked out once (html_site.h): each compile's page
// name, its records, the analysis sections that name it, the compile whose guards failed next.
// Internal to the renderer.
#ifndef SERVICE_RENDER_SITE_MODEL_H_
#define SERVICE_RENDER_SITE_MODEL_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// An analysis section of the report page: its anchor and heading.
struct SectionRef {
  absl::string_view anchor;  // "recompile"
  absl::string_view title;   // "Recompile summary"
};

struct SiteModel {
  // The compile at each index of capture.compiles: its page ("compiles/0_1_0.html"), the
  // indices of its records in capture.records (log order), the sections that name it.
  struct CompileEntry {
    std::string page;
    std::vector<int> records;
    std::vector<SectionRef> mentioned_in;
    // The next compile of the same frame, whose recompile reasons say which of this compile's
    // guards failed; -1 when none followed.
    int recompiled_by = -1;
    // Its row of the report's Compile time section; null when the report has none.
    const v1::CompileTime* compile_time = nullptr;
  };
  std::vector<CompileEntry> compiles;
  absl::flat_hash_map<std::string, int> by_id;  // compile id -> index
  std::vector<int> unowned_records;             // records of no compile, in log order
  // The embedded sources: path -> the file and where each of its lines starts.
  struct Source {
    absl::string_view text;
    std::vector<size_t> line_starts;
  };
  absl::flat_hash_map<std::string, Source> sources;
};

SiteModel BuildSiteModel(const v1::SessionCapture& capture, const v1::AnalysisReport& report);

// The page file name a compile gets: its numbers, never its id's text ("0/1_2" -> "0_1_2",
// "!3/0/1" -> "ca3_0_1_0", "0/1@2" -> "0_1_0.r2", "-/4" -> "noid_4"), made unique by a suffix.
std::string CompilePageStem(const v1::Compile& compile, const v1::Frame* frame);

// The source line `line` of `file` when the capture embeds the file; nullopt otherwise.
std::optional<absl::string_view> SourceLine(const SiteModel& model, absl::string_view file,
                                            uint32_t line);

}  // namespace cl

#endif  // SERVICE_RENDER_SITE_MODEL_H_

// TORCH_TRACE import: a log (.log or .log.gz) or a directory of them → SessionCapture.
//
// TraceImporter is the streaming core (tokenizer + parser): bytes go in as they arrive, memory
// holds the capture being built, not the log. The file and directory functions feed it from disk;
// the server feeds it from the Analyze stream. A directory of per-rank logs
// (`dedicated_log_torch_trace_rank_<N>_*.log`) imports every rank and gives each capture the
// digests of all ranks, for the cross-rank comparison.
#ifndef CAPTURE_TORCH_TRACE_IMPORTER_H_
#define CAPTURE_TORCH_TRACE_IMPORTER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capture/torch_trace/tokenizer.h"
#include "capture/torch_trace/trace_parser.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// How many lines a log may start with before its first record header: torch writes a header on
// the first line, so a file with none in this many is refused as not a TORCH_TRACE log.
inline constexpr uint64_t kTraceProbeLines = 100;

class TraceImporter {
 public:
  explicit TraceImporter(TraceParseOptions parse = {}, TokenizerLimits limits = {});
  void Feed(absl::string_view bytes);
  v1::SessionCapture Finish();
  // InvalidArgument once what was fed shows it is not a TORCH_TRACE log: no record header in its
  // first kTraceProbeLines lines (decided by line numbers, however the bytes were chunked). After
  // Finish, also for a shorter input with no header (an empty file, a line of text). The feeder
  // stops at the first refusal: nothing of such an input is analyzed. The message does not name
  // the input; the caller, which knows how the user named it, puts that in front.
  // RESOURCE_EXHAUSTED once the import went past TraceParseOptions::memory_budget.
  absl::Status Refusal(bool finished = false) const;
  uint64_t bytes() const { return tokenizer_.counters().bytes; }
  uint64_t records() const { return tokenizer_.counters().records; }
  std::optional<int64_t> rank() const { return parser_.rank(); }
  const absl::flat_hash_set<std::string>& unkept_source_files() const {
    return parser_.unkept_source_files();
  }

 private:
  TraceTokenizer tokenizer_;
  TraceParser parser_;
};

struct ImportOptions {
  bool read_sources = true;  // read the user files the stacks name, when they exist here
  // Where a path in the trace lives on this machine: {"/mnt/project/examples", "examples/hero"}.
  std::vector<std::pair<std::string, std::string>> path_map;
  std::string project_root;  // sets session.project_root
  bool latest = false;       // a directory without rank logs: take the newest log
  size_t max_source_bytes = 4 << 20;
  // Keep each record's text in `records` (TraceParseOptions::keep_record_texts): for the HTML
  // site and capture packages, which show the log itself.
  bool keep_record_texts = false;
  // Which graphs keep their nodes (TraceParseOptions::graph_nodes): kLoweredOnly for an analysis
  // that compares with no base and writes no capture.
  GraphNodes graph_nodes = GraphNodes::kAll;
  // TraceParseOptions::graph_sink: each graph of the log, as soon as it is parsed (the capture
  // keeps it without its nodes). For one log, as the other two sinks.
  std::function<void(const v1::Graph& graph)> graph_sink;
  // TraceParseOptions::record_sink: each record of the log's list as it is listed (the capture
  // keeps none). For one log, as the other two sinks.
  std::function<void(const v1::Record& record)> record_sink;
  // TraceParseOptions::lowered_sink (with GraphNodes::kLoweredOnly): each post-grad graph the
  // passes read, as soon as it is chosen (the capture keeps it without its nodes). For one log:
  // ImportTrace of a directory of several ranks' logs calls none of the three sinks.
  LoweredSink lowered_sink;
  // Called as a log is read: the log, the bytes read of it so far (decompressed for a .gz), its
  // size on disk, and the records read so far. For a progress display; may be empty.
  std::function<void(const std::string& path, uint64_t read, uint64_t size, uint64_t records)>
      progress;
};

// Reads one log, gzip-compressed or not.
absl::StatusOr<v1::SessionCapture> ImportTraceFile(const std::string& path,
                                                   const ImportOptions& options);

// The logs a directory holds: its rank logs, in rank order, when it has any; otherwise its one
// log, or with `latest` its newest. Unrelated and empty files are ignored.
absl::StatusOr<std::vector<std::string>> FindTraceLogs(const std::string& dir, bool latest);

// A file or a directory. One capture per rank (one for a single log), each carrying every rank's
// digest when there are several.
absl::StatusOr<std::vector<v1::SessionCapture>> ImportTrace(const std::string& path,
                                                            const ImportOptions& options);

// True when `path` looks like a TORCH_TRACE log or a directory (not a .cls.json / .cls.pb).
bool IsTraceInput(const std::string& path);

// Whether `file` is the user's code, whose text a report shows: not a generated name
// ("<eval_with_key>"), not torch's own or a library's (site-packages, dist-packages).
bool IsUserSourceFile(absl::string_view file);

// Where AttachSources gets a file's text: nullopt when there is none to have.
using SourceReader = absl::FunctionRef<std::optional<std::string>(const std::string& file)>;

// Adds to `capture`'s sources the user files (IsUserSourceFile) its frames, graph breaks and nodes
// name, and `also`, in that order, each with the text `read` gives it; a path `sources` already
// holds (embedded in the log) is left as it is.
void AttachSources(v1::SessionCapture* capture, const absl::flat_hash_set<std::string>& also,
                   SourceReader read);

// A file's text from this machine's disk, where `options.path_map` puts it, bytes that are not
// UTF-8 replaced; nullopt when it cannot be read or is over options.max_source_bytes.
std::optional<std::string> ReadSourceFile(const ImportOptions& options, const std::string& file);

// AttachSources reading from disk (ReadSourceFile).
void ReadSources(const ImportOptions& options, v1::SessionCapture* capture,
                 const absl::flat_hash_set<std::string>& also = {});

}  // namespace cl

#endif  // CAPTURE_TORCH_TRACE_IMPORTER_H_

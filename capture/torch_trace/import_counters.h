// What the TORCH_TRACE importer counts, declared once: each counter's id, severity and the words a
// report shows for it ("import: 3 bad json"). The parser counts by id (ImportCounts) and, at
// Finish, the counts become the capture's diagnostics in this table's order.
//
// To add a counter: an id in ImportCounter and its row in kImportCounters. The parser's rows are in
// the byte order of their words, which is the order reports have always listed them in (a build
// check in import_counters.cc keeps it so).
#ifndef CAPTURE_TORCH_TRACE_IMPORT_COUNTERS_H_
#define CAPTURE_TORCH_TRACE_IMPORT_COUNTERS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "capture/torch_trace/tokenizer.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

enum class ImportCounter : uint8_t {
  // The tokenizer's (TokenizerCounters), first.
  kRecordsRead,
  kMd5Mismatches,
  kUnparsedLines,
  kOrphanPayloadLines,
  kLongLines,
  kTruncatedPayloads,
  // The parser's.
  kBadArtifactJson,
  kBadJson,
  kBadStrRecord,
  kBadSymbolRecord,
  kCompilesWithoutId,
  kCompilesWithoutMetrics,
  kLensIterationsWithoutCompile,
  kLensRecordsWithWarning,
  kLensRecordsNotValid,
  kExportRecordsOverCap,
  kExtrasOverBudget,
  kGraphLinesNotUnderstood,
  kGraphs,
  kGraphsDropped,
  kGuardTreeLinesNotUnderstood,
  kGuardTreesWithoutCompile,
  kGuardTreesWithoutGuardLine,
  kKeptInExtras,  // one count per kind of record: "kept in extras: <kind>"
  kNoEvent,
  kOtherRank,
  kInvalidUtf8Payloads,
  kSymbolValuesNotNumbers,
  kLongStrNames,
  kResetRounds,
};

struct ImportCounterInfo {
  ImportCounter id;
  v1::Diagnostic::Severity severity;  // INFO for what a healthy log also has
  absl::string_view message;          // after "import: <n> "; "(s)" agrees with n
};

inline constexpr ImportCounterInfo kImportCounters[] = {
    {ImportCounter::kRecordsRead, v1::Diagnostic::INFO, "record(s) read"},
    {ImportCounter::kMd5Mismatches, v1::Diagnostic::WARNING,
     "payload(s) whose md5 does not match has_payload (kept)"},
    {ImportCounter::kUnparsedLines, v1::Diagnostic::WARNING,
     "line(s) that are neither a record header nor payload (skipped)"},
    {ImportCounter::kOrphanPayloadLines, v1::Diagnostic::WARNING,
     "payload line(s) with no record expecting them (skipped)"},
    {ImportCounter::kLongLines, v1::Diagnostic::WARNING, "line(s) over the line-length cap (cut)"},
    {ImportCounter::kTruncatedPayloads, v1::Diagnostic::WARNING,
     "payload(s) over the payload cap (truncated)"},
    {ImportCounter::kBadArtifactJson, v1::Diagnostic::WARNING, "bad artifact json"},
    {ImportCounter::kBadJson, v1::Diagnostic::WARNING, "bad json"},
    {ImportCounter::kBadStrRecord, v1::Diagnostic::WARNING, "bad str record"},
    {ImportCounter::kBadSymbolRecord, v1::Diagnostic::WARNING,
     "bad symbol record(s) (no symbol name; skipped)"},
    {ImportCounter::kCompilesWithoutId, v1::Diagnostic::INFO,
     "compile(s) logged with no compile id (kept as \"-/N\")"},
    {ImportCounter::kCompilesWithoutMetrics, v1::Diagnostic::WARNING,
     "compile(s) without compilation_metrics"},
    {ImportCounter::kLensIterationsWithoutCompile, v1::Diagnostic::WARNING,
     "compile_lens iteration(s) naming no compile of the log (skipped)"},
    {ImportCounter::kLensRecordsWithWarning, v1::Diagnostic::WARNING,
     "compile_lens record(s) kept with a warning"},
    {ImportCounter::kLensRecordsNotValid, v1::Diagnostic::WARNING,
     "compile_lens record(s) not valid (skipped)"},
    {ImportCounter::kExportRecordsOverCap, v1::Diagnostic::WARNING,
     "export issue or data-dependent symbol record(s) past the 4096 kept of each (counted only)"},
    {ImportCounter::kExtrasOverBudget, v1::Diagnostic::WARNING, "extra(s) over budget (dropped)"},
    {ImportCounter::kGraphLinesNotUnderstood, v1::Diagnostic::WARNING,
     "graph line(s) not understood"},
    {ImportCounter::kGraphs, v1::Diagnostic::INFO, "graph(s)"},
    {ImportCounter::kGraphsDropped, v1::Diagnostic::WARNING, "graph(s) dropped"},
    {ImportCounter::kGuardTreeLinesNotUnderstood, v1::Diagnostic::WARNING,
     "guard tree line(s) not understood"},
    {ImportCounter::kGuardTreesWithoutCompile, v1::Diagnostic::WARNING,
     "guard tree(s) without a compile id (skipped)"},
    {ImportCounter::kGuardTreesWithoutGuardLine, v1::Diagnostic::WARNING,
     "guard tree(s) without a guard line"},
    {ImportCounter::kKeptInExtras, v1::Diagnostic::INFO, "kept in extras"},
    {ImportCounter::kNoEvent, v1::Diagnostic::WARNING, "no event"},
    {ImportCounter::kOtherRank, v1::Diagnostic::INFO, "other rank"},
    {ImportCounter::kInvalidUtf8Payloads, v1::Diagnostic::WARNING,
     "payload(s) with invalid UTF-8 (bad bytes replaced with U+FFFD)"},
    {ImportCounter::kSymbolValuesNotNumbers, v1::Diagnostic::INFO,
     "size symbol(s) whose value is not a number, such as a nested tensor's jagged size \"j1\" "
     "(kept without a hint)"},
    {ImportCounter::kLongStrNames, v1::Diagnostic::WARNING,
     "str table name(s) longer than a path can be (clipped to 4096 bytes)"},
    {ImportCounter::kResetRounds, v1::Diagnostic::INFO,
     "time(s) torch started its compile ids over (torch._dynamo.reset(); kept as reset rounds)"},
};

inline constexpr size_t kNumImportCounters = std::size(kImportCounters);

// The row of `id`.
constexpr const ImportCounterInfo& InfoOf(ImportCounter id) {
  return kImportCounters[static_cast<size_t>(id)];
}

// The counts of one import.
class ImportCounts {
 public:
  void Add(ImportCounter id, uint64_t n = 1) { counts_[static_cast<size_t>(id)] += n; }
  // One more record of `kind` kept in extras (an event name, or "artifact:<name>"); counts toward
  // kKeptInExtras too.
  void AddKeptInExtras(absl::string_view kind);
  // The tokenizer's counters, as its rows.
  void AddTokenizer(const TokenizerCounters& t);

  uint64_t count(ImportCounter id) const { return counts_[static_cast<size_t>(id)]; }

  // "import: <n> <message>" at `where` for each counter that counted, in the table's order (the
  // kinds kept in extras in byte order).
  void AppendDiagnostics(absl::string_view where, v1::SessionCapture* capture) const;

 private:
  std::array<uint64_t, kNumImportCounters> counts_{};
  std::map<std::string, uint64_t, std::less<>> kept_in_extras_;  // by kind
};

}  // namespace cl

#endif  // CAPTURE_TORCH_TRACE_IMPORT_COUNTERS_H_

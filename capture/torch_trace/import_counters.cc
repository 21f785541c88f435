#include "capture/torch_trace/import_counters.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace cl {
namespace {

// Rows are looked up by id (InfoOf), and the parser's are listed in the byte order of their words.
constexpr bool RowsAreInIdOrder() {
  for (size_t i = 0; i < kNumImportCounters; ++i) {
    if (static_cast<size_t>(kImportCounters[i].id) != i) return false;
  }
  return true;
}
constexpr bool ParserRowsAreInMessageOrder() {
  const size_t first = static_cast<size_t>(ImportCounter::kBadArtifactJson);
  for (size_t i = first + 1; i < kNumImportCounters; ++i) {
    if (!(kImportCounters[i - 1].message < kImportCounters[i].message)) return false;
  }
  return true;
}
static_assert(RowsAreInIdOrder(),
              "kImportCounters must list the counters in ImportCounter's order");
static_assert(ParserRowsAreInMessageOrder(),
              "the parser's rows of kImportCounters must be in the byte order of their messages");

}  // namespace

void ImportCounts::AddKeptInExtras(absl::string_view kind) {
  Add(ImportCounter::kKeptInExtras);
  auto it = kept_in_extras_.find(kind);
  if (it == kept_in_extras_.end()) it = kept_in_extras_.emplace(std::string(kind), 0).first;
  ++it->second;
}

void ImportCounts::AddTokenizer(const TokenizerCounters& t) {
  Add(ImportCounter::kRecordsRead, t.records);
  Add(ImportCounter::kMd5Mismatches, t.md5_mismatches);
  Add(ImportCounter::kUnparsedLines, t.unparsed_lines);
  Add(ImportCounter::kOrphanPayloadLines, t.orphan_payload_lines);
  Add(ImportCounter::kLongLines, t.long_lines);
  Add(ImportCounter::kTruncatedPayloads, t.truncated_payloads);
}

void ImportCounts::AppendDiagnostics(absl::string_view where, v1::SessionCapture* capture) const {
  const auto add = [&](const ImportCounterInfo& row, uint64_t n, absl::string_view kind_suffix) {
    if (n == 0) return;
    v1::Diagnostic* d = capture->add_diagnostics();
    d->set_severity(row.severity);
    d->set_where(std::string(where));
    d->set_message(absl::StrCat("import: ", n, " ",
                                absl::StrReplaceAll(row.message, {{"(s)", n == 1 ? "" : "s"}}),
                                kind_suffix));
  };
  for (const ImportCounterInfo& row : kImportCounters) {
    if (row.id != ImportCounter::kKeptInExtras) {
      add(row, count(row.id), "");
      continue;
    }
    for (const auto& [kind, n] : kept_in_extras_) add(row, n, absl::StrCat(": ", kind));
  }
}

}  // namespace cl

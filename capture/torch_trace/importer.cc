#include "capture/torch_trace/importer.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/digest.h"
#include "common/file_io.h"
#include "common/gz_read.h"
#include "common/mapped_log.h"
#include "common/number_format.h"
#include "common/status_macros.h"
#include "common/utf8.h"

namespace cl {
namespace {

namespace fs = std::filesystem;

constexpr size_t kReadChunk = 1 << 20;
constexpr absl::string_view kRankPrefix = "dedicated_log_torch_trace_rank_";

// The rank in `dedicated_log_torch_trace_rank_<N>[_*].log[.gz]`, or -1.
int RankOfFileName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, kRankPrefix)) return -1;
  absl::ConsumeSuffix(&name, ".gz");
  if (!absl::ConsumeSuffix(&name, ".log")) return -1;
  const size_t end = name.find('_');
  int rank = -1;
  if (!absl::SimpleAtoi(name.substr(0, end), &rank) || rank < 0) return -1;
  return rank;
}

bool LooksLikeLog(absl::string_view name) {
  return absl::EndsWith(name, ".log") || absl::EndsWith(name, ".log.gz");
}

v1::RankDigest DigestOf(const v1::SessionCapture& c, const std::string& source) {
  v1::RankDigest d;
  d.set_rank(c.session().rank());
  d.set_source(source);
  for (const v1::Compile& cp : c.compiles()) {
    d.add_compile_ids(cp.id());
    for (const v1::CacheEvent& e : cp.cache_events())
      d.add_cache_sequence(absl::StrCat(e.cache(), ":", e.status()));
    d.set_compiles(d.compiles() + 1);
    if (!cp.recompile_reasons().empty()) {
      d.set_recompiles(d.recompiles() + 1);
      d.add_recompile_reasons(absl::StrCat(cp.id(), ": ", cp.recompile_reasons(0)));
    }
    if (cp.status() == v1::Compile::FAILED) d.set_failed(d.failed() + 1);
    d.set_graph_breaks(d.graph_breaks() + cp.graph_breaks_size());
  }
  return d;
}

}  // namespace

TraceImporter::TraceImporter(TraceParseOptions parse, TokenizerLimits limits)
    : tokenizer_(limits), parser_(std::move(parse)) {}

absl::Status TraceImporter::Refusal(bool finished) const {
  if (parser_.over_budget()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the log takes more than its memory budget of ", parser_.memory_budget(),
        " bytes to import (records' bytes, plus ", parser_.copied_from_str_table(),
        " bytes of file names its stacks copy from the str table); the import stopped at record ",
        tokenizer_.counters().records));
  }
  const TokenizerCounters& c = tokenizer_.counters();
  // Decided by line numbers, not by how the bytes were cut into chunks.
  if (c.first_header_line > 0 && c.first_header_line <= kTraceProbeLines) return absl::OkStatus();
  if (c.first_header_line > kTraceProbeLines || c.lines >= kTraceProbeLines) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a TORCH_TRACE log (no record header in the first ", kTraceProbeLines, " lines)"));
  }
  if (!finished) return absl::OkStatus();
  if (c.bytes == 0) return absl::InvalidArgumentError("empty, not a TORCH_TRACE log");
  return absl::InvalidArgumentError(absl::StrCat("not a TORCH_TRACE log (no record header in its ",
                                                 FormatCount(c.lines, "line", "lines"), ")"));
}

void TraceImporter::Feed(absl::string_view bytes) {
  tokenizer_.Feed(bytes, [this](TraceRecord&& r) { parser_.Add(std::move(r)); });
}

v1::SessionCapture TraceImporter::Finish() {
  tokenizer_.Finish([this](TraceRecord&& r) { parser_.Add(std::move(r)); });
  return parser_.Finish(tokenizer_.counters());
}

namespace {

// Feeds a plain (not gzipped) log to `importer` straight from a read-only mapping, a window at a
// time: no copy into a buffer, and each window is dropped from the process once it is fed, so
// memory still holds only what the capture keeps. False (nothing fed) when the file cannot be
// mapped, is empty or is gzipped; the caller then reads it through zlib.
bool FeedMapped(const std::string& path, TraceImporter* importer,
                absl::FunctionRef<void(uint64_t read, uint64_t size)> progress) {
  constexpr size_t kWindow = 8 << 20;  // a multiple of the page size
  const std::unique_ptr<MappedLog> log = MappedLog::Open(path);
  if (log == nullptr) return false;
  const absl::string_view bytes = log->bytes();
  for (size_t at = 0; at < bytes.size(); at += kWindow) {
    const absl::string_view window = bytes.substr(at, kWindow);
    importer->Feed(window);
    log->Drop(window);  // the importer copied what it keeps
    progress(at + window.size(), bytes.size());
    if (!importer->Refusal().ok()) break;
  }
  return true;
}

// Imports one log; `rank_in_log` says whether its records named a rank.
absl::StatusOr<v1::SessionCapture> ImportOne(const std::string& path, const ImportOptions& options,
                                             bool* rank_in_log) {
  TraceParseOptions parse;
  parse.source_name = fs::path(path).filename().string();
  parse.keep_record_texts = options.keep_record_texts;
  parse.graph_nodes = options.graph_nodes;
  parse.graph_sink = options.graph_sink;
  parse.record_sink = options.record_sink;
  parse.lowered_sink = options.lowered_sink;
  TraceImporter importer(parse);
  const auto progress = [&](uint64_t read, uint64_t size) {
    if (options.progress) options.progress(path, read, size, importer.records());
  };
  if (!FeedMapped(path, &importer, progress)) {
    // A .gz's decompressed bytes have no known total: no size, so no share or ETA to show.
    std::error_code ec;
    const uint64_t size = absl::EndsWith(path, ".gz") ? 0 : fs::file_size(path, ec);
    uint64_t read = 0;
    CL_RETURN_IF_ERROR(ReadMaybeGzipped(path, kReadChunk, [&](absl::string_view bytes) {
      importer.Feed(bytes);
      read += bytes.size();
      progress(read, ec ? 0 : size);
      return importer.Refusal().ok();
    }));
  }
  if (absl::Status refused = importer.Refusal(); !refused.ok())
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", refused.message()));
  v1::SessionCapture capture = importer.Finish();
  if (absl::Status refused = importer.Refusal(/*finished=*/true); !refused.ok())
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", refused.message()));
  *rank_in_log = importer.rank().has_value();
  if (!options.project_root.empty())
    capture.mutable_session()->set_project_root(options.project_root);
  if (options.read_sources) ReadSources(options, &capture, importer.unkept_source_files());
  return capture;
}

}  // namespace

absl::StatusOr<v1::SessionCapture> ImportTraceFile(const std::string& path,
                                                   const ImportOptions& options) {
  bool rank_in_log = false;
  return ImportOne(path, options, &rank_in_log);
}

absl::StatusOr<std::vector<std::string>> FindTraceLogs(const std::string& dir, bool latest) {
  std::error_code ec;
  // Each log with its modification time, read once: newer files win ties between runs.
  std::map<int, std::vector<std::pair<fs::file_time_type, std::string>>> ranked;
  std::vector<std::pair<fs::file_time_type, std::string>> logs;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec) || e.file_size(ec) == 0) continue;
    const std::string name = e.path().filename().string();
    if (const int rank = RankOfFileName(name); rank >= 0) {
      ranked[rank].emplace_back(e.last_write_time(ec), e.path().string());
    } else if (LooksLikeLog(name)) {
      logs.emplace_back(e.last_write_time(ec), e.path().string());
    }
  }
  if (ec) return absl::NotFoundError(absl::StrCat(dir, ": ", ec.message()));
  std::vector<std::string> out;
  if (!ranked.empty()) {
    for (auto& [rank, files] : ranked) {
      // Several runs of one rank: the newest file is this run's.
      out.push_back(std::max_element(files.begin(), files.end())->second);
    }
    return out;
  }
  if (logs.empty())
    return absl::NotFoundError(absl::StrCat(dir, ": no TORCH_TRACE log (*.log, *.log.gz) in it"));
  if (logs.size() > 1 && !latest) {
    std::vector<std::string> names;
    for (const auto& [t, p] : logs) names.push_back(fs::path(p).filename().string());
    std::sort(names.begin(), names.end());
    return absl::InvalidArgumentError(
        absl::StrCat(dir, " holds ", logs.size(), " logs (", absl::StrJoin(names, ", "),
                     "); pass one of them, or --latest for the newest"));
  }
  out.push_back(std::max_element(logs.begin(), logs.end())->second);
  return out;
}

absl::StatusOr<std::vector<v1::SessionCapture>> ImportTrace(const std::string& path,
                                                            const ImportOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    CL_ASSIGN_OR_RETURN(v1::SessionCapture capture, ImportTraceFile(path, options));
    // Moved in, not listed: a braced list copies its elements, and the copy of a large log's
    // capture was a third of `analyze`'s time and half its peak memory.
    std::vector<v1::SessionCapture> captures;
    captures.push_back(std::move(capture));
    return captures;
  }
  CL_ASSIGN_OR_RETURN(std::vector<std::string> files, FindTraceLogs(path, options.latest));
  // The sinks take one log's graphs and records: several ranks' would mix under the same ids.
  ImportOptions each = options;
  if (files.size() > 1) {
    each.graph_sink = nullptr;
    each.record_sink = nullptr;
    each.lowered_sink = nullptr;
  }
  std::vector<v1::SessionCapture> captures;
  for (const std::string& file : files) {
    bool rank_in_log = false;
    CL_ASSIGN_OR_RETURN(v1::SessionCapture capture, ImportOne(file, each, &rank_in_log));
    // A log is the rank its name says: the name is what tells the directory's logs apart (and
    // what --rank finds), also when its records name no rank (written before dist.init) or another
    // one (a rank's log copied or launched under another rank's name), which a diagnostic says.
    const std::string name = fs::path(file).filename().string();
    if (const int named = RankOfFileName(name); named >= 0) {
      if (rank_in_log && capture.session().rank() != named) {
        v1::Diagnostic* d = capture.add_diagnostics();
        d->set_severity(v1::Diagnostic::WARNING);
        d->set_where(name);
        d->set_message(absl::StrCat("the file is named rank ", named, " but its records say rank ",
                                    capture.session().rank(), "; it is reported as rank ", named));
      }
      capture.mutable_session()->set_rank(named);
      for (v1::Compile& c : *capture.mutable_compiles()) c.set_rank(named);
    }
    captures.push_back(std::move(capture));
  }
  if (captures.size() > 1) {
    std::vector<v1::RankDigest> digests;
    for (size_t i = 0; i < captures.size(); ++i) {
      digests.push_back(DigestOf(captures[i], fs::path(files[i]).filename().string()));
    }
    for (v1::SessionCapture& c : captures) {
      c.mutable_session()->set_world_size(static_cast<int32_t>(captures.size()));
      for (const v1::RankDigest& d : digests) *c.add_ranks() = d;
    }
  }
  return captures;
}

bool IsTraceInput(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return true;
  return !(absl::EndsWith(path, ".json") || absl::EndsWith(path, ".pb"));
}

bool IsUserSourceFile(absl::string_view file) {
  // Only the user's code: torch's own files are not what a stack points the user at.
  return !file.empty() && file[0] != '<' && !absl::StrContains(file, "/site-packages/") &&
         !absl::StrContains(file, "/dist-packages/");
}

void AttachSources(v1::SessionCapture* capture, const absl::flat_hash_set<std::string>& also,
                   SourceReader read) {
  std::vector<std::string> files;
  absl::flat_hash_set<std::string> seen;
  auto want = [&](const std::string& file) {
    if (file.empty() || file[0] == '<' || !seen.insert(file).second) return;
    files.push_back(file);
  };
  const auto want_innermost = [&](const google::protobuf::RepeatedPtrField<v1::StackFrame>& stack) {
    for (auto f = stack.rbegin(); f != stack.rend(); ++f) {
      if (!IsUserSourceFile(f->file())) continue;
      want(f->file());
      break;
    }
  };
  for (const v1::Frame& f : capture->frames()) want(f.file());
  for (const v1::Compile& c : capture->compiles()) {
    // Where the compiled code was called from (the training loop: where hooks are registered and
    // scalars passed), which is the only user file when the compiled module's code is torch's.
    want_innermost(c.stack());
    for (const v1::GraphBreak& gb : c.graph_breaks()) {
      for (const v1::StackFrame& f : gb.user_stack()) want(f.file());
    }
  }
  // An export record's user line: its code names the data-dependent symbol (`n = x.item()`) and
  // says what was decided.
  for (const v1::ExportIssue& issue : capture->export_issues()) {
    want_innermost(issue.user_stack());
    want_innermost(issue.stack());
  }
  for (const v1::Symbol& symbol : capture->export_symbols()) {
    want_innermost(symbol.user_stack());
    want_innermost(symbol.stack());
  }
  // The nodes' files in name order, so that `sources` lists the same files in the same order
  // whichever graphs kept their nodes (ImportOptions::graph_nodes).
  absl::flat_hash_set<absl::string_view> node_files(also.begin(), also.end());
  for (const v1::Graph& g : capture->graphs()) {
    for (const v1::Node& n : g.nodes()) node_files.insert(n.source().file());
  }
  std::vector<std::string> sorted(node_files.begin(), node_files.end());
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& file : sorted) want(file);
  // Sources the log embedded (compile_lens_source records) are what the program ran; the file on
  // this machine may have changed since, so an embedded source is never replaced from disk.
  absl::flat_hash_set<std::string> have;
  for (const v1::SourceFile& s : capture->sources()) have.insert(s.path());
  for (const std::string& file : files) {
    if (have.contains(file) || !IsUserSourceFile(file)) continue;
    std::optional<std::string> text = read(file);
    if (!text) continue;
    v1::SourceFile* s = capture->add_sources();
    s->set_path(file);
    s->set_sha256(Sha256Hex(*text));
    s->set_text(*std::move(text));
  }
}

std::optional<std::string> ReadSourceFile(const ImportOptions& options, const std::string& file) {
  std::string local = file;
  for (const auto& [from, to] : options.path_map) {
    if (absl::StartsWith(file, from)) {
      local = absl::StrCat(to, file.substr(from.size()));
      break;
    }
  }
  std::error_code ec;
  const auto size = fs::file_size(local, ec);
  if (ec || size > options.max_source_bytes) return std::nullopt;
  absl::StatusOr<std::string> text = ReadFile(local);
  if (!text.ok()) return std::nullopt;
  // A capture's strings are UTF-8 (a file in Latin-1 would make the capture unreadable, and an
  // upload refused): bytes that are not are replaced, as in the log's own payloads.
  if (!IsValidUtf8(*text)) return ToValidUtf8(*text);
  return *std::move(text);
}

void ReadSources(const ImportOptions& options, v1::SessionCapture* capture,
                 const absl::flat_hash_set<std::string>& also) {
  AttachSources(capture, also,
                [&](const std::string& file) { return ReadSourceFile(options, file); });
}

}  // namespace cl

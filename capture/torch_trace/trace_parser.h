// Turns TORCH_TRACE records (tokenizer.h) into a SessionCapture.
//
// Known events become the model: `str` interns file names; `dynamo_start` opens a compile and names
// its frame; `compilation_metrics` fills the compile (every field kept in `metrics`); artifacts
// give recompile reasons, graph breaks, cache events, kernels; graph events and artifacts are
// parsed from their FX text into nodes (fx_graph.h); `dynamo_cpp_guards_str` gives a compile the
// sources its guards read (guard_tree.h); the compile_lens_* artifacts the Python package writes
// give iterations, the divergence check and embedded sources (lens_records.h). Everything else is
// kept, size-capped, in `extras`. Problems are counted (import_counters.h) into `diagnostics`,
// never fatal, and the first few are listed by line. One parser per rank's log: records of another
// rank are counted and skipped, as tlparse does.
#ifndef CAPTURE_TORCH_TRACE_TRACE_PARSER_H_
#define CAPTURE_TORCH_TRACE_TRACE_PARSER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "capture/torch_trace/import_counters.h"
#include "capture/torch_trace/lowered_graphs.h"
#include "capture/torch_trace/tokenizer.h"
#include "compile_lens/v1/capture.pb.h"

namespace simdjson::dom {
class parser;
class element;
}  // namespace simdjson::dom

namespace cl {

namespace v1 = ::compile_lens::v1;

// A `str` record's name is a file path: longer than PATH_MAX, it is clipped (and counted). Every
// stack frame that names it by index gets a copy, so one long name cannot become gigabytes.
inline constexpr size_t kMaxStrNameBytes = 4096;

// What a compile's phase from a trace-event pair that began after its frame compile had ended is
// named after: "inductor_compile (after the frame compile)". In training that is the backward
// graph's compile at the first backward(), which compilation_metrics do not time.
inline constexpr char kAfterFrameCompile[] = " (after the frame compile)";

// Which graphs keep their nodes in the capture. Every graph is listed, and the source files its
// nodes name are known, either way; kAll parses every graph (so that the log's problems are all
// reported); kLoweredOnly parses only the graphs it keeps the nodes of (the rest are scanned for
// their source files, ScanFxSourceFiles), keeps the nodes of the post-grad graphs the passes of one
// session read (fusion, roofline: LoweredGraphChoice, one compile's per frame; the site and the
// trace events read none; with a lowered_sink, not those either: the sink keeps what the passes
// read of them) and frees the others' as soon as they are known to be unread. Unless it
// keeps the records' texts, for a site, it also lists none of the log's records (`records`) and
// keeps none of torch's config snapshots in compilation_metrics that no pass reads (each compile's
// inductor_config; a dynamo_config the same as its frame's last one kept: TraceParser::
// KeepConfigSnapshot), and of the nodes it keeps only what those passes read (FxDetail::
// kAnalysis: no stride, device, SymInt expression, function or code). A capture that is written
// out or compared with another keeps them all.
enum class GraphNodes { kAll, kLoweredOnly };

// TraceParseOptions::lowered_sink's type.
using LoweredSink = std::function<void(const v1::Graph& graph, const v1::Compile& compile)>;

struct TraceParseOptions {
  std::string source_name = "trace";    // names the input in diagnostics ("trace.log:123")
  size_t extra_payload_cap = 16 << 10;  // bytes of each unmodelled record kept in `extras`
  size_t extras_budget = 8 << 20;       // all extras together; past it they are only counted
  // What the import may take in, in bytes: every record's own bytes plus the bytes its references
  // into the `str` table copy in (the one place a log's records expand past their own size); past
  // it the import stops and over_budget() says so. 0: no limit.
  uint64_t memory_budget = 0;
  // Whether `records` keep their text (the payload, or the metadata of a record without one), for
  // a reader to view (the HTML site, a capture package): up to record_text_cap bytes each, and
  // record_texts_budget all together; past the budget records are listed without it.
  bool keep_record_texts = false;
  size_t record_text_cap = 4 << 20;
  size_t record_texts_budget = 64 << 20;
  // The memory the cache-key components kept with cache misses (CacheEvent.components) may take,
  // all together (the messages and their strings, not only their text); past it misses keep
  // their key only.
  size_t cache_components_budget = 16 << 20;
  GraphNodes graph_nodes = GraphNodes::kAll;
  // Given, each graph is handed here, nodes and all, as soon as it is parsed, and the capture keeps
  // it without its nodes (id, compile, stage): for a writer that streams the graphs to its output
  // rather than holding them all (WriteCapturePbAsMade in capture/capture_io.h).
  std::function<void(const v1::Graph& graph)> graph_sink;
  // Given, each record of the log's list (`records`, with its text where kept) is handed here as
  // it is listed, and the capture keeps none of them: their texts are most of what is left of a
  // capture package once its graphs are streamed.
  std::function<void(const v1::Record& record)> record_sink;
  // With GraphNodes::kLoweredOnly: each post-grad graph the passes of one session read (the
  // LoweredGraphChoice), nodes and all, with its compile, as soon as it is chosen; the capture then
  // keeps it without its nodes, so that what the passes make of them is all that stays. A graph
  // chosen and later displaced (an earlier compile of its frame lowering after it) has been handed
  // over too; the passes read the graphs the finished capture's choice names. The compile holds
  // what the log said of it so far: its symbols, which torch creates while it traces, before it
  // logs any of the compile's graphs.
  LoweredSink lowered_sink;
};

class TraceParser {
 public:
  explicit TraceParser(TraceParseOptions options = {});
  ~TraceParser();
  TraceParser(const TraceParser&) = delete;
  TraceParser& operator=(const TraceParser&) = delete;

  void Add(TraceRecord&& record);
  // The capture, with the tokenizer's and the parser's counters in `diagnostics`.
  v1::SessionCapture Finish(const TokenizerCounters& tokenizer);

  // The rank the log's records carry, if any did (logs written before dist.init carry none).
  std::optional<int64_t> rank() const { return rank_; }

  // Whether the import went past TraceParseOptions::memory_budget (from then on records are
  // dropped unread), and what its stacks copied from the `str` table.
  uint64_t copied_from_str_table() const { return copied_from_str_table_; }
  bool over_budget() const { return over_budget_; }
  uint64_t memory_budget() const { return options_.memory_budget; }

  // The source files named by the graphs GraphNodes::kLoweredOnly did not parse (ReadSources
  // reads them as it reads those of the nodes kept).
  const absl::flat_hash_set<std::string>& unkept_source_files() const {
    return unkept_source_files_;
  }

 private:
  // What a record's JSON says about where it belongs.
  struct Envelope {
    std::optional<int64_t> rank, frame_id, frame_compile_id, attempt, ca_id;
    std::string event;
    std::string compile_id;  // empty unless the record names a whole compile
  };
  // trace_parser.cc: the compile a record belongs to, extras, diagnostics and Finish's checks.
  v1::Compile* CompileFor(const Envelope& env);
  void OnChromiumEvent(const TraceRecord& r);
  // A compile torch logged with no compile id ("-/N", under the one no_frame frame).
  v1::Compile* AddNoFrameCompile();
  // The capture's id for torch's frame `torch_id` in the current reset round.
  uint32_t ModelFrameId(uint32_t torch_id);
  // torch started its compile ids over (torch._dynamo.reset(), or another process appending):
  // what follows is reset round N+1, its frames new ones.
  void StartResetRound(uint64_t line, absl::string_view compile_id);
  void KeepExtra(const TraceRecord& r, const Envelope& env, absl::string_view kind);
  // GraphNodes::kLoweredOnly without record texts: an analysis of this one session, which keeps
  // only what its passes read.
  bool AnalysisOnly() const {
    return options_.graph_nodes == GraphNodes::kLoweredOnly && !options_.keep_record_texts;
  }
  // Lists the record in `records` (with its text, when kept), as part of `compile_id`.
  void ListRecord(const TraceRecord& r, const Envelope& env, const std::optional<std::string>& name,
                  const std::string& compile_id);
  void FillRecord(const TraceRecord& r, const Envelope& env, const std::optional<std::string>& name,
                  const std::string& compile_id, v1::Record* record);
  void DropDanglingIterations();
  void Count(ImportCounter counter) { counts_.Add(counter); }
  // Counts `bytes` as taken in: false (and over_budget() from now on) once past the budget.
  bool TakeIn(uint64_t bytes);
  // Lists `message` as a diagnostic at `line` (while fewer than kMaxDiagnostics are listed).
  void Diagnose(v1::Diagnostic::Severity severity, uint64_t line, std::string message);
  // Counts `counter` and lists `message` at `line` with the counter's severity.
  void Problem(ImportCounter counter, uint64_t line, std::string message);

  // trace_events.cc: which handler reads which event, and the handlers.
  // `value` is the event's value, `root` the whole record (its envelope's "stack").
  void Dispatch(const TraceRecord& r, const Envelope& env, simdjson::dom::element value,
                simdjson::dom::element root);
  void OnDynamoStart(const Envelope& env, simdjson::dom::element stack);
  // create_symbol / create_unbacked_symbol: a size symbol of the record's compile.
  void OnSymbol(const Envelope& env, simdjson::dom::element value, bool unbacked);
  // A JSON stack ([{"line", "name", "filename"}], filename a path or an index into `str`).
  void ReadStacks(simdjson::dom::element value,
                  google::protobuf::RepeatedPtrField<v1::StackFrame>* user_stack,
                  google::protobuf::RepeatedPtrField<v1::StackFrame>* stack);
  // with_code: each frame's "loc" too (its source line), which later torch logs.
  void ReadJsonStack(simdjson::dom::element stack,
                     google::protobuf::RepeatedPtrField<v1::StackFrame>* out,
                     bool with_code = false);
  void OnMetrics(const TraceRecord& r, const Envelope& env, simdjson::dom::element metrics);
  // AnalysisOnly(): whether compile `c` keeps the compilation_metrics field `key`. Torch logs its
  // whole Inductor config (about 9 KB) and Dynamo config (3 KB) with every compile; no pass reads
  // the first, and the recompile pass reads a frame's latest Dynamo config, which the last one kept
  // equals when later ones are dropped as the same.
  bool KeepConfigSnapshot(const v1::Compile& c, std::string_view key, simdjson::dom::element value);
  // The glog header has no year: the first epoch timestamp a record carries gives it.
  void NoteYear(double epoch_seconds);
  void OnArtifact(const TraceRecord& r, const Envelope& env, absl::string_view name);
  // A cache lookup record: its outcome (`status`, or the payload's cache_state when empty), key,
  // bypass reason, time and, for a miss, the key's components.
  void OnCacheLookup(const TraceRecord& r, v1::Compile* c, const std::string& cache,
                     std::string status);
  // Parses a graph's FX text into `graph`, reporting what it could not read; false (reported) when
  // a node name is defined twice, and the graph is dropped.
  bool ParseGraph(const TraceRecord& r, absl::string_view event, v1::Graph* graph);
  void OnGraph(const TraceRecord& r, const Envelope& env, absl::string_view event,
               v1::Graph::Stage stage);
  // Frees `graph`'s nodes, keeping the source files they name (unkept_source_files).
  void DropNodes(v1::Graph* graph);
  void OnKernels(const TraceRecord& r, const Envelope& env, absl::string_view name);
  void OnGuards(const TraceRecord& r, const Envelope& env);
  // symbolic_shape_specialization; guard_added_fast and guard_added.
  void OnSpecialization(const Envelope& env, simdjson::dom::element value);
  void OnShapeGuard(const Envelope& env, simdjson::dom::element value, bool fast);
  void OnLensRecord(const TraceRecord& r, absl::string_view name, simdjson::dom::element artifact);
  // What torch.export's draft mode logs (ExportIssue), and the unbacked symbols of no compile.
  void OnExportIssue(const TraceRecord& r, const Envelope& env, v1::ExportIssue::Kind kind,
                     simdjson::dom::element value, simdjson::dom::element root);
  // artifact make_fx_fail_partial of no compile: the graph a failed non-strict trace had made.
  void OnTraceFailed(const TraceRecord& r, const Envelope& env);
  void OnExportSymbol(const TraceRecord& r, simdjson::dom::element value,
                      simdjson::dom::element root);
  // A JSON object of strings ({"a": "u0 + 1"}) into `out`, at most a few dozen entries.
  void ReadStringMap(simdjson::dom::element object,
                     google::protobuf::Map<std::string, std::string>* out);

  const TraceParseOptions options_;
  std::unique_ptr<simdjson::dom::parser> json_;
  v1::SessionCapture capture_;
  v1::Record sunk_record_;  // the record handed to record_sink, its strings' room reused
  absl::flat_hash_map<int64_t, std::string> strings_;    // the `str` intern table
  absl::flat_hash_map<std::string, int> compile_index_;  // compile id -> index in compiles
  absl::flat_hash_map<uint32_t, int> frame_index_;       // frame id -> index in frames
  uint32_t next_frame_id_ = 0;                           // past every frame id so far
  uint32_t reset_round_ = 0;
  // Chromium "B" events not yet ended: (compile id, event name) -> the begin times, a stack.
  absl::flat_hash_map<std::pair<std::string, std::string>, std::vector<double>> open_phases_;
  absl::flat_hash_map<uint32_t, uint32_t> round_frames_;  // torch's frame id -> ours, this round
  absl::flat_hash_set<std::string> started_;   // compile ids with a dynamo_start, this round
  absl::flat_hash_set<std::string> finished_;  // "F/C" with a compilation_metrics, this round
  std::optional<uint32_t> no_frame_id_;        // the no_frame frame, once one is needed
  uint32_t no_frame_compiles_ = 0;
  absl::flat_hash_set<std::string> symbols_seen_;      // "<compile id> <symbol>"
  absl::flat_hash_map<std::string, int> graph_count_;  // graph id -> times seen (for unique ids)
  // compile id -> the post-grad graph Inductor lowered last (not a before_ copy): the kernels
  // logged after it are its (a training compile lowers the forward, then the backward).
  absl::flat_hash_map<std::string, std::string> lowered_graph_;
  // GraphNodes::kLoweredOnly: the post-grad graphs that keep their nodes.
  LoweredGraphChoice lowered_choice_;
  absl::flat_hash_map<std::string, int> kernel_index_;  // kernel name -> index in kernels
  std::vector<uint64_t> iteration_lines_;               // the line of each of capture_.iterations
  std::optional<int64_t> rank_;                         // the rank this log is about
  bool seen_ranked_ = false;
  size_t extras_bytes_ = 0;
  size_t record_texts_bytes_ = 0;
  size_t cache_components_bytes_ = 0;
  // AnalysisOnly(): frame id -> the dynamo_config text its compiles' metrics last kept.
  absl::flat_hash_map<uint32_t, std::string> kept_dynamo_config_;
  // frame id -> its Frame.guarded_sources, each (a view of the frame's own string) to its index.
  absl::flat_hash_map<uint32_t, absl::flat_hash_map<absl::string_view, uint32_t>> guard_source_ids_;
  absl::flat_hash_set<std::string> unkept_source_files_;
  std::string last_graph_id_;           // the graph the record being dispatched became, if one
  uint64_t taken_in_ = 0;               // records' bytes plus copied_from_str_table_
  uint64_t copied_from_str_table_ = 0;  // bytes of names copied into frames from `str`
  bool over_budget_ = false;
  std::optional<int> year_;           // from an epoch timestamp (NoteYear)
  std::optional<TraceRecord> first_;  // for started_at
  ImportCounts counts_;
  int diagnostics_kept_ = 0;
};

}  // namespace cl

#endif  // CAPTURE_TORCH_TRACE_TRACE_PARSER_H_

#include "capture/torch_trace/trace_parser.h"

#include <algorithm>
#include <ctime>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "capture/schema.h"
#include "capture/torch_trace/json_value.h"
#include "capture/torch_trace/lens_records.h"
#include "capture/validate.h"
#include "common/digest.h"
#include "common/utf8.h"
#include "simdjson.h"

namespace cl {
namespace {

using simdjson::dom::element;

constexpr int kMaxDiagnostics = 50;  // individual problems listed; the rest are only counted

// The keys of the envelope; the one other key is the event (docs/torch-trace-format.md §1.3).
bool IsEnvelopeKey(std::string_view key) {
  return key == "rank" || key == "frame_id" || key == "frame_compile_id" || key == "attempt" ||
         key == "compiled_autograd_id" || key == "has_payload" || key == "stack" ||
         key == "subgraph_name" || key == "severity" || key == "timestamp" || key == "pathname" ||
         key == "thread";
}

std::string Rfc3339(int year, const TraceRecord& r) {
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, r.month, r.day, r.hour,
                         r.minute, r.second, r.micros / 1000);
}

// A stable id for a session read from a log: the same log always gets the same id.
std::string SessionIdFor(const TraceRecord& first) {
  const std::string seed =
      absl::StrCat(first.pid, " ", first.month, first.day, first.hour, first.minute, first.second,
                   first.micros, " ", first.metadata);
  const std::string hex = Md5Hex(seed);
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-",
                      hex.substr(16, 4), "-", hex.substr(20, 12));
}

}  // namespace

TraceParser::TraceParser(TraceParseOptions options)
    : options_(std::move(options)), json_(std::make_unique<simdjson::dom::parser>()) {}

TraceParser::~TraceParser() = default;

void TraceParser::Diagnose(v1::Diagnostic::Severity severity, uint64_t line, std::string message) {
  if (diagnostics_kept_++ >= kMaxDiagnostics) return;
  v1::Diagnostic* d = capture_.add_diagnostics();
  d->set_severity(severity);
  d->set_where(absl::StrCat(options_.source_name, ":", line));
  d->set_message(std::move(message));
}

bool TraceParser::TakeIn(uint64_t bytes) {
  taken_in_ += bytes;
  if (options_.memory_budget > 0 && taken_in_ > options_.memory_budget) over_budget_ = true;
  return !over_budget_;
}

void TraceParser::Problem(ImportCounter counter, uint64_t line, std::string message) {
  Count(counter);
  Diagnose(InfoOf(counter).severity, line, std::move(message));
}

void TraceParser::Add(TraceRecord&& r) {
  if (over_budget_ || !TakeIn(r.metadata.size() + r.payload.size())) return;
  if (!r.md5_ok)
    Diagnose(v1::Diagnostic::WARNING, r.line, "payload md5 does not match has_payload (kept)");
  // Payload text becomes proto strings, which must be valid UTF-8: check once here (fast, and
  // nearly always true) rather than walking the finished capture. The metadata is JSON, which the
  // JSON parser checks itself.
  if (!simdjson::validate_utf8(r.payload.data(), r.payload.size())) {
    r.payload = ToValidUtf8(r.payload);
    Count(ImportCounter::kInvalidUtf8Payloads);
  }
  element root;
  if (json_->parse(r.metadata).get(root) != simdjson::SUCCESS || !root.is_object()) {
    Problem(ImportCounter::kBadJson, r.line,
            "the record's metadata is not a JSON object (skipped)");
    return;
  }
  Envelope env;
  env.rank = json::Int(root, "rank");
  env.frame_id = json::Int(root, "frame_id");
  env.frame_compile_id = json::Int(root, "frame_compile_id");
  env.attempt = json::Int(root, "attempt");
  env.ca_id = json::Int(root, "compiled_autograd_id");
  element event_value;
  for (simdjson::dom::key_value_pair kv : json::AsObject(root)) {
    if (IsEnvelopeKey(kv.key)) continue;
    if (env.event.empty()) {
      env.event = std::string(kv.key);
      event_value = kv.value;
    }
  }
  if (env.event.empty()) {
    Problem(ImportCounter::kNoEvent, r.line, "the record names no event (skipped)");
    return;
  }
  if (env.event != "str") {
    // tlparse's rule (§1.4): the first ranked record fixes the rank; records of another rank, and
    // unranked records after the first ranked one, belong to another process's log.
    if (env.rank) {
      if (!rank_) rank_ = env.rank;
      if (*env.rank != *rank_) {
        Count(ImportCounter::kOtherRank);
        return;
      }
      seen_ranked_ = true;
    } else if (seen_ranked_) {
      Count(ImportCounter::kOtherRank);
      return;
    }
  }
  if (env.frame_id && env.frame_compile_id && *env.frame_id >= 0 && *env.frame_compile_id >= 0) {
    // What a compile id can spell (capture/validate.h): past it, the record keeps no compile.
    const auto fits = [](std::optional<int64_t> n) {
      return !n || (*n >= 0 && *n <= kMaxCompileIdNumber);
    };
    if (fits(env.frame_id) && fits(env.frame_compile_id) && fits(env.ca_id) &&
        env.attempt.value_or(0) <= kMaxCompileIdNumber) {
      const std::string frame_compile =
          absl::StrCat(env.ca_id ? absl::StrCat("!", *env.ca_id, "/") : "", *env.frame_id, "/",
                       *env.frame_compile_id);
      const std::string torch_id = absl::StrCat(
          frame_compile, env.attempt.value_or(0) > 0 ? absl::StrCat("_", *env.attempt) : "");
      const auto in_round = [&] {
        return reset_round_ == 0 ? torch_id : absl::StrCat(torch_id, "@", reset_round_);
      };
      env.compile_id = in_round();
      // A compile starts once a round: a start of a compile that already started and finished
      // (compilation_metrics, on any attempt) is the first compile of a new round.
      if (env.event == "dynamo_start" && !started_.insert(env.compile_id).second &&
          finished_.contains(frame_compile)) {
        StartResetRound(r.line, torch_id);
        env.compile_id = in_round();
        started_.insert(env.compile_id);
      }
      if (env.event == "compilation_metrics") finished_.insert(frame_compile);
    } else {
      Diagnose(v1::Diagnostic::WARNING, r.line,
               absl::StrCat("compile id numbers past ", kMaxCompileIdNumber,
                            " (the record is kept without a compile)"));
    }
  }
  if (!first_) first_ = r;
  const uint32_t no_frame_before = no_frame_compiles_;
  last_graph_id_.clear();
  // The record's name is read before Dispatch: a handler that parses the payload reuses the
  // parser, and that invalidates `event_value` (a fuzzer found the read after it).
  std::optional<std::string> name;
  if (event_value.is_object()) {
    name = json::String(event_value, "name");
    if (!name) name = json::String(event_value, "filename");
  }
  Dispatch(r, env, event_value, root);
  if (env.event == "str" || env.event == "chromium_event") return;
  // A compile logged with no id is named by its metrics record, which Dispatch just turned into
  // "-/N".
  ListRecord(r, env, name,
             no_frame_compiles_ > no_frame_before ? absl::StrCat("-/", no_frame_compiles_ - 1)
                                                  : env.compile_id);
}

v1::Compile* TraceParser::CompileFor(const Envelope& env) {
  if (env.compile_id.empty()) return nullptr;
  auto [it, inserted] = compile_index_.try_emplace(env.compile_id, capture_.compiles_size());
  if (!inserted) return capture_.mutable_compiles(it->second);
  v1::Compile* c = capture_.add_compiles();
  c->set_id(env.compile_id);
  c->set_frame_id(ModelFrameId(static_cast<uint32_t>(*env.frame_id)));
  c->set_frame_compile_id(static_cast<uint32_t>(*env.frame_compile_id));
  c->set_attempt(static_cast<uint32_t>(std::max<int64_t>(0, env.attempt.value_or(0))));
  c->set_rank(static_cast<int32_t>(rank_.value_or(0)));
  return c;
}

uint32_t TraceParser::ModelFrameId(uint32_t torch_id) {
  uint32_t id = torch_id;
  if (reset_round_ > 0) {
    auto [it, inserted] = round_frames_.try_emplace(torch_id, next_frame_id_);
    id = it->second;
  }
  if (!frame_index_.contains(id)) {
    frame_index_[id] = capture_.frames_size();
    v1::Frame* f = capture_.add_frames();
    f->set_id(id);
    if (reset_round_ > 0) {
      f->set_reset_round(reset_round_);
      f->set_torch_id(torch_id);
    }
    next_frame_id_ = std::max(next_frame_id_, id + 1);
  }
  return id;
}

v1::Compile* TraceParser::AddNoFrameCompile() {
  if (!no_frame_id_) {
    // An id no frame of torch's can have: round 0 keeps torch's own ids, and a frame logged after
    // this one would otherwise be filed under it.
    no_frame_id_ = std::numeric_limits<uint32_t>::max();
    frame_index_[*no_frame_id_] = capture_.frames_size();
    v1::Frame* f = capture_.add_frames();
    f->set_id(*no_frame_id_);
    f->set_no_frame(true);
    f->set_name("(no compile id)");
  }
  const std::string id = absl::StrCat("-/", no_frame_compiles_);
  compile_index_[id] = capture_.compiles_size();
  v1::Compile* c = capture_.add_compiles();
  c->set_id(id);
  c->set_frame_id(*no_frame_id_);
  c->set_frame_compile_id(no_frame_compiles_++);
  c->set_rank(static_cast<int32_t>(rank_.value_or(0)));
  return c;
}

void TraceParser::StartResetRound(uint64_t line, absl::string_view compile_id) {
  ++reset_round_;
  started_.clear();
  finished_.clear();
  round_frames_.clear();
  Count(ImportCounter::kResetRounds);
  Diagnose(v1::Diagnostic::INFO, line,
           absl::StrCat("compile ", compile_id, " starts again: torch's compile ids began anew ",
                        "(torch._dynamo.reset(), or another process writing this log); what "
                        "follows is reset round ",
                        reset_round_, ", its compile ids spelled \"", compile_id, "@", reset_round_,
                        "\""));
}

// An iteration must name a frame and compile of this log (the capture's own invariant); one that
// does not came from another process or a damaged log, and is dropped rather than failing the
// whole import.
void TraceParser::DropDanglingIterations() {
  auto* iterations = capture_.mutable_iterations();
  int kept = 0;
  for (int i = 0; i < iterations->size(); ++i) {
    const v1::Iteration& it = iterations->Get(i);
    const uint64_t line = i < static_cast<int>(iteration_lines_.size()) ? iteration_lines_[i] : 0;
    std::string problem;
    if (!frame_index_.contains(it.frame_id())) {
      problem = absl::StrCat("frame ", it.frame_id());
    } else if (!it.compile_id().empty() && !compile_index_.contains(it.compile_id())) {
      problem = absl::StrCat("compile \"", absl::CHexEscape(it.compile_id()), "\"");
    }
    if (!problem.empty()) {
      Problem(ImportCounter::kLensIterationsWithoutCompile, line,
              absl::StrCat("compile_lens_iteration ", it.index(), " names ", problem,
                           ", which this log never compiled (skipped)"));
      continue;
    }
    if (kept != i) iterations->SwapElements(kept, i);
    ++kept;
  }
  while (iterations->size() > kept) iterations->RemoveLast();
}

void TraceParser::KeepExtra(const TraceRecord& r, const Envelope& env, absl::string_view kind) {
  counts_.AddKeptInExtras(kind);
  if (extras_bytes_ >= options_.extras_budget) {
    Count(ImportCounter::kExtrasOverBudget);
    return;
  }
  v1::Extra* x = capture_.add_extras();
  x->set_kind(std::string(kind));
  x->set_compile_id(env.compile_id);
  // The metadata, a newline and the payload, cut at the cap on a character boundary (both are
  // valid UTF-8 by now): copy only what is kept. The cap is a budget, so no mark is added; the
  // extra says it was truncated.
  const size_t cap = options_.extra_payload_cap;
  const absl::string_view metadata = Utf8Prefix(r.metadata, cap);
  std::string* text = x->mutable_payload();
  text->assign(metadata.data(), metadata.size());
  bool truncated = metadata.size() < r.metadata.size();
  if (r.has_payload) {
    if (!truncated && text->size() < cap) {
      const absl::string_view payload = Utf8Prefix(r.payload, cap - text->size() - 1);
      text->reserve(text->size() + 1 + payload.size());
      text->push_back('\n');
      text->append(payload.data(), payload.size());
      truncated = payload.size() < r.payload.size();
    } else {
      truncated = true;
    }
  }
  x->set_truncated(truncated);
  extras_bytes_ += text->size();
}

void TraceParser::ListRecord(const TraceRecord& r, const Envelope& env,
                             const std::optional<std::string>& name,
                             const std::string& compile_id) {
  // The list is the site's (which keeps the texts) and a written capture's: an analysis of one
  // session that renders no site reads none of it, and it grows with every record of the log.
  if (AnalysisOnly()) return;
  if (!options_.record_sink) return FillRecord(r, env, name, compile_id, capture_.add_records());
  sunk_record_.Clear();  // keeps its strings' room for the next
  FillRecord(r, env, name, compile_id, &sunk_record_);
  options_.record_sink(sunk_record_);
}

void TraceParser::FillRecord(const TraceRecord& r, const Envelope& env,
                             const std::optional<std::string>& name, const std::string& compile_id,
                             v1::Record* record) {
  record->set_kind(env.event);
  if (name) record->set_name(std::string(Utf8Prefix(*name, kMaxStrNameBytes)));
  record->set_compile_id(compile_id);
  record->set_line(r.line);
  record->set_bytes(r.has_payload ? r.payload.size() : r.metadata.size());
  record->set_graph_id(last_graph_id_);
  if (!options_.keep_record_texts || (name && LensRecordOf(*name))) return;
  // The payload; or, for a record whose content is its metadata (compilation_metrics,
  // create_symbol, ...), that JSON.
  const absl::string_view text = r.has_payload ? absl::string_view(r.payload) : r.metadata;
  if (record_texts_bytes_ >= options_.record_texts_budget) {
    record->set_truncated(!text.empty());
    return;
  }
  const absl::string_view kept = Utf8Prefix(text, options_.record_text_cap);
  record->set_text(std::string(kept));
  record->set_truncated(kept.size() < text.size() || r.payload_truncated);
  record_texts_bytes_ += kept.size();
}

v1::SessionCapture TraceParser::Finish(const TokenizerCounters& t) {
  DropDanglingIterations();
  // Statuses: a compile's own metrics decide; without them, a later attempt means it restarted.
  // The highest attempt of each frame compile, rather than a set of every earlier attempt's id:
  // the attempt is the log's number, up to 999,999,999 (a fuzzed log's took minutes to list).
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint32_t>
      last_attempt;  // (frame, frame compile)
  for (const v1::Compile& c : capture_.compiles()) {
    uint32_t& last = last_attempt[{c.frame_id(), c.frame_compile_id()}];
    last = std::max(last, c.attempt());
  }
  // Only a compile whose id is the plain "frame/compile[_attempt]" of its own numbers (not a
  // compiled-autograd one) is named by a later attempt's restart.
  const auto restarted = [&](const v1::Compile& c) {
    return c.attempt() < last_attempt.find({c.frame_id(), c.frame_compile_id()})->second &&
           !absl::StartsWith(c.id(), "!") && !absl::StartsWith(c.id(), "-");
  };
  for (v1::Compile& c : *capture_.mutable_compiles()) {
    const auto& f = c.metrics().fields();
    if (!f.empty()) {
      auto ops = f.find("graph_op_count");
      if (!c.fail_type().empty())
        c.set_status(v1::Compile::FAILED);
      else if (ops != f.end() && ops->second.kind_case() == google::protobuf::Value::kNumberValue &&
               ops->second.number_value() == 0)
        c.set_status(v1::Compile::EMPTY_GRAPH);
      else
        c.set_status(v1::Compile::OK);
    } else if (restarted(c)) {
      c.set_status(v1::Compile::RESTARTED);
    } else {
      Count(ImportCounter::kCompilesWithoutMetrics);
    }
  }
  for (v1::Kernel& k : *capture_.mutable_kernels()) {
    if (!absl::StartsWith(k.graph_id(), "?")) continue;
    auto it = lowered_graph_.find(k.graph_id().substr(1));
    k.set_graph_id(it == lowered_graph_.end() ? "" : it->second);
  }
  std::sort(capture_.mutable_frames()->begin(), capture_.mutable_frames()->end(),
            [](const v1::Frame& a, const v1::Frame& b) { return a.id() < b.id(); });

  capture_.set_schema(SchemaVersion());
  v1::Session* s = capture_.mutable_session();
  if (first_) {
    if (s->id().empty()) s->set_id(SessionIdFor(*first_));
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    s->set_started_at(Rfc3339(year_.value_or(tm.tm_year + 1900), *first_));
  }
  if (rank_) s->set_rank(static_cast<int32_t>(*rank_));

  // The counters, as data: what was read, and every oddity.
  counts_.AddTokenizer(t);
  counts_.AppendDiagnostics(options_.source_name, &capture_);
  return std::move(capture_);
}

}  // namespace cl

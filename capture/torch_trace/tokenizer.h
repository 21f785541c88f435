// Cuts a TORCH_TRACE byte stream into records (docs/torch-trace-format.md §1.2).
//
// A record is a glog-style header line — `V1129 14:05:13.136000 21946 path.py:1359] {json}` — and,
// when its JSON carries `has_payload` (the payload's md5), the tab-prefixed lines that follow it.
// The tokenizer takes bytes in chunks exactly as they arrive (a file read, a gRPC message), keeps
// what spans a chunk boundary itself, and never asks the transport to align anything. It does not
// parse the JSON: it only finds `has_payload` to know whether payload lines belong to the record.
// Oddities are counted, never fatal: lines that are neither headers nor payload, payload lines with
// no record to belong to, md5 mismatches, lines over the length cap.
//
// Completed records wait in a small batch (a few MiB of payload) so that their md5s are checked
// together, eight at a time (common/md5_batch.h), before they go to the sink in log order: checking
// them one by one was a quarter of an import.
#ifndef CAPTURE_TORCH_TRACE_TOKENIZER_H_
#define CAPTURE_TORCH_TRACE_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "common/digest.h"

namespace cl {

struct TraceRecord {
  uint64_t line = 0;  // 1-based line number of the header
  int month = 0, day = 0, hour = 0, minute = 0, second = 0, micros = 0;
  uint64_t pid = 0;
  std::string metadata;  // the header's JSON object, as written
  bool has_payload = false;
  std::string payload;             // payload lines without their tab, joined with '\n'
  bool payload_truncated = false;  // over the payload cap: `payload` holds its first bytes
  bool md5_ok = true;              // false when the payload's md5 disagrees with `has_payload`
};

struct TokenizerCounters {
  uint64_t lines = 0;
  uint64_t records = 0;
  uint64_t first_header_line = 0;     // the line of the first record header; 0 while none
  uint64_t blank_lines = 0;           // dropped, as tlparse drops them
  uint64_t unparsed_lines = 0;        // neither a header nor a payload line
  uint64_t orphan_payload_lines = 0;  // payload lines with no record expecting a payload
  uint64_t md5_mismatches = 0;
  uint64_t long_lines = 0;  // over the line cap; cut
  uint64_t truncated_payloads = 0;
  uint64_t bytes = 0;
};

struct TokenizerLimits {
  size_t max_line_bytes = 64 << 20;      // a line longer than this is cut (never buffered whole)
  size_t max_payload_bytes = 256 << 20;  // a payload longer than this is truncated
};

class TraceTokenizer {
 public:
  using Sink = absl::FunctionRef<void(TraceRecord&&)>;

  explicit TraceTokenizer(TokenizerLimits limits = {});
  ~TraceTokenizer();
  TraceTokenizer(const TraceTokenizer&) = delete;
  TraceTokenizer& operator=(const TraceTokenizer&) = delete;

  // Consumes `bytes`; calls `sink` for records completed by them, in log order (some may wait in
  // the md5 batch for a later call).
  void Feed(absl::string_view bytes, Sink sink);
  // End of input: completes the last line and record, and sends every record still waiting.
  void Finish(Sink sink);

  const TokenizerCounters& counters() const { return counters_; }

 private:
  void Line(absl::string_view line, Sink sink);
  void Emit(Sink sink);
  void Flush(Sink sink);

  const TokenizerLimits limits_;
  TokenizerCounters counters_;
  std::string partial_;      // an incomplete last line from the previous chunk
  bool discarding_ = false;  // inside an over-long line: drop bytes until its newline
  bool in_record_ = false;
  TraceRecord record_;
  std::string expected_md5_;
  Md5Stream md5_;  // of a payload past the payload cap
  bool first_payload_line_ = true;

  // Completed records whose md5s are not checked yet, with the md5s their headers claim.
  struct Pending {
    TraceRecord record;
    std::string expected_md5;
  };
  std::vector<Pending> pending_;
  size_t pending_bytes_ = 0;
};

}  // namespace cl

#endif  // CAPTURE_TORCH_TRACE_TOKENIZER_H_

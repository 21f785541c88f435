#include "capture/torch_trace/tokenizer.h"

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "common/digest.h"
#include "common/md5_batch.h"

namespace cl {
namespace {

// How much payload waits for one md5 batch: enough for the lanes to stay busy across payloads of
// a few hundred KiB, little next to the capture being built.
constexpr size_t kBatchBytes = 8 << 20;
constexpr size_t kBatchRecords = 512;

}  // namespace

namespace {

// Reads `n` digits at `*p`, advancing it; false if they are not all digits.
bool Digits(absl::string_view& s, size_t n, int* out) {
  if (s.size() < n) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  s.remove_prefix(n);
  return true;
}

bool Consume(absl::string_view& s, char c) {
  if (s.empty() || s[0] != c) return false;
  s.remove_prefix(1);
  return true;
}

// Parses the glog prefix `L MMDD HH:MM:SS.uuuuuu PID path:line] ` into `r` and returns the rest
// (the JSON), or false when the line is not a header. Hand-written: this runs once per line.
bool ParseHeader(absl::string_view line, TraceRecord* r, absl::string_view* json) {
  if (line.empty() || std::strchr("VIWECD", line[0]) == nullptr) return false;
  absl::string_view s = line.substr(1);
  if (!Digits(s, 2, &r->month) || !Digits(s, 2, &r->day) || !Consume(s, ' ') ||
      !Digits(s, 2, &r->hour) || !Consume(s, ':') || !Digits(s, 2, &r->minute) ||
      !Consume(s, ':') || !Digits(s, 2, &r->second) || !Consume(s, '.') ||
      !Digits(s, 6, &r->micros) || !Consume(s, ' ')) {
    return false;
  }
  uint64_t pid = 0;
  size_t i = 0;
  while (i < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[i])))
    pid = pid * 10 + (s[i++] - '0');
  if (i == 0) return false;
  r->pid = pid;
  // `path:line] {` — the path may hold spaces or colons, so look for the "] {" that ends it.
  const size_t end = s.find("] {", i);
  if (end == absl::string_view::npos) return false;
  *json = s.substr(end + 2);
  return true;
}

// The value of `"has_payload": "<hex>"` in the header JSON, if any. The key is written by torch's
// json.dumps, so this exact spelling is the one to look for; the parser reads the JSON properly.
absl::string_view HasPayload(absl::string_view json) {
  static constexpr absl::string_view kKey = "\"has_payload\": \"";
  const size_t at = json.rfind(kKey);
  if (at == absl::string_view::npos) return {};
  absl::string_view rest = json.substr(at + kKey.size());
  const size_t close = rest.find('"');
  return close == absl::string_view::npos ? absl::string_view() : rest.substr(0, close);
}

}  // namespace

TraceTokenizer::TraceTokenizer(TokenizerLimits limits) : limits_(limits) {}

TraceTokenizer::~TraceTokenizer() = default;

void TraceTokenizer::Feed(absl::string_view bytes, Sink sink) {
  counters_.bytes += bytes.size();
  while (!bytes.empty()) {
    const char* nl = static_cast<const char*>(std::memchr(bytes.data(), '\n', bytes.size()));
    const size_t len = nl == nullptr ? bytes.size() : static_cast<size_t>(nl - bytes.data());
    if (discarding_) {
      // The rest of an over-long line: drop it.
    } else if (partial_.size() + len > limits_.max_line_bytes) {
      ++counters_.long_lines;
      // Keep what fits so the line still counts as what it starts as, then drop the rest.
      partial_.append(bytes.data(), limits_.max_line_bytes - partial_.size());
      discarding_ = true;
    } else if (nl != nullptr && partial_.empty()) {
      Line(bytes.substr(0, len), sink);  // the common case: a whole line inside the chunk
    } else {
      partial_.append(bytes.data(), len);
    }
    if (nl == nullptr) return;
    if (!partial_.empty() || discarding_) {
      Line(partial_, sink);
      partial_.clear();
      discarding_ = false;
    }
    bytes.remove_prefix(len + 1);
  }
}

void TraceTokenizer::Finish(Sink sink) {
  if (!partial_.empty()) Line(partial_, sink);
  partial_.clear();
  discarding_ = false;
  Emit(sink);
  Flush(sink);
}

void TraceTokenizer::Line(absl::string_view line, Sink sink) {
  ++counters_.lines;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) {
    ++counters_.blank_lines;
    return;
  }
  if (line[0] == '\t') {
    if (!in_record_ || !record_.has_payload) {
      ++counters_.orphan_payload_lines;
      return;
    }
    line.remove_prefix(1);
    // The payload is hashed once it is whole (one digest call, not two per line), except past the
    // cap: from there on the lines are hashed as they come, after what the payload holds.
    std::string& p = record_.payload;
    if (!record_.payload_truncated) {
      const size_t need = p.size() + (first_payload_line_ ? 0 : 1) + line.size();
      if (need > limits_.max_payload_bytes) {
        record_.payload_truncated = true;
        md5_.Reset();
        md5_.Update(p);
      } else {
        if (!first_payload_line_) p.push_back('\n');
        p.append(line.data(), line.size());
      }
    }
    if (record_.payload_truncated) {
      if (!first_payload_line_) md5_.Update("\n");
      md5_.Update(line);
    }
    first_payload_line_ = false;
    return;
  }
  TraceRecord next;
  absl::string_view json;
  if (!ParseHeader(line, &next, &json)) {
    ++counters_.unparsed_lines;
    return;
  }
  Emit(sink);
  if (counters_.first_header_line == 0) counters_.first_header_line = counters_.lines;
  next.line = counters_.lines;
  next.metadata = std::string(json);
  const absl::string_view md5 = HasPayload(json);
  next.has_payload = !md5.empty();
  expected_md5_ = std::string(md5);
  record_ = std::move(next);
  in_record_ = true;
  first_payload_line_ = true;
}

void TraceTokenizer::Emit(Sink sink) {
  if (!in_record_) return;
  in_record_ = false;
  ++counters_.records;
  Pending& p = pending_.emplace_back(Pending{std::move(record_), std::string()});
  record_ = TraceRecord();
  if (p.record.has_payload) {
    if (p.record.payload_truncated) {
      // Hashed as it came; nothing left to batch.
      p.record.md5_ok = md5_.HexDigest() == expected_md5_;
      if (!p.record.md5_ok) ++counters_.md5_mismatches;
      ++counters_.truncated_payloads;
    } else {
      p.expected_md5 = std::move(expected_md5_);
      pending_bytes_ += p.record.payload.size();
    }
  }
  if (pending_bytes_ >= kBatchBytes || pending_.size() >= kBatchRecords) Flush(sink);
}

void TraceTokenizer::Flush(Sink sink) {
  std::vector<absl::string_view> payloads;
  std::vector<size_t> owners;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const TraceRecord& r = pending_[i].record;
    if (r.has_payload && !r.payload_truncated) {
      payloads.push_back(r.payload);
      owners.push_back(i);
    }
  }
  std::vector<Md5Digest> digests(payloads.size());
  Md5Batch(payloads, absl::MakeSpan(digests));
  for (size_t k = 0; k < owners.size(); ++k) {
    Pending& p = pending_[owners[k]];
    const absl::string_view digest(reinterpret_cast<const char*>(digests[k].data()),
                                   digests[k].size());
    p.record.md5_ok = absl::BytesToHexString(digest) == p.expected_md5;
    if (!p.record.md5_ok) ++counters_.md5_mismatches;
  }
  for (Pending& p : pending_) sink(std::move(p.record));
  pending_.clear();
  pending_bytes_ = 0;
}

}  // namespace cl

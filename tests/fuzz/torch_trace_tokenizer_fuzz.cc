// Any bytes through the TORCH_TRACE tokenizer alone (bytes → records), under small line and
// payload caps taken from the first two bytes so that the caps are reached. Counted oddities,
// never a crash, and:
//  - the records and counters do not depend on how the bytes were cut into chunks;
//  - records come out in line order, one per counted record, within the caps;
//  - a record without a payload has none; a whole payload whose md5 checks out is the md5 its
//    header names.
#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "capture/torch_trace/tokenizer.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

std::string Md5Hex(absl::string_view s) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(s.data(), s.size(), digest, &len, EVP_md5(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), len));
}

bool Same(const cl::TraceRecord& a, const cl::TraceRecord& b) {
  return a.line == b.line && a.month == b.month && a.day == b.day && a.hour == b.hour &&
         a.minute == b.minute && a.second == b.second && a.micros == b.micros && a.pid == b.pid &&
         a.metadata == b.metadata && a.has_payload == b.has_payload && a.payload == b.payload &&
         a.payload_truncated == b.payload_truncated && a.md5_ok == b.md5_ok;
}

bool Same(const cl::TokenizerCounters& a, const cl::TokenizerCounters& b) {
  return a.lines == b.lines && a.records == b.records && a.blank_lines == b.blank_lines &&
         a.unparsed_lines == b.unparsed_lines && a.orphan_payload_lines == b.orphan_payload_lines &&
         a.md5_mismatches == b.md5_mismatches && a.long_lines == b.long_lines &&
         a.truncated_payloads == b.truncated_payloads && a.bytes == b.bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  cl::TokenizerLimits limits;
  // 0 keeps the real caps (what production runs with); otherwise small ones.
  if (data[0] != 0) limits.max_line_bytes = data[0] * 4u;
  if (data[1] != 0) limits.max_payload_bytes = data[1] * 8u;
  const absl::string_view in(reinterpret_cast<const char*>(data) + 2, size - 2);

  std::vector<cl::TraceRecord> whole_records;
  cl::TraceTokenizer whole(limits);
  auto keep_whole = [&](cl::TraceRecord&& r) { whole_records.push_back(std::move(r)); };
  whole.Feed(in, keep_whole);
  whole.Finish(keep_whole);

  std::vector<cl::TraceRecord> chunked_records;
  cl::TraceTokenizer chunked(limits);
  auto keep_chunked = [&](cl::TraceRecord&& r) { chunked_records.push_back(std::move(r)); };
  size_t at = 0, chunk = 1;
  while (at < in.size()) {
    const size_t n = std::min(chunk, in.size() - at);
    chunked.Feed(in.substr(at, n), keep_chunked);
    at += n;
    chunk = chunk * 5 % 509 + 1;
  }
  chunked.Finish(keep_chunked);

  CL_FUZZ_CHECK(whole_records.size() == chunked_records.size());
  for (size_t i = 0; i < whole_records.size(); ++i)
    CL_FUZZ_CHECK(Same(whole_records[i], chunked_records[i]));
  CL_FUZZ_CHECK(Same(whole.counters(), chunked.counters()));

  const cl::TokenizerCounters& c = whole.counters();
  CL_FUZZ_CHECK(c.records == whole_records.size());
  CL_FUZZ_CHECK(c.bytes == in.size());
  CL_FUZZ_CHECK(c.blank_lines + c.unparsed_lines + c.orphan_payload_lines <= c.lines);
  uint64_t last_line = 0, mismatches = 0, truncated = 0;
  for (const cl::TraceRecord& r : whole_records) {
    CL_FUZZ_CHECK(r.line > last_line && r.line <= c.lines);
    last_line = r.line;
    CL_FUZZ_CHECK(r.metadata.size() <= limits.max_line_bytes);
    CL_FUZZ_CHECK(r.payload.size() <= limits.max_payload_bytes);
    if (!r.has_payload) CL_FUZZ_CHECK(r.payload.empty() && !r.payload_truncated && r.md5_ok);
    if (r.has_payload && !r.payload_truncated && r.md5_ok) {
      CL_FUZZ_CHECK(absl::StrContains(r.metadata, Md5Hex(r.payload)));
    }
    mismatches += !r.md5_ok;
    truncated += r.payload_truncated;
  }
  CL_FUZZ_CHECK(mismatches == c.md5_mismatches && truncated == c.truncated_payloads);
  return 0;
}

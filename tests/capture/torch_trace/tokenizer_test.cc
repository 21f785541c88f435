#include "capture/torch_trace/tokenizer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/digest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::StartsWith;

// md5("a\nb") and md5("") as torch writes them in has_payload.
constexpr char kMd5AB[] = "8cdeb44417f3c26826595d5820cf5700";
constexpr char kMd5Empty[] = "d41d8cd98f00b204e9800998ecf8427e";

std::string Header(const std::string& json) {
  return "V1129 14:05:13.136000 21946 torch/x.py:12] " + json + "\n";
}

std::vector<TraceRecord> Tokenize(const std::string& text, size_t chunk, TraceTokenizer* t) {
  std::vector<TraceRecord> out;
  auto sink = [&](TraceRecord&& r) { out.push_back(std::move(r)); };
  for (size_t i = 0; i < text.size(); i += chunk)
    t->Feed(absl::string_view(text).substr(i, chunk), sink);
  t->Finish(sink);
  return out;
}

TEST(TokenizerTest, HeadersPayloadsAndTheirMd5AtEveryChunking) {
  const std::string log =
      Header(R"({"str": ["/a.py", 0]})") +
      Header(std::string(R"({"artifact": {"name": "x"}, "has_payload": ")") + kMd5AB + "\"}") +
      "\ta\n\tb\n" + Header(R"({"dynamo_start": {}})");
  for (size_t chunk : {size_t{1}, size_t{2}, size_t{7}, size_t{64}, log.size()}) {
    TraceTokenizer t;
    std::vector<TraceRecord> r = Tokenize(log, chunk, &t);
    ASSERT_EQ(r.size(), 3u) << "chunk " << chunk;
    EXPECT_EQ(r[0].metadata, R"({"str": ["/a.py", 0]})");
    EXPECT_EQ(r[0].line, 1u);
    EXPECT_EQ(r[0].month, 11);
    EXPECT_EQ(r[0].micros, 136000);
    EXPECT_EQ(r[0].pid, 21946u);
    EXPECT_TRUE(r[1].has_payload);
    EXPECT_EQ(r[1].payload, "a\nb");
    EXPECT_TRUE(r[1].md5_ok);
    EXPECT_EQ(r[2].line, 5u);
    EXPECT_EQ(t.counters().md5_mismatches, 0u);
  }
}

TEST(TokenizerTest, Md5MismatchIsCountedNotFatal) {
  TraceTokenizer t;
  std::vector<TraceRecord> r = Tokenize(
      Header(std::string(R"({"a": 1, "has_payload": ")") + kMd5Empty + "\"}") + "\tnot empty\n", 5,
      &t);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].md5_ok);
  EXPECT_EQ(r[0].payload, "not empty");
  EXPECT_EQ(t.counters().md5_mismatches, 1u);
}

// Records wait in a batch for their md5s to be checked together: they still come out in log order,
// each with its own verdict, and a batch goes out once it is full rather than at Finish, so memory
// stays bounded on a long log.
TEST(TokenizerTest, Md5BatchesKeepOrderVerdictsAndStreaming) {
  std::string log;
  std::vector<bool> good;
  for (int i = 0; i < 1200; ++i) {
    const std::string payload = std::string(9000 + i, static_cast<char>('a' + i % 26));
    const bool ok = i % 7 != 3;
    good.push_back(ok);
    log += Header(absl::StrCat(R"({"i": )", i, R"(, "has_payload": ")",
                               ok ? Md5Hex(payload) : kMd5Empty, R"("})"));
    log += "\t" + payload + "\n";
    if (i % 5 == 0) log += Header(absl::StrCat(R"({"no_payload": )", i, "}"));
  }
  TraceTokenizer t;
  std::vector<TraceRecord> r;
  auto sink = [&](TraceRecord&& record) { r.push_back(std::move(record)); };
  t.Feed(log, sink);
  EXPECT_GT(r.size(), 0u) << "nothing came out before Finish";
  t.Finish(sink);
  ASSERT_EQ(r.size(), 1200u + 240u);
  size_t next = 0;
  for (size_t k = 0; k < r.size(); ++k) {
    if (!r[k].has_payload) continue;
    EXPECT_THAT(r[k].metadata, StartsWith(absl::StrCat(R"({"i": )", next, ",")));
    EXPECT_EQ(r[k].md5_ok, good[next]) << "record " << next;
    ++next;
  }
  EXPECT_EQ(next, 1200u);
  EXPECT_EQ(t.counters().md5_mismatches,
            static_cast<uint64_t>(std::count(good.begin(), good.end(), false)));
}

TEST(TokenizerTest, BlankLinesAreDroppedEvenInsideAPayload) {
  TraceTokenizer t;
  std::vector<TraceRecord> r = Tokenize(
      Header(std::string(R"({"a": 1, "has_payload": ")") + kMd5AB + "\"}") + "\ta\n\n\r\n\tb\n", 3,
      &t);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].payload, "a\nb");
  EXPECT_TRUE(r[0].md5_ok);
  EXPECT_EQ(t.counters().blank_lines, 2u);
}

TEST(TokenizerTest, OddLinesAreCounted) {
  TraceTokenizer t;
  std::vector<TraceRecord> r =
      Tokenize("\torphan payload\nnot a header at all\n" + Header(R"({"a": 1})") +
                   "\tpayload nobody asked for\n" + "V1129 garbage] {\n" + "no newline at the end",
               4, &t);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(t.counters().orphan_payload_lines, 2u);
  EXPECT_EQ(t.counters().unparsed_lines, 3u);
}

TEST(TokenizerTest, AnOverlongLineIsCutNotBuffered) {
  TokenizerLimits limits;
  limits.max_line_bytes = 1000;
  TraceTokenizer t(limits);
  std::string huge = Header(R"({"a": ")" + std::string(5000, 'x') + "\"}");
  std::vector<TraceRecord> r = Tokenize(huge + Header(R"({"b": 1})"), 300, &t);
  EXPECT_EQ(t.counters().long_lines, 1u);
  ASSERT_EQ(r.size(), 2u);  // the cut header still starts a record; the next line is intact
  EXPECT_LE(r[0].metadata.size(), 1000u);
  EXPECT_EQ(r[1].metadata, R"({"b": 1})");
}

TEST(TokenizerTest, PayloadCapTruncates) {
  TokenizerLimits limits;
  limits.max_payload_bytes = 10;
  TraceTokenizer t(limits);
  std::vector<TraceRecord> r =
      Tokenize(Header(R"({"a": 1, "has_payload": "00"})") + "\t0123456789\n\tabcdef\n", 8, &t);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].payload_truncated);
  EXPECT_EQ(r[0].payload, "0123456789");
  EXPECT_EQ(t.counters().truncated_payloads, 1u);
}

TEST(TokenizerTest, HeaderPathsWithSpacesAndAbsolutePaths) {
  TraceTokenizer t;
  std::vector<TraceRecord> r = Tokenize(
      "V0429 16:46:26.856000 3930665 /torch/_logging/structured.py:28] {\"x\": 1}\n"
      "I0101 00:00:00.000000 1 my dir/a b.py:3] {\"y\": 2}\n",
      1000, &t);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].metadata, "{\"y\": 2}");
}

}  // namespace
}  // namespace cl

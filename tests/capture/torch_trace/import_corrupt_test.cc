// Corrupt TORCH_TRACE input: counted diagnostics or a clear error, never a crash, and the capture
// that comes out always validates.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "capture/torch_trace/importer.h"
#include "capture/validate.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

using ::testing::HasSubstr;

v1::SessionCapture Import(absl::string_view bytes, size_t chunk = 4096) {
  TraceImporter importer;
  for (size_t i = 0; i < bytes.size(); i += chunk) importer.Feed(bytes.substr(i, chunk));
  v1::SessionCapture c = importer.Finish();
  EXPECT_TRUE(ValidateCapture(c).ok()) << ValidateCapture(c);
  v1::SessionCapture back;  // a .cls.pb of it loads: proto3 refuses a string that is not UTF-8
  EXPECT_TRUE(back.ParseFromString(c.SerializeAsString()));
  return c;
}

std::string Diagnostics(const v1::SessionCapture& c) {
  std::vector<std::string> lines;
  for (const v1::Diagnostic& d : c.diagnostics())
    lines.push_back(absl::StrCat(d.where(), ": ", d.message()));
  return absl::StrJoin(lines, "\n");
}

std::string HeroLog() {
  absl::StatusOr<std::string> log = ReadFile(CL_SOURCE_DIR "/examples/hero/traces/base.log");
  EXPECT_TRUE(log.ok());
  return log.ok() ? *log : "";
}

TEST(ImportCorruptTest, TruncatedAtEveryKindOfPlace) {
  const std::string log = HeroLog();
  for (size_t cut : {size_t{1}, size_t{100}, log.size() / 3, log.size() / 2, log.size() - 7}) {
    v1::SessionCapture c = Import(absl::string_view(log).substr(0, cut));
    EXPECT_LE(c.compiles_size(), 4) << cut;
  }
}

TEST(ImportCorruptTest, BadJsonIsCountedAndSkipped) {
  const std::string log =
      "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": [}\n"
      "V1129 14:05:13.136000 1 a.py:1] [1, 2]\n"
      "V1129 14:05:13.136000 1 a.py:1] {\"frame_id\": 0}\n";
  v1::SessionCapture c = Import(log);
  EXPECT_THAT(Diagnostics(c), HasSubstr("not a JSON object"));
  EXPECT_THAT(Diagnostics(c), HasSubstr("import: 1 bad json"));
  EXPECT_THAT(Diagnostics(c), HasSubstr("names no event"));
}

// Found by torch_trace_fuzz: seconds whose microseconds do not fit an int64 were cast anyway
// (undefined behaviour). They are now ignored, with a diagnostic.
TEST(ImportCorruptTest, CompileTimesPastAnInt64OfMicrosecondsAreIgnored) {
  const std::string ids = R"("frame_id": 0, "frame_compile_id": 0, "attempt": 0})";
  const std::string log = "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, " +
                          ids + "\n" +
                          "V1129 14:05:13.136000 1 a.py:1] {\"compilation_metrics\": "
                          "{\"start_time\": 171215452820523684, "
                          "\"entire_frame_compile_time_s\": -1e300}, " +
                          ids + "\n";
  v1::SessionCapture c = Import(log);
  ASSERT_EQ(c.compiles_size(), 1);
  EXPECT_EQ(c.compiles(0).start_us(), 0);
  EXPECT_EQ(c.compiles(0).duration_us(), 0);
  EXPECT_THAT(Diagnostics(c),
              HasSubstr("compilation_metrics.start_time 1.71215e+17 s is out of range (ignored)"));
  EXPECT_THAT(
      Diagnostics(c),
      HasSubstr("compilation_metrics.entire_frame_compile_time_s -1e+300 s is out of range"));
}

// Chromium trace events whose times do not fit an int64 of microseconds, or begin before the
// epoch, are no phase; a sound pair beside them is kept, span and all.
TEST(ImportCorruptTest, TraceEventTimesPastAnInt64OrBeforeTheEpochAreNoPhase) {
  const std::string ids = R"("frame_id": 0, "frame_compile_id": 0, "attempt": 0)";
  std::string log =
      "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, " + ids + "}\n";
  const auto event = [&](const char* name, const char* ph, const char* ts) {
    log += "V1129 14:05:13.136000 1 a.py:1] {\"chromium_event\": {}, " + ids +
           ", \"has_payload\": \"0\"}\n\t{\"name\": \"" + name + "\", \"ph\": \"" + ph +
           "\", \"ts\": " + ts + ", \"args\": {\"compile_id\": \"0/0\"}}\n";
  };
  event("huge", "B", "1e300");
  event("huge", "E", "2e300");
  event("before_epoch", "B", "-5e18");
  event("before_epoch", "E", "9e18");
  event("sound", "B", "1000");
  event("sound", "E", "3000");
  v1::SessionCapture c = Import(log);
  ASSERT_EQ(c.compiles_size(), 1);
  ASSERT_EQ(c.compiles(0).phases_size(), 1) << c.compiles(0).DebugString();
  const v1::Phase& p = c.compiles(0).phases(0);
  EXPECT_EQ(p.name(), "sound");
  EXPECT_EQ(p.duration_us(), 2000);
  EXPECT_EQ(p.start_us(), 1000);
  EXPECT_THAT(p.spans_us(), ::testing::ElementsAre(1000, 3000));
}

// Found by torch_trace_fuzz (the CI run's fixed seed, once the binary changed): a later attempt
// marked the earlier ones restarted by listing the id of every attempt below it, so an attempt
// number near a billion took minutes and gigabytes. Now only the highest attempt is kept.
TEST(ImportCorruptTest, AnAttemptNearABillionMarksTheFirstRestartedWithoutListingThemAll) {
  const auto start = [](int64_t attempt) {
    return absl::StrCat(
        "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, \"frame_id\": 0, "
        "\"frame_compile_id\": 0, \"attempt\": ",
        attempt, "}\n");
  };
  v1::SessionCapture c = Import(start(0) + start(1) + start(999999999));
  ASSERT_EQ(c.compiles_size(), 3);
  EXPECT_EQ(c.compiles(0).id(), "0/0");
  EXPECT_EQ(c.compiles(0).status(), v1::Compile::RESTARTED);
  EXPECT_EQ(c.compiles(1).id(), "0/0_1");
  EXPECT_EQ(c.compiles(1).status(), v1::Compile::RESTARTED);
  EXPECT_EQ(c.compiles(2).id(), "0/0_999999999");
  EXPECT_NE(c.compiles(2).status(), v1::Compile::RESTARTED);
}

// Found with the test above: the importer spelled compile ids the validator refused, so a log with
// either imported as "inconsistent". Compiled autograd ids ("!1/0/0", torch's spelling) are read;
// numbers past 9 digits leave the record without a compile, with a diagnostic.
TEST(ImportCorruptTest, CompiledAutogradIdsAndNumbersPastNineDigits) {
  const auto start = [](absl::string_view ids) {
    return absl::StrCat("V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, ", ids,
                        "}\n");
  };
  v1::SessionCapture c = Import(
      start(R"("frame_id": 0, "frame_compile_id": 0, "attempt": 0, "compiled_autograd_id": 1)") +
      start(R"("frame_id": 0, "frame_compile_id": 0, "attempt": 17335270988154551)") +
      start(R"("frame_id": 1000000000, "frame_compile_id": 0)") +
      start(R"("frame_id": 0, "frame_compile_id": 0, "compiled_autograd_id": -1)"));
  ASSERT_EQ(c.compiles_size(), 1);
  EXPECT_EQ(c.compiles(0).id(), "!1/0/0");
  EXPECT_THAT(
      Diagnostics(c),
      HasSubstr("compile id numbers past 999999999 (the record is kept without a compile)"));
}

// A str-table name past what a path can be is clipped at a character boundary (the frames that
// name it get valid UTF-8) and counted; the budget counts each copy a stack makes of it.
// Found by torch_trace_fuzz: the stand-in frame of a compile logged with no id took the next free
// frame id, and a frame torch logged after it with that id was filed under the stand-in.
TEST(ImportCorruptTest, AFrameLoggedAfterACompileWithNoIdKeepsItsOwnId) {
  const std::string log =
      "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, \"frame_id\": 0, "
      "\"frame_compile_id\": 0, \"attempt\": 0}\n"
      "V1129 14:05:13.136000 1 a.py:1] {\"compilation_metrics\": {}, \"frame_compile_id\": 0}\n"
      "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, \"frame_id\": 1, "
      "\"frame_compile_id\": 0, \"attempt\": 0}\n";
  v1::SessionCapture c = Import(log);
  ASSERT_EQ(c.compiles_size(), 3);
  EXPECT_EQ(c.compiles(1).id(), "-/0");
  EXPECT_EQ(c.compiles(2).id(), "1/0");
  EXPECT_EQ(c.compiles(2).frame_id(), 1u);
}

// Found by torch_trace_fuzz: a cache key part's hash was cut to 16 bytes inside a character, and a
// capture with a string that is not UTF-8 does not load back.
TEST(ImportCorruptTest, ACacheKeyHashIsCutOnACharacterBoundary) {
  const std::string ids = R"("frame_id": 0, "frame_compile_id": 0, "attempt": 0)";
  const std::string log =
      "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, " + ids + "}\n" +
      "V1129 14:05:13.136000 1 a.py:1] {\"artifact\": {\"name\": \"fx_graph_cache_miss\", "
      "\"encoding\": \"json\"}, " +
      ids + ", \"has_payload\": \"0\"}\n" +
      "\t{\"key\": \"k\", \"cache_state\": \"miss\", \"components\": "
      "[\"[aaaaaaaaaaaaaaa\u00e9\u00e9] gm: x\"]}\n";
  v1::SessionCapture c = Import(log);
  ASSERT_EQ(c.compiles_size(), 1);
  ASSERT_EQ(c.compiles(0).cache_events_size(), 1);
  ASSERT_EQ(c.compiles(0).cache_events(0).components_size(), 1);
  EXPECT_EQ(c.compiles(0).cache_events(0).components(0).hash(), "aaaaaaaaaaaaaaa");
  EXPECT_EQ(c.compiles(0).cache_events(0).components(0).name(), "gm");
}

// Draft export's records, hostile: past 4096 of each kind they are counted, not kept; locals and
// symbol sources that are not strings are skipped, long ones clipped; a symbol with no name is a
// bad symbol record; a guard_added of no compile that torch did not evaluate is no issue.
TEST(ImportCorruptTest, DraftExportRecordsAreCappedAndTheirOddFieldsSkipped) {
  const std::string header = "V1129 14:05:13.136000 1 a.py:1] ";
  std::string log = absl::StrCat(
      header, R"j({"guard_added": {"expr": "Eq(s0, 3)", "prefix": "eval", "frame_locals": )j",
      R"j({"locals": {"a": 3, "b": [1], "c": ")j", std::string(4000, 'x'),
      R"j("}, "symbols": "s0"}, "symbol_to_sources": {"s0": "L['x'].size()[0]"}}})j", "\n");
  for (int i = 0; i < 4100; ++i) {
    absl::StrAppend(&log, header, R"j({"propagate_real_tensors": {"expr": "u0 < )j", i,
                    R"j(", "result": "False"}, "stack": [{"line": 3, "name": "f", "filename": )j",
                    R"j("/m/a.py"}]})j", "\n");
  }
  absl::StrAppend(&log, header, R"j({"guard_added": {"expr": "u0 >= 0"}})j", "\n");
  absl::StrAppend(&log, header, R"j({"create_unbacked_symbol": {"vr": "[0, 4]"}})j", "\n");
  absl::StrAppend(&log, header, R"j({"missing_fake_kernel": "not an object"})j", "\n");
  v1::SessionCapture c = Import(log);
  ASSERT_EQ(c.export_issues_size(), 4096);
  const v1::ExportIssue& guard = c.export_issues(0);
  EXPECT_EQ(guard.kind(), v1::ExportIssue::GUARD_EVALUATED);
  EXPECT_EQ(guard.locals().size(), 1u);  // "a" and "b" are no strings
  EXPECT_EQ(guard.locals().at("c").size(), 512u);
  EXPECT_EQ(guard.symbol_sources().at("s0"), "L['x'].size()[0]");
  EXPECT_EQ(c.export_issues(1).expr(), "u0 < 0");
  EXPECT_EQ(c.export_issues(1).stack(0).file(), "/m/a.py");
  EXPECT_THAT(Diagnostics(c), HasSubstr("import: 5 export issue or data-dependent symbol record"));
  EXPECT_THAT(Diagnostics(c), HasSubstr("import: 1 bad symbol record"));
  EXPECT_TRUE(c.export_symbols().empty());
}

// A draft-export expression the analysis rewrites once per local is cut at 4 KiB on import.
TEST(ImportCorruptTest, ALongExportExpressionIsCut) {
  const std::string log =
      absl::StrCat("V1129 14:05:13.136000 1 a.py:1] {\"propagate_real_tensors\": {\"expr\": \"",
                   std::string(100000, 'u'), "\", \"result\": \"False\"}}\n");
  v1::SessionCapture c = Import(log);
  ASSERT_EQ(c.export_issues_size(), 1);
  EXPECT_EQ(c.export_issues(0).expr().size(), 4096u);
  EXPECT_EQ(c.export_issues(0).result(), "False");
}

// The budget for cache-key parts is on what they take in memory: torch's keys are hundreds of short
// parts, each a message and three strings, several times its text. Twenty misses of ten short
// parts ("[h0] gm: x") are 1 KB of text, which a budget on text would keep whole under 4 KiB; in
// memory each key is over a kilobyte.
TEST(ImportCorruptTest, TheCacheKeyBudgetCountsMemoryNotText) {
  std::string log;
  std::vector<std::string> parts;
  for (int p = 0; p < 10; ++p) parts.push_back(absl::StrCat("\"[h", p, "] gm: x\""));
  for (int i = 0; i < 20; ++i) {
    const std::string ids = absl::StrCat("\"frame_id\": ", i, ", \"frame_compile_id\": 0");
    absl::StrAppend(&log, "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, ",
                    ids, "}\n", "V1129 14:05:13.136000 1 a.py:1] {\"artifact\": {\"name\": ",
                    "\"fx_graph_cache_miss\", \"encoding\": \"json\"}, ", ids,
                    ", \"has_payload\": \"0\"}\n\t{\"key\": \"k", i,
                    "\", \"cache_state\": \"miss\", \"components\": [", absl::StrJoin(parts, ", "),
                    "]}\n");
  }
  TraceParseOptions options;
  options.cache_components_budget = 4 << 10;
  TraceImporter importer(options);
  importer.Feed(log);
  const v1::SessionCapture c = importer.Finish();
  ASSERT_EQ(c.compiles_size(), 20);
  int whole = 0;
  for (int i = 0; i < c.compiles_size(); ++i) {
    ASSERT_EQ(c.compiles(i).cache_events_size(), 1);
    const v1::CacheEvent& miss = c.compiles(i).cache_events(0);
    EXPECT_EQ(miss.key(), absl::StrCat("k", i));
    // All of a key's parts or none.
    EXPECT_THAT(miss.components_size(), testing::AnyOf(0, 10)) << miss.key();
    whole += miss.components_size() == 10;
  }
  EXPECT_GE(whole, 1);
  EXPECT_LE(whole, 3);
  // The first misses are the ones kept.
  EXPECT_EQ(c.compiles(0).cache_events(0).components_size(), 10);
  EXPECT_EQ(c.compiles(19).cache_events(0).components_size(), 0);
}

TEST(ImportCorruptTest, ALongStrTableNameIsClippedAndItsCopiesCounted) {
  const std::string name = absl::StrCat("/", std::string(4094, 'a'), "\xC3\xA9.py");  // é straddles
  const std::string log = absl::StrCat(
      "V1129 14:05:13.136000 1 a.py:1] {\"str\": [\"", name, "\", 0]}\n",
      "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": [{\"line\": 3, "
      "\"name\": \"f\", \"filename\": 0}]}, \"frame_id\": 0, \"frame_compile_id\": 0}\n");
  v1::SessionCapture c = Import(log);
  ASSERT_EQ(c.frames_size(), 1);
  EXPECT_EQ(c.frames(0).file(), absl::StrCat("/", std::string(4094, 'a')));  // not half of é
  EXPECT_THAT(Diagnostics(c), HasSubstr("import: 1 str table name longer than a path can be "
                                        "(clipped to 4096 bytes)"));

  TraceParseOptions budget;
  budget.memory_budget = 6000;  // the records' own bytes fit; the copy does not
  TraceImporter importer(budget);
  importer.Feed(log);
  importer.Finish();
  EXPECT_EQ(importer.Refusal(/*finished=*/true).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(importer.Refusal(true).message(),
              HasSubstr("plus 4095 bytes of file names its stacks copy from the str table"));
}

TEST(ImportCorruptTest, PayloadWithoutHeader) {
  v1::SessionCapture c = Import("\tdef forward(self):\n\t    return ()\n");
  EXPECT_THAT(Diagnostics(c), HasSubstr("2 payload lines with no record expecting them"));
}

TEST(ImportCorruptTest, AHugeLineClaimIsCutWithoutBufferingIt) {
  // A 2 GiB "line" would be a memory bomb if buffered; the cap cuts it. Stream 64 MiB + 1 of it.
  TraceImporter importer;
  importer.Feed("V1129 14:05:13.136000 1 a.py:1] {\"artifact\": {\"name\": \"x\"}, \"pad\": \"");
  const std::string block(1 << 20, 'x');
  for (int i = 0; i < 65; ++i) importer.Feed(block);
  importer.Feed("\"}\nV1129 14:05:13.136000 1 a.py:1] {\"str\": [\"/a.py\", 0]}\n");
  v1::SessionCapture c = importer.Finish();
  EXPECT_THAT(Diagnostics(c), HasSubstr("over the line-length cap"));
}

TEST(ImportCorruptTest, BinaryGarbage) {
  std::mt19937 rng(7);
  std::string garbage(1 << 16, '\0');
  for (char& ch : garbage) ch = static_cast<char>(rng());
  v1::SessionCapture c = Import(garbage, 333);
  EXPECT_EQ(c.compiles_size(), 0);
  // Garbage spliced into a real log: the real records still come through.
  const std::string log = HeroLog();
  const std::string spliced =
      log.substr(0, log.size() / 2) + "\n" + garbage + "\n" + log.substr(log.size() / 2);
  v1::SessionCapture d = Import(spliced, 1000);
  EXPECT_GE(d.compiles_size(), 3);
}

TEST(ImportCorruptTest, InvalidUtf8InPayloadsIsRepaired) {
  const std::string log =
      "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, \"frame_id\": 0, "
      "\"frame_compile_id\": 0, \"attempt\": 0}\n"
      "V1129 14:05:13.136000 1 a.py:1] {\"artifact\": {\"name\": \"dynamo_graph_break_reason\", "
      "\"encoding\": \"string\"}, "
      "\"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": \"x\"}\n"
      "\tGraph break in user code at /a.py:3\n\tReason: \xff\xfe bad bytes\n";
  v1::SessionCapture c = Import(log);
  ASSERT_EQ(c.compiles_size(), 1);
  ASSERT_EQ(c.compiles(0).graph_breaks_size(), 1);
  EXPECT_THAT(c.compiles(0).graph_breaks(0).reason(), HasSubstr("\xEF\xBF\xBD"));
  std::string bytes;
  EXPECT_TRUE(c.SerializeToString(&bytes));
}

TEST(ImportCorruptTest, MissingFileIsAClearError) {
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile("/nonexistent/trace.log", {});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(c.status().message(), HasSubstr("/nonexistent/trace.log"));
}

std::string WriteTemp(const std::string& name, absl::string_view bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// What is not a TORCH_TRACE log is refused, naming the file and why, never read as an empty
// session: an empty file, a line of text, a text file, random bytes.
TEST(ImportCorruptTest, WhatIsNotATraceIsRefused) {
  struct Case {
    std::string name, bytes, says;
  };
  std::mt19937 rng(7);
  std::string random(64 << 10, '\0');
  for (char& c : random) c = static_cast<char>(rng());
  std::string text;
  for (int i = 0; i < 500; ++i) absl::StrAppend(&text, "INFO step ", i, " loss 0.25\n");
  const std::vector<Case> cases = {
      {"empty.log", "", "empty, not a TORCH_TRACE log"},
      {"hello.log", "hello world\n", "not a TORCH_TRACE log (no record header in its 1 line)"},
      {"stdout.log", text, "not a TORCH_TRACE log (no record header in the first 100 lines)"},
      {"random.log", random, "not a TORCH_TRACE log (no record header in the first 100 lines)"},
      {"nul.log", std::string(100000, '\0'),
       "not a TORCH_TRACE log (no record header in its 1 line)"},
  };
  for (const Case& c : cases) {
    const std::string path = WriteTemp(c.name, c.bytes);
    absl::StatusOr<v1::SessionCapture> imported = ImportTraceFile(path, {});
    EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(std::string(imported.status().message()), path + ": " + c.says) << c.name;
  }
}

// A log with a header within the first lines is a log, whatever else it holds.
TEST(ImportCorruptTest, ALogWithJunkBeforeItsFirstRecordIsStillALog) {
  std::string log;
  for (int i = 0; i < 99; ++i) log += "a line torch did not write\n";
  log +=
      "V1129 14:05:13.136000 1 a.py:1] {\"dynamo_start\": {\"stack\": []}, \"frame_id\": 0, "
      "\"frame_compile_id\": 0, \"attempt\": 0}\n";
  absl::StatusOr<v1::SessionCapture> imported = ImportTraceFile(WriteTemp("junk.log", log), {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->compiles_size(), 1);
  EXPECT_THAT(Diagnostics(*imported), HasSubstr("99 lines that are neither"));
  // One more line of junk puts the first header past the probe: refused, however it is chunked.
  log = "one more\n" + log;
  EXPECT_EQ(ImportTraceFile(WriteTemp("junk101.log", log), {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}}) {
    TraceImporter importer;
    for (size_t i = 0; i < log.size(); i += chunk) importer.Feed(log.substr(i, chunk));
    EXPECT_EQ(importer.Refusal().code(), absl::StatusCode::kInvalidArgument) << chunk;
  }
}

// A .log.gz cut short: zlib reads what it can and then calls it the end; the import says it was
// cut, naming the file, rather than analyzing the first part as if it were the whole session.
TEST(ImportCorruptTest, TruncatedGzipIsDataLoss) {
  absl::StatusOr<std::string> gz = ReadFile(
      CL_SOURCE_DIR "/tests/fixtures/torch_trace/tlparse-corpus/tlparse/cache_hit_miss.log.gz");
  ASSERT_TRUE(gz.ok()) << gz.status();
  const std::string path =
      WriteTemp("cut.log.gz", absl::string_view(*gz).substr(0, gz->size() / 2));
  absl::StatusOr<v1::SessionCapture> imported = ImportTraceFile(path, {});
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(imported.status().message(), HasSubstr(path + ": truncated or corrupt gzip stream"));
  // The whole file still reads.
  EXPECT_TRUE(ImportTraceFile(WriteTemp("whole.log.gz", *gz), {}).ok());
}

TEST(ImportCorruptTest, CorruptGzipIsAClearError) {
  const std::string path = ::testing::TempDir() + "/bad.log.gz";
  std::ofstream(path, std::ios::binary) << std::string("\x1f\x8b\x08\x00garbage-after-magic", 23);
  absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(path, {});
  // zlib reports the damage (an error naming the file), or yields no readable record: either way a
  // clear answer and never a made-up compile.
  if (c.ok()) {
    EXPECT_EQ(c->compiles_size(), 0);
    EXPECT_THAT(Diagnostics(*c), ::testing::Not(HasSubstr("records read")));
  } else {
    EXPECT_THAT(c.status().message(), HasSubstr("bad.log.gz"));
  }
}

}  // namespace
}  // namespace cl

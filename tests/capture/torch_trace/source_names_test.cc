// SourceNameScanner: on every real log of the fixtures, the paths it finds include every user file
// the import names (the files AttachSources asks for), however the log is cut into chunks; and
// the ways a path is spelled, cut or is not a path.
#include "capture/torch_trace/source_names.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "capture/torch_trace/importer.h"
#include "common/file_io.h"
#include "common/gz_read.h"
#include "common/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/fixtures.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

std::vector<std::string> ScanInChunks(absl::string_view text, size_t chunk) {
  SourceNameScanner scanner;
  for (size_t at = 0; at < text.size(); at += chunk) scanner.Feed(text.substr(at, chunk));
  return scanner.Finish();
}

// The files an import of `log` asks AttachSources for: the user files its session names.
std::vector<std::string> NamedUserFiles(const std::string& log) {
  ImportOptions options;
  options.read_sources = false;
  absl::StatusOr<v1::SessionCapture> capture = ImportTraceFile(log, options);
  if (!capture.ok()) return {};
  std::vector<std::string> asked;
  AttachSources(&*capture, {}, [&](const std::string& file) -> std::optional<std::string> {
    asked.push_back(file);
    return std::nullopt;
  });
  return asked;
}

TEST(SourceNamesTest, FindsEveryUserFileTheImportNamesInEveryFixtureLog) {
  const std::vector<std::string> logs = testing::FixtureTraceLogs();
  ASSERT_GE(logs.size(), 50u);
  size_t logs_naming_files = 0, files = 0;
  for (const std::string& log : logs) {
    SCOPED_TRACE(log);
    const std::vector<std::string> named = NamedUserFiles(log);
    if (named.empty()) continue;
    ++logs_naming_files;
    files += named.size();
    std::string text;
    ASSERT_TRUE(ReadMaybeGzipped(log, 1 << 20, [&](absl::string_view bytes) {
                  text.append(bytes.data(), bytes.size());
                  return true;
                }).ok());
    // Whole, in chunks that cut lines and paths anywhere, and a byte at a time on a small log.
    std::vector<size_t> chunks = {text.size() + 1, 4093, 61};
    if (text.size() < 20'000) chunks.push_back(1);
    for (const size_t chunk : chunks) {
      SCOPED_TRACE(absl::StrCat("chunks of ", chunk));
      const std::vector<std::string> scanned = ScanInChunks(text, chunk);
      const absl::flat_hash_set<std::string> found(scanned.begin(), scanned.end());
      for (const std::string& file : named) EXPECT_TRUE(found.contains(file)) << file;
    }
  }
  // The corpus has logs of user code: the check above is not vacuous.
  EXPECT_GE(logs_naming_files, 20u);
  EXPECT_GE(files, 40u);
}

TEST(SourceNamesTest, ThePlacesALogSpellsAPath) {
  const std::string log =
      "V1206 00:00:00.000000 1 torch/_logging/structured.py:22] {\"str\": "
      "[\"/home/me/My Project/train.py\", 0]}\n"
      "V1206 00:00:00.000000 1 torch/_dynamo/convert_frame.py:9] {\"dynamo_start\": {\"stack\": "
      "[{\"line\": 3, \"name\": \"f\", \"filename\": \"/w/model.py\"}]}}\n"
      "\t    add = torch.add(x, y);  # File: /w/layers.py:12 in forward, code: return x + y\n"
      "  File \"/w/data.py\", line 40, in load\n"
      "see /w/notes.py for why; /w/cache.pyc and /w/stub.pyi are not sources\n";
  EXPECT_THAT(ScanInChunks(log, log.size()),
              UnorderedElementsAre("torch/_logging/structured.py", "/home/me/My Project/train.py",
                                   "Project/train.py", "torch/_dynamo/convert_frame.py",
                                   "/w/model.py", "/w/layers.py", "/w/data.py", "/w/notes.py"));
}

TEST(SourceNamesTest, APathCutByEveryChunkEdgeIsFoundWhole) {
  const std::string line = "{\"filename\": \"/workspace/models/gpt.py\", \"line\": 1}\n";
  for (size_t cut = 0; cut <= line.size(); ++cut) {
    SCOPED_TRACE(cut);
    SourceNameScanner scanner;
    scanner.Feed(absl::string_view(line).substr(0, cut));
    scanner.Feed(absl::string_view(line).substr(cut));
    EXPECT_THAT(scanner.Finish(), ElementsAre("/workspace/models/gpt.py"));
  }
}

TEST(SourceNamesTest, TheLastLineNeedsNoNewline) {
  SourceNameScanner scanner;
  scanner.Feed("x # File: /w/a.py:1 in f\nx # File: /w/b");
  scanner.Feed(".py");
  EXPECT_THAT(scanner.Finish(), ElementsAre("/w/a.py", "/w/b.py"));
}

TEST(SourceNamesTest, PathsAnywhereOnALineLongerThanWhatIsCarried) {
  // A 200 KB payload line, fed in 1000-byte chunks: paths at its start, middle and end.
  std::string line = "{\"filename\": \"/w/first.py\"} ";
  line.append(100'000, 'x');
  line += " \"/w/middle.py\" ";
  line.append(100'000, 'y');
  line += " \"/w/last.py\"";
  EXPECT_THAT(ScanInChunks(line, 1000), ElementsAre("/w/first.py", "/w/middle.py", "/w/last.py"));
}

TEST(SourceNamesTest, NotPaths) {
  EXPECT_THAT(ScanInChunks("\".py\" <eval_with_key>.py x.pyc y.py_old \"z.python\"\n", 7),
              IsEmpty());
}

TEST(SourceNamesTest, KeepsAtMostItsCapOfPaths) {
  std::string log;
  for (size_t i = 0; i < SourceNameScanner::kMaxNames + 10; ++i)
    absl::StrAppend(&log, "\"/w/f", i, ".py\"\n");
  SourceNameScanner scanner;
  scanner.Feed(log);
  const std::vector<std::string> names = scanner.Finish();
  ASSERT_EQ(names.size(), SourceNameScanner::kMaxNames);
  EXPECT_EQ(names.back(), absl::StrCat("/w/f", SourceNameScanner::kMaxNames - 1, ".py"));
}

// A source file in Latin-1 is read as UTF-8 (its other bytes replaced): a capture's strings must
// be, or the capture would not read back and an upload carrying it would be refused.
TEST(SourceNamesTest, ASourceFileThatIsNotUtf8IsReadAsUtf8) {
  const std::string path = ::testing::TempDir() + "/latin1.py";
  ASSERT_TRUE(WriteFile(path, "# caf\xe9\nx = 1\n").ok());
  ImportOptions options;
  const std::optional<std::string> text = ReadSourceFile(options, path);
  ASSERT_TRUE(text.has_value());
  EXPECT_TRUE(IsValidUtf8(*text));
  EXPECT_NE(text->find("x = 1\n"), std::string::npos);
  v1::SourceFile file;
  file.set_text(*text);
  v1::SourceFile back;
  EXPECT_TRUE(back.ParseFromString(file.SerializeAsString()));
}

}  // namespace
}  // namespace cl

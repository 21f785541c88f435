// The import streams: peak memory follows the capture, not the log. A 256 MiB log whose records
// the capture keeps only up to a budget (unmodelled artifacts: 8 MiB of extras in all, then only
// counted) must import in about the memory of a 4 MiB log of the same records. Each import runs in
// a child process, whose peak RSS (wait4's ru_maxrss) is the measure.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "capture/torch_trace/importer.h"
#include "common/digest.h"
#include "gtest/gtest.h"
#include "tests/testing/proc_stats.h"

namespace cl {
namespace {

// A log of `mib` MiB: artifact records the parser does not model, each with a 64 KiB payload.
std::string WriteLog(const std::filesystem::path& dir, int mib) {
  std::string payload;
  for (int line = 0; payload.size() < (64 << 10); ++line) {
    absl::StrAppend(&payload, line == 0 ? "" : "\n", "row ", line, std::string(100, 'x'));
  }
  std::string record;
  for (size_t at = 0; at <= payload.size();) {
    const size_t nl = std::min(payload.find('\n', at), payload.size());
    absl::StrAppend(&record, "\t", payload.substr(at, nl - at), "\n");
    at = nl + 1;
  }
  const std::string path = (dir / absl::StrCat("log_", mib, "mib.log")).string();
  std::ofstream out(path, std::ios::binary);
  size_t written = 0;
  for (int i = 0; written < (static_cast<size_t>(mib) << 20); ++i) {
    const std::string header = absl::StrCat(
        "V1129 14:05:13.136000 21946 torch/_logging/structured.py:27] {\"artifact\": {\"name\": "
        "\"blob_",
        i,
        "\", \"encoding\": \"string\"}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, "
        "\"has_payload\": \"",
        Md5Hex(payload), "\"}\n");
    out << header << record;
    written += header.size() + record.size();
  }
  return path;
}

// Peak RSS in KiB of a child that imports `path`; -1 if the import failed.
long ImportPeakKib(const std::string& path) {
  const pid_t pid = fork();
  if (pid == 0) {
    ImportOptions options;
    options.read_sources = false;
    absl::StatusOr<v1::SessionCapture> c = ImportTraceFile(path, options);
    _exit(c.ok() && c->extras_size() > 0 ? 0 : 1);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return -1;
  return usage.ru_maxrss;
}

TEST(ImportStreamingTest, PeakMemoryDoesNotGrowWithTheLog) {
  if (testing::kAsan)
    GTEST_SKIP()
        << "ASan holds freed memory in its quarantine: RSS says nothing about streaming here";
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "import_streaming";
  std::filesystem::create_directories(dir);
  const long small = ImportPeakKib(WriteLog(dir, 4));
  const long large = ImportPeakKib(WriteLog(dir, 256));
  std::filesystem::remove_all(dir);
  ASSERT_GT(small, 0);
  ASSERT_GT(large, 0);
  std::printf("peak RSS: %ld KiB for a 4 MiB log, %ld KiB for a 256 MiB log\n", small, large);
  // The extras budget (8 MiB), the md5 batch (8 MiB) and one 8 MiB mapping window at most apart;
  // reading the log whole would add 252 MiB.
  EXPECT_LT(large - small, 48 << 10);
}

}  // namespace
}  // namespace cl

#include "tests/testing/fixtures.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cl::testing {

std::string FixturePath(absl::string_view path) {
  const std::string plain = absl::StrCat(CL_SOURCE_DIR, "/tests/fixtures/", path);
  const std::string gzipped = absl::StrCat(plain, ".gz");
  std::error_code ec;
  // Neither there: the plain name, so that the failure names the fixture the test wanted.
  return !std::filesystem::exists(plain, ec) && std::filesystem::exists(gzipped, ec) ? gzipped
                                                                                     : plain;
}

std::vector<std::string> FixtureTraceLogs() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(FixturePath("torch_trace"))) {
    const std::string ext =
        std::filesystem::path(std::string(WrittenName(e.path().string()))).extension().string();
    if (e.is_regular_file() && e.file_size() > 0 && (ext == ".log" || ext == ".txt"))
      out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<std::string> ReadFixture(const std::string& path) {
  gzFile in = gzopen(path.c_str(), "rb");  // zlib passes a plain file through unchanged
  if (in == nullptr) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  std::string out;
  char chunk[1 << 16];
  int n = 0;
  while ((n = gzread(in, chunk, sizeof(chunk))) > 0) out.append(chunk, static_cast<size_t>(n));
  int err = Z_OK;
  const std::string why = n < 0 ? gzerror(in, &err) : "";
  gzclose(in);
  if (n < 0) return absl::DataLossError(absl::StrCat(path, ": ", why));
  return out;
}

absl::string_view WrittenName(absl::string_view path) {
  absl::ConsumeSuffix(&path, ".gz");
  return path;
}

}  // namespace cl::testing

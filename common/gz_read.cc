#include "common/gz_read.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cl {

namespace {

// DataLoss naming `path`, what went wrong and zlib's words for it (without the path zlib puts in
// front of them); OK when zlib has no error to report.
absl::Status GzError(gzFile in, const std::string& path, absl::string_view what) {
  int err = Z_OK;
  absl::string_view why = gzerror(in, &err);
  if (err == Z_OK) return absl::OkStatus();
  absl::ConsumePrefix(&why, path);
  absl::ConsumePrefix(&why, ": ");
  return absl::DataLossError(absl::StrCat(path, ": ", what, " (", why, ")"));
}

}  // namespace

absl::Status ReadMaybeGzipped(const std::string& path, size_t chunk,
                              absl::FunctionRef<bool(absl::string_view)> consume) {
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open (", std::strerror(errno), ")"));
  }
  gzbuffer(in, 256 << 10);
  // Not zeroed: a 1 MiB chunk cleared for an empty or few-KB log was a fifth of such a run.
  const std::unique_ptr<char[]> buffer(new char[chunk]);
  absl::Status status;
  while (true) {
    const int n = gzread(in, buffer.get(), static_cast<unsigned>(chunk));
    if (n < 0) {
      status = GzError(in, path, "corrupt gzip stream");
      if (status.ok()) status = absl::DataLossError(absl::StrCat(path, ": unreadable"));
      break;
    }
    if (n == 0) {
      status = GzError(in, path, "truncated or corrupt gzip stream");
      break;
    }
    if (!consume(absl::string_view(buffer.get(), static_cast<size_t>(n)))) break;
  }
  gzclose(in);
  return status;
}

}  // namespace cl

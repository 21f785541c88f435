// Reading a file that may be gzip-compressed, a chunk at a time: zlib passes a plain file through
// unchanged, so one loop reads `run.log` and `run.log.gz`.
#ifndef COMMON_GZ_READ_H_
#define COMMON_GZ_READ_H_

#include <cstddef>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cl {

// Hands `path`'s (decompressed) bytes to `consume`, at most `chunk` at a time, in order, until the
// end or until `consume` returns false. NotFound when the file does not open; DataLoss, naming the
// path, when the gzip stream is corrupt or cut short (zlib reads a truncated stream as its end, and
// only its error state tells).
absl::Status ReadMaybeGzipped(const std::string& path, size_t chunk,
                              absl::FunctionRef<bool(absl::string_view)> consume);

}  // namespace cl

#endif  // COMMON_GZ_READ_H_

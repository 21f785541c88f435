// Whole-file reads and writes with errors as statuses that name the path.
#ifndef COMMON_FILE_IO_H_
#define COMMON_FILE_IO_H_

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cl {

absl::StatusOr<std::string> ReadFile(const std::string& path);
// Writes a plain file through a temporary file and a rename, so a reader never sees half a file;
// what is not one (/dev/null, /dev/stdout, a FIFO, a symlink) is written through as it is.
absl::Status WriteFile(const std::string& path, absl::string_view contents);
// The same, for contents too large to build in memory first: `write` writes them to the open file
// `fd` (and says how that went); the file appears under `path` only if it succeeds.
absl::Status WriteFileWith(const std::string& path, absl::FunctionRef<absl::Status(int fd)> write);
// Writes all of `bytes` to `fd` (retrying short and interrupted writes); DATA_LOSS naming `path`
// and the reason otherwise. For a WriteFileWith writer.
absl::Status WriteAll(int fd, const std::string& path, absl::string_view bytes);

}  // namespace cl

#endif  // COMMON_FILE_IO_H_

// A plain (not gzipped) log file mapped read-only, for reading it without copying it: the import
// feeds its tokenizer straight from the mapping, and cl-client hands gRPC slices of it to send.
#ifndef COMMON_MAPPED_LOG_H_
#define COMMON_MAPPED_LOG_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"

namespace cl {

class MappedLog {
 public:
  // Null when `path` is not a regular file of two bytes or more, does not map, or is gzipped
  // (starts with gzip's magic bytes): the caller then reads it through zlib (gz_read.h).
  static std::unique_ptr<MappedLog> Open(const std::string& path);

  MappedLog(const MappedLog&) = delete;
  MappedLog& operator=(const MappedLog&) = delete;
  ~MappedLog();

  absl::string_view bytes() const { return {data_, size_}; }

  // Lets the process drop the pages `range` (a part of bytes()) covers whole: read again, they
  // come back from the page cache. So a log read once through holds no more of the process's
  // memory than the part being read.
  void Drop(absl::string_view range) const;

  // The system's page size: pieces cut at its multiples are dropped whole.
  static size_t PageBytes();

 private:
  MappedLog(const char* data, size_t size) : data_(data), size_(size) {}

  const char* data_;
  size_t size_;
};

}  // namespace cl

#endif  // COMMON_MAPPED_LOG_H_

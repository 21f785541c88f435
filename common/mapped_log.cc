#include "common/mapped_log.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>

namespace cl {

std::unique_ptr<MappedLog> MappedLog::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2) {
    close(fd);
    return nullptr;
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return nullptr;
  const auto* bytes = static_cast<const unsigned char*>(map);
  if (bytes[0] == 0x1f && bytes[1] == 0x8b) {  // gzip's magic
    munmap(map, size);
    return nullptr;
  }
  madvise(map, size, MADV_SEQUENTIAL);
  return std::unique_ptr<MappedLog>(new MappedLog(static_cast<const char*>(map), size));
}

MappedLog::~MappedLog() { munmap(const_cast<char*>(data_), size_); }

void MappedLog::Drop(absl::string_view range) const {
  const uintptr_t page = PageBytes();
  const auto begin = reinterpret_cast<uintptr_t>(range.data());
  const uintptr_t first = (begin + page - 1) & ~(page - 1);
  uintptr_t last = (begin + range.size()) & ~(page - 1);
  if (range.data() + range.size() == data_ + size_) last = begin + range.size();  // the tail page
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

size_t MappedLog::PageBytes() {
  static const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return kPage;
}

}  // namespace cl

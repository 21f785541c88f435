#include "client/huge_pages.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/file_io.h"

namespace cl {
namespace {

constexpr int kHugeOrder = 9;  // 2^9 pages of 4 KiB: 2 MiB
constexpr uint64_t kMinFreeBytes = uint64_t{1} << 30;

}  // namespace

uint64_t FreeHugeBlockBytes(absl::string_view buddyinfo, uint64_t page_bytes) {
  uint64_t free = 0;
  // "Node 0, zone   Normal   1199   5389 ...": the free blocks of order 0, 1, 2, ... of the zone.
  for (absl::string_view line : absl::StrSplit(buddyinfo, '\n', absl::SkipEmpty())) {
    const size_t zone = line.find("zone");
    if (!absl::StartsWith(line, "Node") || zone == absl::string_view::npos) return 0;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line.substr(zone + 4), ' ', absl::SkipEmpty());
    // The zone's name, then one count per order.
    for (size_t order = 0; order + 1 < fields.size(); ++order) {
      uint64_t blocks = 0;
      if (!absl::SimpleAtoi(fields[order + 1], &blocks)) return 0;
      if (order >= kHugeOrder) free += blocks * (page_bytes << order);
    }
  }
  return free;
}

bool HugePagesFit(uint64_t input_bytes, uint64_t free_huge_bytes) {
  return input_bytes >= kHugePagesMinInputBytes && free_huge_bytes >= kMinFreeBytes &&
         free_huge_bytes / 4 >= input_bytes;
}

uint64_t InputBytes(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  uint64_t total = 0;
  const auto add = [&total](const fs::path& file, uint64_t size) {
    total += absl::EndsWith(file.string(), ".gz") ? 8 * size : size;
  };
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
        if (e.is_regular_file(ec)) add(e.path(), e.file_size(ec));
      }
    } else if (const uintmax_t size = fs::file_size(path, ec); !ec) {
      add(path, size);
    }
  }
  return total;
}

uint64_t ReadFreeHugeBlockBytes() {
  absl::StatusOr<std::string> buddyinfo = ReadFile("/proc/buddyinfo");
  if (!buddyinfo.ok()) return 0;
  return FreeHugeBlockBytes(*buddyinfo, static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
}

}  // namespace cl

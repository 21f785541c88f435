#include "client/progress.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/number_format.h"

namespace cl {

std::string ProgressLine::Text(const std::string& what, uint64_t done, uint64_t size,
                               absl::string_view detail, absl::Duration elapsed) {
  std::string line =
      absl::StrCat(std::filesystem::path(what).filename().string(), ": ", FormatBytes(done));
  if (size > 0) {
    const double share = static_cast<double>(done) / static_cast<double>(size);
    absl::StrAppend(&line, " of ", FormatBytes(size), " (", FormatPercent(share), ")");
  }
  if (!detail.empty()) absl::StrAppend(&line, " · ", detail);
  if (size > 0 && done > 0 && done < size) {
    const absl::Duration left = elapsed * (static_cast<double>(size - done) / done);
    absl::StrAppend(&line, " · about ", absl::ToInt64Seconds(left) + 1, " s left");
  }
  return line;
}

void ProgressLine::Update(const std::string& what, uint64_t done, uint64_t size,
                          absl::FunctionRef<std::string()> detail, absl::Time now) {
  if (!enabled_) return;
  if (start_ == absl::InfiniteFuture()) start_ = now;
  // Not in the first second, and at most ten times a second.
  if (now - start_ < absl::Seconds(1) || now - last_ < absl::Milliseconds(100)) return;
  last_ = now;
  out_ << "\r\x1b[K" << Text(what, done, size, detail(), now - start_) << std::flush;
  drawn_ = true;
}

void ProgressLine::Clear() {
  if (!drawn_) return;
  out_ << "\r\x1b[K" << std::flush;
  drawn_ = false;
}

}  // namespace cl

#include "lint/parse_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/digest.h"

namespace cl::lint {

ParsedFile::ParsedFile(const std::string& path, ParsedSource source) : parsed(std::move(source)) {
  if (parsed.tree.root() != kNoNode) index.emplace(path, parsed.tree);
}

std::shared_ptr<const ParsedFile> ParseFile(PythonParser& parser, const std::string& path,
                                            absl::string_view text, const ParseLimits& limits) {
  return std::make_shared<const ParsedFile>(path, parser.Parse(text, limits));
}

ParseCache::ParseCache(size_t max_entries, size_t max_source_bytes)
    : max_entries_(max_entries), max_source_bytes_(max_source_bytes) {}

std::shared_ptr<const ParsedFile> ParseCache::Get(PythonParser& parser, const std::string& path,
                                                  absl::string_view text,
                                                  const ParseLimits& limits) {
  std::string key = absl::StrCat(Sha256Hex(text), "\x1f", limits.max_bytes, "\x1f",
                                 limits.max_lines, "\x1f", limits.timeout_micros, "\x1f", path);
  {
    absl::MutexLock lock(&mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      ++hits_;
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return it->second.file;
    }
    ++misses_;
  }
  std::shared_ptr<const ParsedFile> file = ParseFile(parser, path, text, limits);
  if (!file->index) return file;

  absl::MutexLock lock(&mu_);
  if (text.size() > max_source_bytes_ || max_entries_ == 0) return file;
  if (entries_.contains(key)) return file;  // another scan parsed it meanwhile
  lru_.push_front(key);
  entries_.emplace(std::move(key), Entry{file, text.size(), lru_.begin()});
  source_bytes_ += text.size();
  EvictPastLimits();
  return file;
}

void ParseCache::SetLimits(size_t max_entries, size_t max_source_bytes) {
  absl::MutexLock lock(&mu_);
  max_entries_ = max_entries;
  max_source_bytes_ = max_source_bytes;
  EvictPastLimits();
}

void ParseCache::EvictPastLimits() {
  while (entries_.size() > max_entries_ || source_bytes_ > max_source_bytes_) {
    auto oldest = entries_.find(lru_.back());
    source_bytes_ -= oldest->second.bytes;
    entries_.erase(oldest);
    lru_.pop_back();
  }
}

ParseCache::Stats ParseCache::stats() const {
  absl::MutexLock lock(&mu_);
  return {hits_, misses_, entries_.size(), source_bytes_};
}

}  // namespace cl::lint

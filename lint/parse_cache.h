// Parsed and indexed source files kept across scans, shared by the scans that send them again.
//
// A fleet uploads the same model's files in session after session, and parsing and indexing them
// is most of a lint scan (tree-sitter, then the module index). The cache keys a file by its path,
// the SHA-256 of its text (computed here: a client's claimed sha256 is never trusted) and the parse
// limits, and holds at most `max_entries` files and `max_source_bytes` of their text, dropping the
// least recently used. Entries are immutable once made and shared (shared_ptr<const>), so scans on
// many threads read one copy. Only files that parsed are kept: a parse that ran out of time may
// well finish next time.
#ifndef LINT_PARSE_CACHE_H_
#define LINT_PARSE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "lint/module_index.h"
#include "lint/python_parser.h"

namespace cl::lint {

// One source file, parsed and indexed. The index points into `parsed.tree`: both live here.
struct ParsedFile {
  ParsedFile(const std::string& path, ParsedSource source);
  ParsedFile(const ParsedFile&) = delete;
  ParsedFile& operator=(const ParsedFile&) = delete;

  ParsedSource parsed;
  std::optional<ModuleIndex> index;  // none when nothing could be parsed
};

// Parses and indexes `text` (no cache).
std::shared_ptr<const ParsedFile> ParseFile(PythonParser& parser, const std::string& path,
                                            absl::string_view text, const ParseLimits& limits);

class ParseCache {
 public:
  ParseCache(size_t max_entries, size_t max_source_bytes);

  // The file from the cache, or parsed with `parser` (outside the lock) and kept.
  std::shared_ptr<const ParsedFile> Get(PythonParser& parser, const std::string& path,
                                        absl::string_view text, const ParseLimits& limits);

  // New bounds, evicting the least recently used files past them at once. 0 entries keeps nothing.
  void SetLimits(size_t max_entries, size_t max_source_bytes) ABSL_LOCKS_EXCLUDED(mu_);

  struct Stats {
    uint64_t hits = 0, misses = 0;
    size_t entries = 0, source_bytes = 0;
  };
  Stats stats() const;

 private:
  struct Entry {
    std::shared_ptr<const ParsedFile> file;
    size_t bytes = 0;
    std::list<std::string>::iterator lru;  // position in lru_
  };

  void EvictPastLimits() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  size_t max_entries_ ABSL_GUARDED_BY(mu_);
  size_t max_source_bytes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);  // keys, most recently used first
  size_t source_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace cl::lint

#endif  // LINT_PARSE_CACHE_H_

// The paths of Python files a TORCH_TRACE log spells, found without importing it.
//
// A client that streams a raw log to cl-server (which imports it there) also offers the user's
// source files, which only the client's machine has. Which files the import will name is known
// only after it; the scanner finds a superset as the bytes go by, at the cost of a search for
// ".py": every way the importer learns a file spells its path in full, ending in ".py", inside
// quotes (a JSON stack's "filename", a `str` table entry, compilation_metrics' co_filename, a
// traceback's `File "..."`) or after `# File: ` (an FX graph's node comments). The server keeps the
// offered files the imported session names, the ones an in-process import reads from disk
// (AttachSources), so a path found here and named nowhere costs only its bytes on the wire.
// source_names_test holds the superset to what the import names on every fixture log.
#ifndef CAPTURE_TORCH_TRACE_SOURCE_NAMES_H_
#define CAPTURE_TORCH_TRACE_SOURCE_NAMES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"

namespace cl {

class SourceNameScanner {
 public:
  // At most this many distinct paths are kept; past it, more are dropped (a log naming more user
  // files than that gets the first ones' sources).
  static constexpr size_t kMaxNames = 4096;

  // The log's bytes, in order, in chunks of any size.
  void Feed(absl::string_view bytes);
  // The paths found, in the order they were first seen (the end of the log included).
  std::vector<std::string> Finish();

 private:
  // Finds the paths in `text`; one that ends at the text's very end may go on in the next bytes,
  // and is left for them unless `final`.
  void Scan(absl::string_view text, bool final);
  // Keeps `bytes`, the start of a line, for the next Feed.
  void Carry(absl::string_view bytes);
  void Add(absl::string_view path);

  std::string carry_;  // the unfinished last line (its last 16 KiB at most)
  absl::flat_hash_set<std::string> seen_;
  std::vector<std::string> names_;
};

}  // namespace cl

#endif  // CAPTURE_TORCH_TRACE_SOURCE_NAMES_H_

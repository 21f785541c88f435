#include "capture/torch_trace/source_names.h"

#include <string.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"

namespace cl {
namespace {

// A path is at most this long (Linux's PATH_MAX); so is the unfinished line carried over.
constexpr size_t kMaxPath = 4096;

// What may follow ".py" in a path that goes on (".pyc", "x.py_old", "a.py/b.py").
bool ContinuesPath(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == '/' || c == '~' || c == '+' || c == '@';
}

// Where a path spelled in the log cannot reach across: quotes and the ends of lines and JSON
// escapes. A space can be inside a path ("/home/me/My Project/train.py"), so it is not one.
bool Delimits(char c) {
  return c == '"' || c == '\'' || c == '\n' || c == '\r' || c == '\t' || c == '\\' || c == '\0';
}

}  // namespace

void SourceNameScanner::Feed(absl::string_view bytes) {
  // Lines are scanned whole where they fit: a path never spans one, so nothing is cut at a chunk's
  // edge.
  const size_t eol = bytes.find('\n');
  if (eol == absl::string_view::npos) return Carry(bytes);
  if (carry_.empty()) {
    Scan(bytes.substr(0, eol), /*final=*/true);
  } else {
    carry_.append(bytes.data(), eol);
    Scan(carry_, /*final=*/true);
    carry_.clear();
  }
  bytes.remove_prefix(eol + 1);
  if (const size_t last = bytes.rfind('\n'); last != absl::string_view::npos) {
    Scan(bytes.substr(0, last), /*final=*/true);
    bytes.remove_prefix(last + 1);
  }
  Carry(bytes);
}

void SourceNameScanner::Carry(absl::string_view bytes) {
  carry_.append(bytes.data(), bytes.size());
  if (carry_.size() <= 4 * kMaxPath) return;
  // A long line: what is scanned of it now is scanned again from its tail, whose paths (at most
  // kMaxPath long) are whole there; the seen set drops the repeats.
  Scan(carry_, /*final=*/false);
  carry_.erase(0, carry_.size() - 2 * kMaxPath);
}

std::vector<std::string> SourceNameScanner::Finish() {
  Scan(carry_, /*final=*/true);
  carry_.clear();
  seen_.clear();
  return std::exchange(names_, {});
}

void SourceNameScanner::Scan(absl::string_view text, bool final) {
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const char* at = begin;
  while (at < end) {
    // ".py" by its rarest byte: a log has ten times as many '.' and 'p' as 'y', and memchr has no
    // set-up per call (memmem's is most of its time when the hits are many).
    const void* hit = memchr(at, 'y', end - at);
    if (hit == nullptr) return;
    const char* y = static_cast<const char*>(hit);
    at = y + 1;
    if (y - begin < 2 || y[-1] != 'p' || y[-2] != '.') continue;
    const char* dot = y - 2;
    const char* stop = y + 1;
    if (stop < end ? ContinuesPath(*stop) : !final) continue;
    const char* start = dot;
    const char* const limit = dot - std::min<size_t>(dot - begin, kMaxPath);
    while (start > limit && !Delimits(start[-1])) --start;
    absl::string_view path(start, stop - start);
    const bool quoted = start > begin && (start[-1] == '"' || start[-1] == '\'');
    // An FX node's comment: "    x = ...  # File: /abs/model.py:12 in forward".
    const size_t file = path.rfind("# File: ");
    if (file != absl::string_view::npos) path.remove_prefix(file + 8);
    // Quoted, or after "# File: ", a path may hold spaces ("/home/me/My Project/train.py"); in
    // running text (a record's header line, a message) it is the last word, which is also offered
    // for the others.
    if (quoted || file != absl::string_view::npos) Add(path);
    if (const size_t space = path.rfind(' '); space != absl::string_view::npos)
      path.remove_prefix(space + 1);
    Add(path);
  }
}

void SourceNameScanner::Add(absl::string_view path) {
  // "<eval_with_key>.py" and the like are names, not files; the quote before a space is a
  // closing one (`"x.py" <y>.py`).
  if (path.size() <= 3 || path[0] == ' ' || absl::StrContains(path, '<') || seen_.contains(path))
    return;
  if (names_.size() >= kMaxNames) return;
  seen_.emplace(path);
  names_.emplace_back(path);
}

}  // namespace cl

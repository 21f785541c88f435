// A progress line on a terminal for what takes more than a second (importing a large log, uploading
// a session): bytes done of the total, what is being done, and the time left. Nothing is written
// when stderr is not a terminal (a pipe, a file, CI's log), nor in the first second, so quick runs
// and scripts see no trace of it.
#ifndef CLIENT_PROGRESS_H_
#define CLIENT_PROGRESS_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace cl {

class ProgressLine {
 public:
  // `enabled`: whether to draw at all (stderr is a terminal and the user did not ask for quiet).
  ProgressLine(std::ostream& out, bool enabled) : out_(out), enabled_(enabled) {}
  ~ProgressLine() { Clear(); }

  // `size` 0: the total is not known (a .gz), so no share and no ETA. `detail` ("12345 records",
  // "to host:50051") is asked for only when the line is drawn.
  void Update(const std::string& what, uint64_t done, uint64_t size,
              absl::FunctionRef<std::string()> detail, absl::Time now = absl::Now());
  // Erases the line, if one was drawn.
  void Clear();

  // The line as drawn, without the terminal's control codes ("run.log: 120 MiB of 400 MiB (30%) ·
  // 12345 records · about 3 s left").
  static std::string Text(const std::string& what, uint64_t done, uint64_t size,
                          absl::string_view detail, absl::Duration elapsed);

 private:
  std::ostream& out_;
  const bool enabled_;
  absl::Time start_ = absl::InfiniteFuture();
  absl::Time last_ = absl::InfinitePast();
  bool drawn_ = false;
};

}  // namespace cl

#endif  // CLIENT_PROGRESS_H_

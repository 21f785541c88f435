// The terminal summary of a report (docs/design.md §6): a few lines per section.
#ifndef SERVICE_RENDER_TEXT_H_
#define SERVICE_RENDER_TEXT_H_

#include <string>

#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// ANSI colour only when `color` (the caller decides; normally "stdout is a TTY"). Capture strings
// are scrubbed, so none can carry an escape sequence or a forged line into the terminal.
std::string RenderText(const v1::AnalysisReport& report, bool color);

}  // namespace cl

#endif  // SERVICE_RENDER_TEXT_H_

// A report in which every string field (scalars, repeated, map keys and values, at any depth)
// holds a hostile payload: markup, quotes, an entity, a bidi override, invalid UTF-8, a terminal
// escape and a newline. Each copy ends in "#<field path>#" so a test can tell which field it
// came from.
#ifndef TESTS_SERVICE_RENDER_HOSTILE_REPORT_H_
#define TESTS_SERVICE_RENDER_HOSTILE_REPORT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"

namespace cl::testing {

inline constexpr absl::string_view kHostilePayload =
    "<script>alert(1)</script>\"'&amp;\u202E\xff\xc0\xaf\x1b[2J\nX";

// The payload as the page must carry it: entities for & < > " ', the bidi override and ESC made
// visible, one U+FFFD per bad byte, the newline kept (HTML shows it as a space).
inline constexpr absl::string_view kHostileEscapedHtml =
    "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;amp;[U+202E]\uFFFD\uFFFD\uFFFD"
    "[U+001B][2J\nX";

// The payload as the terminal summary must carry it: scrubbed, on one line.
inline constexpr absl::string_view kHostileTerminal =
    "<script>alert(1)</script>\"'&amp;[U+202E]\uFFFD\uFFFD\uFFFD[U+001B][2J X";

// Every section has `status` (OK unless said otherwise) and its findings are all hostile; the
// numbers are small non-zero values and the bools are true.
::compile_lens::v1::AnalysisReport HostileReport(
    ::compile_lens::v1::SectionStatus status = ::compile_lens::v1::OK);

// A capture whose every string field is hostile the same way (google.protobuf.Value: its string
// form), one element in each repeated field.
::compile_lens::v1::SessionCapture HostileCapture();

// "#path#" markers found in `text`, e.g. "recompile.clusters[0].axis".
std::string Marker(absl::string_view path);

}  // namespace cl::testing

#endif  // TESTS_SERVICE_RENDER_HOSTILE_REPORT_H_

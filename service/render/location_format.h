// How a source location reads. Locations in the report are relative to the session's project
// root when the capture names one (docs/design.md §6); the page shows that root as "{repo}/" so a
// reader sees the path is relative (seed: "{repo}/examples/hero_scene.py:89"). The terminal
// summary runs in the project, so it shows the relative path as it is.
#ifndef SERVICE_RENDER_LOCATION_FORMAT_H_
#define SERVICE_RENDER_LOCATION_FORMAT_H_

#include <string>

#include "compile_lens/v1/report.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

enum class LocationStyle {
  kPage,      // a relative file is shown under "{repo}/"
  kTerminal,  // a relative file is shown as it is
};

// "file:89", "file:69-72" (line_start-line_end), "file" with no line, ":89" with no file, and "—"
// for an empty location. The result is untrusted text: escape it like any capture string.
std::string FormatLocation(const v1::Location& location, LocationStyle style);

// Whether the location names a file or a line at all.
bool HasLocation(const v1::Location& location);

}  // namespace cl

#endif  // SERVICE_RENDER_LOCATION_FORMAT_H_

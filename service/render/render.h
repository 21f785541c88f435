// The renderer's public API in one include: a report (report.proto) rendered as the HTML page
// (html.h), the terminal summary (text.h) or the JSON report (json.h). Three separate layers over
// one model, as pprof separates its profile, report and web UI; include the one you need, or this.
#ifndef SERVICE_RENDER_RENDER_H_
#define SERVICE_RENDER_RENDER_H_

#include "service/render/html.h"  // IWYU pragma: export
#include "service/render/json.h"  // IWYU pragma: export
#include "service/render/text.h"  // IWYU pragma: export

#endif  // SERVICE_RENDER_RENDER_H_

// The hero report: an AnalysisReport carrying seed/hero.html's values in every section, built by
// hand so the renderer's tests do not depend on the capture importers or the passes.
#ifndef TESTS_SERVICE_RENDER_HERO_REPORT_H_
#define TESTS_SERVICE_RENDER_HERO_REPORT_H_

#include "compile_lens/v1/report.pb.h"

namespace cl::testing {

::compile_lens::v1::AnalysisReport HeroReport();

}  // namespace cl::testing

#endif  // TESTS_SERVICE_RENDER_HERO_REPORT_H_

# Generates a .cc that holds report.css as a string, so the report page embeds its style sheet
# without reading files at run time (pprof embeds its templates the same way).
#   cmake -DINPUT=report.css -DOUTPUT=report_css.cc -P embed_css.cmake
file(READ "${INPUT}" CSS)

# The text goes into a C++ raw string and then into a <style> element: refuse the two sequences
# that would end either one early.
if(CSS MATCHES "\\)cl_css\"")
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )cl_css\"")
endif()
string(TOLOWER "${CSS}" CSS_LOWER)
if(CSS_LOWER MATCHES "</style")
  message(FATAL_ERROR "${INPUT} contains </style, which would end the page's <style> element")
endif()

file(WRITE "${OUTPUT}" "// Generated from service/render/report.css by embed_css.cmake. Do not edit.
#include \"service/render/report_css.h\"

namespace cl {
namespace {

constexpr char kCss[] = R\"cl_css(${CSS})cl_css\";

}  // namespace

Markup ReportCss() { return Markup(kCss); }

}  // namespace cl
")

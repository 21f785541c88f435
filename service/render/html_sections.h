// The bodies of the report page's sections: what goes inside <div class="body"> when the
// section's pass ran (status OK). html_report.cc frames them and handles SKIPPED / ERROR, so a
// body renderer only ever sees a section that has data to show.
//
// The wording and layout follow seed/hero.html, which the golden test compares against text for
// text. To extend a section, add to its file and to the hero golden (tests/golden/render/).
#ifndef SERVICE_RENDER_HTML_SECTIONS_H_
#define SERVICE_RENDER_HTML_SECTIONS_H_

#include "compile_lens/v1/report.pb.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "service/render/html_writer.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

void WriteMetadataBody(const v1::Metadata& metadata, HtmlWriter& w);          // html_metadata.cc
void WriteHealthBody(const v1::HealthSection& section, HtmlWriter& w);        // html_health.cc
void WriteFailuresBody(const v1::FailuresSection& section, HtmlWriter& w);    // html_failures.cc
void WriteRanksBody(const v1::CrossRankSection& section, HtmlWriter& w);      // html_ranks.cc
void WriteIrDiffBody(const v1::IrDiffSection& section, HtmlWriter& w);        // html_ir_diff.cc
void WriteRecompileBody(const v1::RecompileSection& section, HtmlWriter& w);  // html_recompile.cc
void WriteCompileTimeBody(const v1::CompileTimeSection& section,
                          HtmlWriter& w);  // html_compile_time.cc
void WriteCacheStabilityBody(const v1::CacheStabilitySection& section,
                             HtmlWriter& w);  // html_cache_stability.cc
void WriteDivergenceBody(const v1::DivergenceSection& section,
                         HtmlWriter& w);                                    // html_divergence.cc
void WriteLintBody(const v1::LintSection& section, HtmlWriter& w);          // html_lint.cc
void WriteFusionBody(const v1::FusionSection& section, HtmlWriter& w);      // html_fusion.cc
void WriteRooflineBody(const v1::RooflineSection& section, HtmlWriter& w);  // html_roofline.cc
void WriteRawBody(const v1::RawSection& raw, HtmlWriter& w);                // html_raw.cc
void WriteDiagnosticsBody(const google::protobuf::RepeatedPtrField<v1::Diagnostic>& diagnostics,
                          HtmlWriter& w);  // html_raw.cc

}  // namespace cl

#endif  // SERVICE_RENDER_HTML_SECTIONS_H_

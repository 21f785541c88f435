// Small pieces of the page that several section renderers share, so that a location or a
// definition row reads the same in every section.
#ifndef SERVICE_RENDER_HTML_FRAGMENTS_H_
#define SERVICE_RENDER_HTML_FRAGMENTS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "compile_lens/v1/report.pb.h"
#include "service/render/html_writer.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

// Tables list at most this many rows; the rest are counted under the table. A 100k-node IR diff
// stays a readable page, and the JSON report still has every row.
inline constexpr int kMaxTableRows = 500;

// `value`, or "—" when it is empty, so an empty cell reads as "nothing recorded".
absl::string_view OrDash(absl::string_view value);

// "<code>{repo}/file:line</code>".
void WriteCodeLocation(const v1::Location& location, HtmlWriter& w);

// "<dt>term</dt><dd>value</dd>" inside a <dl class="meta">.
void WriteMetaRow(Markup term, absl::string_view value, HtmlWriter& w);

// After a table cut at kMaxTableRows: "<p class="muted">… and N more rows in the JSON
// report.</p>". Writes nothing when `total` fits.
void WriteOmittedRows(int total, HtmlWriter& w);

// "Top suggestions": each suggestion's text and, under it, its evidence. Nothing when empty.
void WriteSuggestions(const google::protobuf::RepeatedPtrField<v1::Suggestion>& suggestions,
                      HtmlWriter& w);

// A compile-time ledger cause as a reader reads it: "first_compile" -> "first compile".
std::string CauseWords(absl::string_view cause);

// The number of rows a table shows.
inline int ShownRows(int total) { return total < kMaxTableRows ? total : kMaxTableRows; }

}  // namespace cl

#endif  // SERVICE_RENDER_HTML_FRAGMENTS_H_

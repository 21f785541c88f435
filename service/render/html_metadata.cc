// Session metadata: who ran what. The seed shows torch and the session id; the other session
// facts are added only when the capture recorded them.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {

void WriteMetadataBody(const v1::Metadata& metadata, HtmlWriter& w) {
  w.Tag("<dl class=\"meta\">");
  WriteMetaRow("torch", metadata.torch_version(), w);
  WriteMetaRow("session id", metadata.session_id(), w);
  if (!metadata.python_version().empty()) WriteMetaRow("python", metadata.python_version(), w);
  if (!metadata.host().empty()) WriteMetaRow("host", metadata.host(), w);
  if (metadata.world_size() > 1) {
    WriteMetaRow("rank", absl::StrCat(metadata.rank(), " of ", metadata.world_size()), w);
  }
  // Map order is unspecified; sorted keys keep the page (and its golden file) stable.
  std::vector<std::pair<std::string, std::string>> labels(metadata.labels().begin(),
                                                          metadata.labels().end());
  std::sort(labels.begin(), labels.end());
  for (const auto& [key, value] : labels) {
    w.Tag("<dt>label <code>").Text(key).Tag("</code></dt><dd>").Text(OrDash(value)).Tag("</dd>");
  }
  w.Tag("</dl>");
}

}  // namespace cl

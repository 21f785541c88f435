// Reading a rendered page the way a person sees it, for comparisons that must not depend on
// markup details: the visible text of each <details id=...> section, and the sequence of tags.
#ifndef TESTS_SERVICE_RENDER_PAGE_TEXT_H_
#define TESTS_SERVICE_RENDER_PAGE_TEXT_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cl::testing {

// Tags removed, the five entities the renderer writes (and numeric references) decoded,
// whitespace runs collapsed to one space, trimmed.
std::string VisibleText(absl::string_view html);

// Visible text per section id ("metadata", "ir-diff", ...), plus "header" for the <header>.
std::map<std::string, std::string> SectionTexts(absl::string_view html);

// Every tag of the page in order ("<details open id=\"raw\">"), with the <style> element's
// contents left out.
std::vector<std::string> TagSequence(absl::string_view html);

// "td" for "<td>", "</td>" and "<td class=\"x\">"; "!doctype" for the doctype.
std::string TagName(absl::string_view tag);

// The element names the renderer writes. Any other element in a page was injected.
const std::set<std::string>& RendererElements();

bool IsValidUtf8(absl::string_view text);

}  // namespace cl::testing

#endif  // TESTS_SERVICE_RENDER_PAGE_TEXT_H_

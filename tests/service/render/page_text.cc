#include "tests/service/render/page_text.h"

#include <cstdint>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tests/testing/hostile_inputs.h"

namespace cl::testing {
namespace {

std::string DecodeEntities(absl::string_view text) {
  std::string out;
  while (!text.empty()) {
    const size_t amp = text.find('&');
    const size_t semi = amp == text.npos ? text.npos : text.find(';', amp);
    if (semi == text.npos) break;
    absl::StrAppend(&out, text.substr(0, amp));
    const std::string name(text.substr(amp + 1, semi - amp - 1));
    if (name == "amp")
      out += '&';
    else if (name == "lt")
      out += '<';
    else if (name == "gt")
      out += '>';
    else if (name == "quot")
      out += '"';
    else if (name == "#39")
      out += '\'';
    else if (name.size() > 2 && name[0] == '#' && (name[1] == 'x' || name[1] == 'X'))
      out += CodePointBytes(std::strtoul(name.c_str() + 2, nullptr, 16));
    else if (name.size() > 1 && name[0] == '#')
      out += CodePointBytes(std::strtoul(name.c_str() + 1, nullptr, 10));
    else
      absl::StrAppend(&out, text.substr(amp, semi - amp + 1));
    text.remove_prefix(semi + 1);
  }
  absl::StrAppend(&out, text);
  return out;
}

}  // namespace

std::string VisibleText(absl::string_view html) {
  std::string text;
  bool in_tag = false;
  for (const char c : html) {
    if (c == '<') {
      in_tag = true;
      text += ' ';  // a tag boundary separates words the way block elements do on screen
    } else if (c == '>' && in_tag) {
      in_tag = false;
    } else if (!in_tag) {
      text += c;
    }
  }
  const std::string decoded = DecodeEntities(text);
  std::string collapsed;
  for (const char c : decoded) {
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      if (!collapsed.empty() && collapsed.back() != ' ') collapsed += ' ';
    } else {
      collapsed += c;
    }
  }
  return std::string(absl::StripAsciiWhitespace(collapsed));
}

std::map<std::string, std::string> SectionTexts(absl::string_view html) {
  std::map<std::string, std::string> sections;
  const size_t header = html.find("<header>");
  const size_t header_end = html.find("</header>");
  if (header != html.npos && header_end != html.npos) {
    sections["header"] = VisibleText(html.substr(header, header_end - header));
  }
  constexpr absl::string_view kOpen = "<details open id=\"";
  for (size_t at = html.find(kOpen); at != html.npos; at = html.find(kOpen, at + 1)) {
    const size_t id_start = at + kOpen.size();
    const size_t id_end = html.find('"', id_start);
    const size_t end = html.find("</details>", id_end);
    if (id_end == html.npos || end == html.npos) break;
    sections[std::string(html.substr(id_start, id_end - id_start))] =
        VisibleText(html.substr(id_end + 2, end - id_end - 2));
  }
  return sections;
}

std::vector<std::string> TagSequence(absl::string_view html) {
  std::vector<std::string> tags;
  size_t at = 0;
  while ((at = html.find('<', at)) != html.npos) {
    const size_t end = html.find('>', at);
    if (end == html.npos) break;
    tags.emplace_back(html.substr(at, end - at + 1));
    at = end + 1;
    if (tags.back() == "<style>") at = html.find("</style>", at);
  }
  return tags;
}

std::string TagName(absl::string_view tag) {
  const size_t start = tag.size() > 1 && tag[1] == '/' ? 2 : 1;
  const size_t end = tag.find_first_of(" >\n", start);
  return absl::AsciiStrToLower(tag.substr(start, end - start));
}

const std::set<std::string>& RendererElements() {
  static const auto* elements = new std::set<std::string>{
      "!doctype", "html", "head", "meta", "title", "style", "body", "header", "h1", "p", "main",
      "details", "summary", "h2", "h3", "div", "dl", "dt", "dd", "table", "thead", "tbody", "tr",
      "th", "td", "code", "strong", "span", "br", "ol", "li", "a",
      // The failures section's reasons and tracebacks (service/render/html_failures.cc).
      "pre",
      // The roofline chart (service/render/svg_roofline.cc).
      "svg", "g", "line", "text", "circle"};
  return *elements;
}

bool IsValidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto b = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
    const uint8_t b0 = b(i);
    size_t len;
    uint32_t cp;
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    if ((b0 & 0xE0) == 0xC0) {
      len = 2;
      cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3;
      cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4;
      cp = b0 & 0x07;
    } else
      return false;
    if (i + len > text.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((b(i + k) & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b(i + k) & 0x3F);
    }
    const uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

}  // namespace cl::testing

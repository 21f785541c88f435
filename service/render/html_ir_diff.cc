// IR diff (base → head): the change summary, the matcher's quality figures, and one table per
// kind of change.
#include "absl/strings/str_cat.h"
#include "common/number_format.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {
namespace {

void WriteChangeTable(Markup heading,
                      const google::protobuf::RepeatedPtrField<v1::NodeChange>& changes,
                      HtmlWriter& w) {
  if (changes.empty()) return;
  w.Tag("<h3>").Tag(heading).Tag(" (").Text(absl::StrCat(changes.size())).Tag(")</h3>\n");
  w.BeginTable({"node", "op", "what changed", "where", "confidence"});
  for (int i = 0; i < ShownRows(changes.size()); ++i) {
    const v1::NodeChange& change = changes[i];
    // A modified node's change cites the base's names: when the head renamed it, show both.
    const std::string node = !change.base_node().empty() && change.base_node() != change.node()
                                 ? absl::StrCat(change.base_node(), " \u2192 ", change.node())
                                 : change.node();
    w.Tag("<tr><td><code>").Text(OrDash(node)).Tag("</code></td><td>");
    w.Text(OrDash(change.op())).Tag("</td><td>").Text(OrDash(change.change())).Tag("</td><td>");
    WriteCodeLocation(change.location(), w);
    w.Tag("</td><td>").Text(FormatFixed(change.confidence(), 2)).Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(changes.size(), w);
}

// "Frames compiled only in the base: <code>a (x.py:3)</code>, <code>b</code>."
void WriteFrameList(Markup lead, const google::protobuf::RepeatedPtrField<std::string>& frames,
                    HtmlWriter& w) {
  if (frames.empty()) return;
  w.Tag("<p class=\"muted\">").Tag(lead);
  for (int i = 0; i < ShownRows(frames.size()); ++i) {
    if (i > 0) w.Tag(", ");
    w.Tag("<code>").Text(frames[i]).Tag("</code>");
  }
  if (frames.size() > kMaxTableRows) {
    w.Tag(" and ").Text(absl::StrCat(frames.size() - kMaxTableRows)).Tag(" more");
  }
  w.Tag(".</p>");
}

// What was compared (one stage, one compile per frame and side) and what could not be: without
// it a reader cannot tell a diff of the post-grad graph of 0/0 from one of every recompile.
void WriteScope(const v1::IrDiffSection& section, HtmlWriter& w) {
  if (!section.stage().empty()) {
    w.Tag("<p class=\"muted\">Compared <code>")
        .Text(section.stage())
        .Tag(
            "</code>: the most-lowered graph stage both sides have, each frame's first compile "
            "of it.</p>");
  }
  for (const v1::IrDiffFrame& frame : section.frames()) {
    if (frame.note().empty()) continue;
    w.Tag("<p class=\"muted\">Not compared: <code>")
        .Text(frame.frame())
        .Tag("</code> (")
        .Text(frame.note())
        .Tag(").</p>");
  }
  WriteFrameList("Frames compiled only in the base: ", section.frames_only_in_base(), w);
  WriteFrameList("Frames compiled only in the head: ", section.frames_only_in_head(), w);
}

}  // namespace

void WriteIrDiffBody(const v1::IrDiffSection& section, HtmlWriter& w) {
  if (section.added().empty() && section.removed().empty() && section.modified().empty()) {
    w.Tag(
        "<p class=\"good\">The compiled graph is unchanged: no node added, removed or "
        "modified.</p>");
  } else {
    w.Tag("<p class=\"warn\">The compiled graph changed: <strong>")
        .Text(absl::StrCat(section.added().size()))
        .Tag("</strong> added, <strong>")
        .Text(absl::StrCat(section.removed().size()))
        .Tag("</strong> removed, <strong>")
        .Text(absl::StrCat(section.modified().size()))
        .Tag("</strong> modified ")
        .Text(Noun(section.modified().size(), "node", "nodes"))
        .Tag(".</p>");
  }
  w.Tag("<dl class=\"meta\">");
  WriteMetaRow("match coverage", FormatPercent(section.match_coverage()), w);
  WriteMetaRow("anchor uniqueness", FormatPercent(section.anchor_uniqueness()), w);
  w.Tag("</dl>");
  WriteScope(section, w);
  WriteChangeTable("added", section.added(), w);
  WriteChangeTable("removed", section.removed(), w);
  WriteChangeTable("modified", section.modified(), w);
}

}  // namespace cl

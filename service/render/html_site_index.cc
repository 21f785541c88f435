// The site index's additions to the report page (html_site_pages.h): the log as tlparse's index
// shows it, each compile a link to its page.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/number_format.h"
#include "service/render/html_fragments.h"
#include "service/render/html_page.h"
#include "service/render/html_site_pages.h"

namespace cl {
namespace {

// A stack deeper than this keeps its innermost frames: the compiled frame and its callers are
// what a reader looks for, and a page nests one list per frame.
constexpr int kMaxTrieDepth = 200;
// Past this many compiles, the compiles table starts folded and a trie leaf with more compile
// ids than kLeafLinks folds them.
constexpr int kOpenCompiles = 100;
constexpr int kLeafLinks = 30;
// Record pages listed per kind of record of no compile (every one is written).
constexpr int kRecordLinks = 200;

struct TrieNode {
  const v1::StackFrame* frame = nullptr;  // null for the root
  std::vector<int> children;              // in order of first appearance
  std::vector<int> compiles;              // whose stack ends here
};

std::vector<TrieNode> BuildTrie(const v1::SessionCapture& capture, std::vector<int>* unstacked) {
  std::vector<TrieNode> nodes(1);
  absl::flat_hash_map<std::pair<int, std::string>, int> child_of;
  for (int i = 0; i < capture.compiles_size(); ++i) {
    const auto& stack = capture.compiles(i).stack();
    const int end = stack.size();
    if (end == 0) {
      unstacked->push_back(i);
      continue;
    }
    int node = 0;
    for (int f = std::max(0, end - kMaxTrieDepth); f < end; ++f) {
      const v1::StackFrame& frame = stack[f];
      auto [it, inserted] = child_of.try_emplace(
          {node, absl::StrCat(frame.file(), "\n", frame.line(), "\n", frame.name())},
          static_cast<int>(nodes.size()));
      if (inserted) {
        nodes[node].children.push_back(it->second);
        nodes.emplace_back().frame = &frame;
      }
      node = it->second;
    }
    nodes[node].compiles.push_back(i);
  }
  return nodes;
}

void WriteLeafLinks(const v1::SessionCapture& capture, const SiteModel& model,
                    const std::vector<int>& compiles, HtmlWriter& w) {
  if (compiles.empty()) return;
  const bool fold = compiles.size() > kLeafLinks;
  if (fold) {
    w.Tag("<details class=\"leaf\"><summary>")
        .Text(FormatCount(compiles.size(), "compile", "compiles"))
        .Tag("</summary>");
  } else {
    w.Tag(" ");
  }
  for (int i : compiles) {
    WriteCompileLink(capture.compiles(i), model, i, "", w);
    w.Tag(" ");
  }
  if (fold) w.Tag("</details>");
}

// Iterative, one list per level: the depth is bounded, but a capture's trie is data.
void WriteStackTrie(const v1::SessionCapture& capture, const SiteModel& model, HtmlWriter& w) {
  std::vector<int> unstacked;
  const std::vector<TrieNode> nodes = BuildTrie(capture, &unstacked);
  OpenSection("stack-trie", "Stack trie", w);
  w.Tag(
      "<p class=\"muted\">The user frames that led to each compiled frame, merged; each leaf "
      "is that frame's compiles, coloured by outcome: <span class=\"st-ok\">ok</span>, "
      "<span class=\"st-hit\">cache hit</span>, <span class=\"st-restarted\">restarted</span>, "
      "<span class=\"st-empty\">empty graph</span>, <span class=\"st-failed\">failed</span> or "
      "<span class=\"st-skipped\">skipped</span> (a graph break made torch run the frame eagerly), "
      "<span class=\"st-missing\">no metrics</span>.</p>\n");
  if (nodes.size() > 1) {
    w.Tag("<ul class=\"trie\">\n");
    // (node, next child to visit)
    std::vector<std::pair<int, size_t>> path = {{0, 0}};
    while (!path.empty()) {
      auto& [node, next] = path.back();
      if (next == nodes[node].children.size()) {
        path.pop_back();
        if (!path.empty()) w.Tag("</ul></li>\n");
        continue;
      }
      const int child = nodes[node].children[next++];
      const TrieNode& n = nodes[child];
      w.Tag("<li>");
      WriteStackFrame(*n.frame, model, w);
      WriteLeafLinks(capture, model, n.compiles, w);
      w.Tag("<ul>");
      path.emplace_back(child, 0);
    }
    w.Tag("</ul>\n");
  }
  if (!unstacked.empty()) {
    w.Tag("<p>Compiles the log gave no stack for:");
    WriteLeafLinks(capture, model, unstacked, w);
    w.Tag("</p>\n");
  }
  CloseSection(w);
}

std::string MetricCell(const v1::Compile& c, const std::string& key) {
  auto it = c.metrics().fields().find(key);
  if (it == c.metrics().fields().end() ||
      it->second.kind_case() != google::protobuf::Value::kNumberValue) {
    return "—";
  }
  return NumberText(it->second.number_value());
}

void WriteCompilesInOrder(const v1::SessionCapture& capture, const SiteModel& model,
                          HtmlWriter& w) {
  OpenSection("compiles", "Compiles in order", w);
  if (capture.compiles().empty()) {
    w.Tag("<p class=\"muted\">The capture holds no compile.</p>\n");
    CloseSection(w);
    return;
  }
  w.Tag(
      "<p class=\"muted\">Every compile attempt, by frame, in log order. Ops, nodes, inputs and "
      "guards are torch's compilation_metrics; a cache column reads hit, miss or bypass per "
      "lookup, — when the log has none.</p>\n");
  // Frames in order of their first compile; a frame's compiles in log order.
  std::vector<uint32_t> frame_order;
  absl::flat_hash_map<uint32_t, std::vector<int>> by_frame;
  for (int i = 0; i < capture.compiles_size(); ++i) {
    auto [it, inserted] = by_frame.try_emplace(capture.compiles(i).frame_id());
    if (inserted) frame_order.push_back(capture.compiles(i).frame_id());
    it->second.push_back(i);
  }
  absl::flat_hash_map<uint32_t, const v1::Frame*> frames;
  for (const v1::Frame& f : capture.frames()) frames.emplace(f.id(), &f);
  const bool open = capture.compiles_size() <= kOpenCompiles;
  for (uint32_t frame_id : frame_order) {
    const std::vector<int>& compiles = by_frame[frame_id];
    auto frame = frames.find(frame_id);
    w.Tag(open ? Markup("<details open class=\"frame\">") : Markup("<details class=\"frame\">"));
    w.Tag("<summary><code>");
    if (frame != frames.end()) {
      w.Text(frame->second->name()).Tag("</code> <code>");
      w.Text(absl::StrCat(frame->second->file(), ":", frame->second->line()));
    } else {
      w.Text(absl::StrCat("frame ", frame_id));
    }
    w.Tag("</code> · ").Text(FormatCount(compiles.size(), "compile", "compiles"));
    w.Tag("</summary>\n");
    w.BeginTable({"Compile", "Outcome", "Duration", "Ops", "Nodes", "Inputs", "Guards", "FX graph",
                  "AOT autograd", "Autotune", "Analysis"});
    for (int i : compiles) {
      const v1::Compile& c = capture.compiles(i);
      w.Tag("<tr><td>");
      WriteCompileLink(c, model, i, "", w);
      w.Tag("</td><td>").Text(OutcomeWord(c));
      w.Tag("</td><td>").Text(FormatDuration(c.duration_us()));
      w.Tag("</td><td>").Text(MetricCell(c, "graph_op_count"));
      w.Tag("</td><td>").Text(MetricCell(c, "graph_node_count"));
      w.Tag("</td><td>").Text(MetricCell(c, "graph_input_count"));
      w.Tag("</td><td>").Text(MetricCell(c, "guard_count"));
      w.Tag("</td><td>").Text(CacheOutcome(c, "fx_graph"));
      w.Tag("</td><td>").Text(CacheOutcome(c, "aot_autograd"));
      w.Tag("</td><td>").Text(CacheOutcome(c, "triton"));
      w.Tag("</td><td>");
      for (const SectionRef& s : model.compiles[i].mentioned_in) {
        w.Tag("<a href=\"#").Text(s.anchor).Tag("\">").Text(s.title).Tag("</a> ");
      }
      w.Tag("</td></tr>\n");
    }
    w.EndTable();
    w.Tag("</details>\n");
  }
  CloseSection(w);
}

// tlparse's failures_and_restarts page, in the index: one row per failure and per restart reason.
void WriteFailuresAndRestarts(const v1::SessionCapture& capture, const SiteModel& model,
                              HtmlWriter& w) {
  int rows = 0;
  for (const v1::Compile& c : capture.compiles())
    rows += c.restart_reasons_size() + (c.fail_type().empty() ? 0 : 1);
  if (rows == 0) return;
  OpenSection("failures-and-restarts", "Failures and restarts", w);
  w.BeginTable({"Compile", "Kind", "Reason", "User frame"});
  for (int i = 0; i < capture.compiles_size(); ++i) {
    const v1::Compile& c = capture.compiles(i);
    if (!c.fail_type().empty()) {
      w.Tag("<tr><td>");
      WriteCompileLink(c, model, i, "", w);
      w.Tag("</td><td>").Text(c.fail_type()).Tag("</td><td>").Text(c.fail_reason());
      w.Tag("</td><td><code>");
      const auto& f = c.metrics().fields();
      auto file = f.find("fail_user_frame_filename");
      auto line = f.find("fail_user_frame_lineno");
      if (file != f.end() && file->second.has_string_value()) {
        w.Text(file->second.string_value());
        if (line != f.end() && line->second.has_number_value())
          w.Text(absl::StrCat(":", NumberText(line->second.number_value())));
      } else {
        w.Text("—");
      }
      w.Tag("</code></td></tr>\n");
    }
    for (const std::string& reason : c.restart_reasons()) {
      w.Tag("<tr><td>");
      WriteCompileLink(c, model, i, "", w);
      w.Tag("</td><td>restart</td><td>").Text(reason).Tag("</td><td>—</td></tr>\n");
    }
  }
  w.EndTable();
  CloseSection(w);
}

void WriteOtherRecords(const v1::SessionCapture& capture, const SiteModel& model, HtmlWriter& w) {
  OpenSection("other-records", "Other records", w);
  if (capture.records().empty()) {
    w.Tag(
        "<p class=\"muted\">The capture lists no log records (it was not read from a "
        "TORCH_TRACE log, or by an older compile-lens).</p>\n");
    CloseSection(w);
    return;
  }
  if (model.unowned_records.empty()) {
    w.Tag("<p class=\"muted\">Every record of the log belongs to a compile.</p>\n");
    CloseSection(w);
    return;
  }
  w.Tag(
      "<p class=\"muted\">Records that belong to no compile (before the first, or logged "
      "without a compile id), by kind; the string tables and trace events are left "
      "out.</p>\n");
  std::vector<std::string> order;
  absl::flat_hash_map<std::string, std::vector<int>> groups;
  for (int r : model.unowned_records) {
    const v1::Record& record = capture.records(r);
    std::string key =
        record.name().empty() ? record.kind() : absl::StrCat(record.kind(), " ", record.name());
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(r);
  }
  w.BeginTable({"Record", "Count", "Bytes", "Lines"});
  for (const std::string& key : order) {
    const std::vector<int>& records = groups[key];
    uint64_t bytes = 0;
    for (int r : records) bytes += capture.records(r).bytes();
    w.Tag("<tr><td><code>").Text(key).Tag("</code></td><td>").Text(absl::StrCat(records.size()));
    w.Tag("</td><td>").Text(FormatBytes(bytes)).Tag("</td><td>");
    const int shown = std::min<int>(records.size(), kRecordLinks);
    for (int k = 0; k < shown; ++k) {
      w.Tag("<a href=\"").Text(UnownedRecordPage(records[k])).Tag("\">");
      w.Text(absl::StrCat(capture.records(records[k]).line())).Tag("</a> ");
    }
    if (shown < static_cast<int>(records.size())) {
      w.Text(absl::StrCat("… and ", records.size() - shown, " more (records/ has them all)"));
    }
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
  CloseSection(w);
}

}  // namespace

void WriteSiteIndex(const v1::SessionCapture& capture, const SiteModel& model, HtmlWriter& w) {
  WriteStackTrie(capture, model, w);
  WriteCompilesInOrder(capture, model, w);
  WriteFailuresAndRestarts(capture, model, w);
  WriteOtherRecords(capture, model, w);
}

}  // namespace cl

// One compile's page of the site (html_site_pages.h): what tlparse's per-compile pages show, and
// the analysis that names the compile.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "capture/guarded_sources.h"
#include "common/number_format.h"
#include "google/protobuf/util/json_util.h"
#include "service/render/html_fragments.h"
#include "service/render/html_page.h"
#include "service/render/html_site_pages.h"

namespace cl {
namespace {

bool IsGraphRecord(const v1::Record& r) {
  return !r.graph_id().empty() || absl::EndsWith(r.kind(), "_graph") ||
         absl::EndsWith(r.name(), "_graph") || r.kind() == "graph_dump";
}

bool IsCodeRecord(const v1::Record& r) {
  return r.kind() == "inductor_output_code" || r.name() == "fx_graph_runnable" ||
         (r.kind() == "graph_dump" && absl::StrContains(r.name(), "code"));
}

// torch's cache records (fx_graph_cache_miss, aotautograd_cache_hit, ...), not the graphs and the
// code the page shows in their own sections: an output code record is named by its file's path,
// which holds "cache" wherever the user's Inductor cache folder does (~/.cache/inductor/...).
bool IsCacheRecord(const v1::Record& r) {
  if (IsGraphRecord(r) || IsCodeRecord(r)) return false;
  return absl::StrContains(r.name(), "cache") || absl::StrContains(r.kind(), "cache");
}

// A file name for the record's text made from its index and a slug of its kind and name (capture
// text kept to [a-z0-9_]).
std::string RecordFile(const SiteModel::CompileEntry& entry, const v1::Record& r, int index) {
  std::string slug;
  for (char ch : absl::StrCat(r.kind(), r.name().empty() ? "" : "_", r.name())) {
    if (slug.size() >= 60) break;
    const char lower = absl::ascii_tolower(static_cast<unsigned char>(ch));
    slug.push_back(absl::ascii_isalnum(static_cast<unsigned char>(lower)) ? lower : '_');
  }
  const absl::string_view stem = absl::StripSuffix(entry.page, ".html");
  return absl::StrCat(stem, "/", index, "_", slug, IsCodeRecord(r) ? ".py" : ".txt");
}

// A compile's small records that its page shows only in the list of every record (describe_*,
// guards added, chromium events: hundreds a compile, most a few hundred bytes) share one page,
// `<stem>/records.html`, an anchor each: a file each made a large log's site tens of thousands
// of files, and creating them was most of the site's time (bench/README.md). Up to this size a
// record is bundled, and a bundle holds up to kMaxBundleBytes of text; the rest get files.
constexpr size_t kMaxBundledRecordBytes = 16 << 10;
constexpr size_t kMaxBundleBytes = 4 << 20;

bool Bundled(const v1::Record& r) {
  return r.text().size() <= kMaxBundledRecordBytes && !IsGraphRecord(r) && !IsCodeRecord(r) &&
         !IsCacheRecord(r);
}

std::string BundleFile(const SiteModel::CompileEntry& entry) {
  return absl::StrCat(absl::StripSuffix(entry.page, ".html"), "/records.html");
}

// The file's name relative to the compile's page (both live in compiles/).
absl::string_view RelativeToPage(absl::string_view file) {
  return absl::StripPrefix(file, "compiles/");
}

std::string JsonText(const google::protobuf::Value& v);

std::string ValueText(const google::protobuf::Value& v) {
  switch (v.kind_case()) {
    case google::protobuf::Value::kStringValue:
      return v.string_value();
    case google::protobuf::Value::kNumberValue:
      return NumberText(v.number_value());
    case google::protobuf::Value::kBoolValue:
      return v.bool_value() ? "true" : "false";
    case google::protobuf::Value::kNullValue:
      return "null";
    default:
      return JsonText(v);
  }
}

// A list or a struct as JSON, its keys sorted: a Struct's map iterates in no fixed order, and
// the same log must give the same page.
std::string JsonText(const google::protobuf::Value& v) {
  const auto quoted = [](const std::string& s) {
    google::protobuf::Value text;
    text.set_string_value(s);
    std::string json;
    return google::protobuf::util::MessageToJsonString(text, &json).ok() ? json : "\"?\"";
  };
  switch (v.kind_case()) {
    case google::protobuf::Value::kStringValue:
      return quoted(v.string_value());
    case google::protobuf::Value::kListValue:
      return absl::StrCat("[",
                          absl::StrJoin(v.list_value().values(), ",",
                                        [](std::string* out, const google::protobuf::Value& e) {
                                          out->append(JsonText(e));
                                        }),
                          "]");
    case google::protobuf::Value::kStructValue: {
      std::vector<const std::string*> keys;
      for (const auto& [key, value] : v.struct_value().fields()) keys.push_back(&key);
      std::sort(keys.begin(), keys.end(), [](auto* a, auto* b) { return *a < *b; });
      std::string out = "{";
      for (const std::string* key : keys) {
        if (out.size() > 1) out += ",";
        absl::StrAppend(&out, quoted(*key), ":", JsonText(v.struct_value().fields().at(*key)));
      }
      return out + "}";
    }
    default:
      return ValueText(v);
  }
}

const google::protobuf::Value* Metric(const v1::Compile& c, absl::string_view key) {
  auto it = c.metrics().fields().find(std::string(key));
  return it == c.metrics().fields().end() ? nullptr : &it->second;
}

void WriteStack(const google::protobuf::RepeatedPtrField<v1::StackFrame>& stack,
                const SiteModel& model, HtmlWriter& w) {
  if (stack.empty()) {
    w.Tag("<p class=\"muted\">None logged.</p>\n");
    return;
  }
  w.Tag("<ol class=\"stack\">\n");
  for (const v1::StackFrame& f : stack) {
    w.Tag("<li>");
    WriteStackFrame(f, model, w);
    w.Tag("</li>\n");
  }
  w.Tag("</ol>\n");
}

// The innermost user frame of a stack, as "file:line in name" with its code.
void WriteUserFrame(const google::protobuf::RepeatedPtrField<v1::StackFrame>& stack,
                    const SiteModel& model, HtmlWriter& w) {
  if (stack.empty()) {
    w.Text("—");
    return;
  }
  WriteStackFrame(stack[stack.size() - 1], model, w);
  if (stack.size() > 1) {
    w.Tag("<details class=\"traceback\"><summary>the whole user stack</summary>");
    WriteStack(stack, model, w);
    w.Tag("</details>");
  }
}

void WriteHeader(const v1::SessionCapture& capture, const v1::Compile& c,
                 const SiteModel::CompileEntry& entry, HtmlWriter& w) {
  w.Tag("<header>\n<p class=\"sub\"><a href=\"../index.html#compiles\">← the session</a></p>\n");
  w.Tag("<h1>Compile ").Text(c.id()).Tag("</h1>\n<p class=\"sub\">");
  for (const v1::Frame& f : capture.frames()) {
    if (f.id() != c.frame_id()) continue;
    w.Tag("<code>").Text(f.name()).Tag("</code> · <code>");
    w.Text(absl::StrCat(f.file(), ":", f.line())).Tag("</code> · ");
  }
  w.Tag("<span class=\"").Tag(OutcomeClass(c)).Tag("\">").Text(OutcomeWord(c)).Tag("</span>");
  if (c.duration_us() > 0) w.Tag(" · ").Text(FormatDuration(c.duration_us()));
  w.Tag("</p>\n");
  if (!entry.mentioned_in.empty()) {
    w.Tag("<p>In the analysis: ");
    for (const SectionRef& s : entry.mentioned_in) {
      w.Tag("<a href=\"../index.html#").Text(s.anchor).Tag("\">").Text(s.title).Tag("</a> ");
    }
    w.Tag("</p>\n");
  }
  w.Tag("</header>\n");
}

void WriteTimes(const v1::Compile& c, const SiteModel::CompileEntry& entry, HtmlWriter& w) {
  OpenSection("times", "Compile time", w);
  // The phases as the report's Compile time section reads them (compilation_metrics' phases,
  // then the trace events' that no metric times), longest first: the nested ones follow the
  // phase they run in. A report without that section: the metrics' time fields as they are.
  std::vector<std::pair<std::string, int64_t>> rows;
  const v1::CompileTime* row = entry.compile_time;
  if (row != nullptr) {
    for (const auto& [name, seconds] : row->phases())
      rows.emplace_back(name, ClampedMicros(seconds * 1e6));
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    w.Tag("<p>").Text(absl::StrCat("Charged to ", CauseWords(row->cause()), " in the report's "));
    w.Tag("<a href=\"../index.html#compile-time\">Compile time</a>.</p>\n");
  } else {
    for (const auto& [key, value] : c.metrics().fields()) {
      if (value.kind_case() != google::protobuf::Value::kNumberValue) continue;
      // start_time_us and end_time_us are instants, not times spent.
      if (absl::StartsWith(key, "start_time") || absl::StartsWith(key, "end_time")) continue;
      if (!absl::EndsWith(key, "_time_s") && !absl::EndsWith(key, "_time_us")) continue;
      const double v = value.number_value();
      rows.emplace_back(key, ClampedMicros(absl::EndsWith(key, "_s") ? v * 1e6 : v));
    }
    std::sort(rows.begin(), rows.end());
  }
  if (rows.empty()) {
    w.Tag("<p class=\"muted\">The compile's metrics record no phase times.</p>\n");
  } else {
    w.BeginTable({"Phase", "Time"});
    for (const auto& [name, us] : rows) {
      w.Tag("<tr><td><code>").Text(name).Tag("</code></td><td>").Text(FormatDuration(us));
      w.Tag("</td></tr>\n");
    }
    w.EndTable();
  }
  // The trace events' own times, where the report's row did not already take them in.
  if (row == nullptr && !c.phases().empty()) {
    w.Tag("<h3>From torch's trace events</h3>\n");
    w.BeginTable({"Event", "Time"});
    for (const v1::Phase& p : c.phases()) {
      w.Tag("<tr><td><code>").Text(p.name()).Tag("</code></td><td>");
      w.Text(FormatDuration(p.duration_us())).Tag("</td></tr>\n");
    }
    w.EndTable();
  }
  CloseSection(w);
}

void WriteOutcome(const v1::SessionCapture& capture, const v1::Compile& c, const SiteModel& model,
                  const SiteModel::CompileEntry& entry, HtmlWriter& w) {
  const bool failed = !c.fail_type().empty();
  const bool restarted = c.status() == v1::Compile::RESTARTED;
  if (!failed && c.restart_reasons().empty() && !restarted) return;
  OpenSection("outcome", "Failure and restarts", w);
  if (restarted) {
    // The attempt that followed: this id's next attempt, "1/0" or "1/0_1" -> "1/0_2" (a reset
    // round's "@N" kept).
    std::string id = c.id(), round;
    if (const size_t at = id.find('@'); at != std::string::npos) {
      round = id.substr(at);
      id.resize(at);
    }
    if (const size_t under = id.find('_'); under != std::string::npos) id.resize(under);
    w.Tag("<p>torch gave this attempt up and traced the frame again");
    if (auto next = model.by_id.find(absl::StrCat(id, "_", c.attempt() + 1, round));
        next != model.by_id.end()) {
      w.Tag(" as ");
      WriteCompileLink(capture.compiles(next->second), model, next->second, "../", w);
    }
    w.Tag(c.graph_breaks().empty() ? Markup(".</p>\n")
                                   : Markup(", at its graph break:</p>\n<ul>\n"));
    for (const v1::GraphBreak& gb : c.graph_breaks()) {
      w.Tag("<li><code>").Text(gb.reason()).Tag("</code></li>\n");
    }
    if (!c.graph_breaks().empty()) w.Tag("</ul>\n");
  }
  if (failed) {
    w.Tag("<div class=\"failure\"><p><strong>").Text(c.fail_type()).Tag("</strong>: ");
    w.Text(c.fail_reason()).Tag("</p>\n");
    const google::protobuf::Value* file = Metric(c, "fail_user_frame_filename");
    const google::protobuf::Value* line = Metric(c, "fail_user_frame_lineno");
    if (file != nullptr && file->has_string_value()) {
      v1::StackFrame f;
      f.set_file(file->string_value());
      if (line != nullptr && line->has_number_value()) {
        const double n = line->number_value();  // from the log: clamped before it converts
        f.set_line(std::isfinite(n) && n > 0 ? static_cast<uint32_t>(std::min(n, 4294967295.0))
                                             : 0);
      }
      w.Tag("<p>At ");
      WriteStackFrame(f, model, w);
      w.Tag("</p>\n");
    }
    for (int r : entry.records) {
      const v1::Record& record = capture.records(r);
      if (record.name() != "dynamo_error" || record.text().empty()) continue;
      w.Tag("<details class=\"traceback\" open><summary>traceback</summary><pre>");
      w.Text(record.text()).Tag("</pre></details>\n");
    }
    w.Tag("</div>\n");
  }
  if (!c.restart_reasons().empty()) {
    w.Tag("<h3>Restarted because</h3>\n<ul>\n");
    for (const std::string& reason : c.restart_reasons()) w.Tag("<li>").Text(reason).Tag("</li>\n");
    w.Tag("</ul>\n");
  }
  CloseSection(w);
}

// "0/1: tensor 'L['x']' size mismatch…" names the cache entry 0/1 whose guard failed.
int ReasonCompile(const std::string& reason, const SiteModel& model) {
  const size_t colon = reason.find(": ");
  if (colon == std::string::npos) return -1;
  auto it = model.by_id.find(absl::string_view(reason).substr(0, colon));
  return it == model.by_id.end() ? -1 : it->second;
}

void WriteRecompiles(const v1::SessionCapture& capture, const v1::Compile& c,
                     const SiteModel& model, const SiteModel::CompileEntry& entry, HtmlWriter& w) {
  const int next = entry.recompiled_by;
  if (c.recompile_reasons().empty() && next < 0) return;
  OpenSection("recompiles", "Recompiles", w);
  if (!c.recompile_reasons().empty()) {
    w.Tag("<h3>This compile ran because a guard of each earlier entry failed</h3>\n<ul>\n");
    for (const std::string& reason : c.recompile_reasons()) {
      w.Tag("<li>");
      if (const int at = ReasonCompile(reason, model); at >= 0) {
        WriteCompileLink(capture.compiles(at), model, at, "../", w, "guards");
        w.Tag(" ");
      }
      w.Tag("<code>").Text(reason).Tag("</code></li>\n");
    }
    w.Tag("</ul>\n");
  }
  if (next >= 0) {
    const v1::Compile& n = capture.compiles(next);
    w.Tag("<h3>The guard of this compile that failed next</h3>\n<p>");
    WriteCompileLink(n, model, next, "../", w, "recompiles");
    w.Tag(" compiled again because:</p>\n<ul>\n");
    bool named = false;
    for (const std::string& reason : n.recompile_reasons()) {
      auto self = model.by_id.find(c.id());
      if (ReasonCompile(reason, model) != self->second) continue;
      w.Tag("<li><code>").Text(reason).Tag("</code></li>\n");
      named = true;
    }
    if (!named) {
      for (const std::string& reason : n.recompile_reasons())
        w.Tag("<li><code>").Text(reason).Tag("</code></li>\n");
    }
    w.Tag("</ul>\n");
  }
  CloseSection(w);
}

void WriteGuards(const v1::SessionCapture& capture, const v1::Compile& c,
                 const SiteModel::CompileEntry& entry, HtmlWriter& w) {
  OpenSection("guards", "Guards", w);
  w.Tag("<dl class=\"meta\">");
  for (const char* key : {"guard_count", "shape_env_guard_count"}) {
    if (const google::protobuf::Value* v = Metric(c, key)) {
      w.Tag("<dt><code>").Text(key).Tag("</code></dt><dd>").Text(ValueText(*v)).Tag("</dd>");
    }
  }
  w.Tag("<dt>sources guarded</dt><dd>").Text(absl::StrCat(GuardedSourceCount(c))).Tag("</dd>");
  w.Tag("</dl>\n");
  bool tree = false;
  for (int r : entry.records) {
    const v1::Record& record = capture.records(r);
    if (record.kind() != "dynamo_cpp_guards_str" && record.kind() != "dynamo_guards") continue;
    tree = true;
    w.Tag("<h3>").Text(record.kind()).Tag(" (line ").Text(absl::StrCat(record.line()));
    w.Tag(")</h3>\n");
    if (record.text().empty()) {
      w.Tag("<p class=\"muted\">Not kept in this capture.</p>\n");
    } else {
      w.Tag("<pre class=\"code\">").Text(record.text()).Tag("</pre>\n");
    }
  }
  if (!tree) w.Tag("<p class=\"muted\">The log holds no guard tree for this compile.</p>\n");
  CloseSection(w);
}

void WriteDynamicShapes(const v1::Compile& c, const SiteModel& model, HtmlWriter& w) {
  if (c.symbols().empty() && c.specializations().empty() && c.shape_guards().empty()) return;
  OpenSection("dynamic-shapes", "Dynamic shapes", w);
  if (!c.specializations().empty()) {
    w.Tag("<h3>Specialized: a dynamic size became a constant</h3>\n");
    w.BeginTable({"Symbol", "Sources", "Value", "Specialized by", "Why"});
    for (const v1::Specialization& s : c.specializations()) {
      w.Tag("<tr><td><code>").Text(s.symbol()).Tag("</code></td><td><code>");
      w.Text(absl::StrJoin(s.sources(), ", "));
      w.Tag("</code></td><td><code>").Text(s.value()).Tag("</code></td><td>");
      WriteUserFrame(s.user_stack(), model, w);
      w.Tag("</td><td>").Text(s.reason()).Tag("</td></tr>\n");
    }
    w.EndTable();
  }
  if (!c.symbols().empty()) {
    w.Tag("<h3>Symbols created</h3>\n");
    w.BeginTable({"Symbol", "Source", "Hint", "Range", "Created by"});
    for (const v1::Symbol& s : c.symbols()) {
      w.Tag("<tr><td><code>").Text(s.name()).Tag(s.unbacked() ? Markup(" (unbacked)") : Markup(""));
      w.Tag("</code></td><td><code>").Text(OrDash(s.source())).Tag("</code></td><td>");
      w.Text(OrDash(s.hint())).Tag("</td><td><code>").Text(s.range()).Tag("</code></td><td>");
      WriteUserFrame(s.user_stack(), model, w);
      w.Tag("</td></tr>\n");
    }
    w.EndTable();
  }
  if (!c.shape_guards().empty()) {
    w.Tag("<h3>Guards added on sizes</h3>\n");
    w.BeginTable({"Guard", "Added by"});
    for (const v1::ShapeGuard& g : c.shape_guards()) {
      w.Tag("<tr><td><code>").Text(g.expr()).Tag("</code></td><td>");
      WriteUserFrame(g.user_stack(), model, w);
      w.Tag("</td></tr>\n");
    }
    w.EndTable();
  }
  CloseSection(w);
}

// The nodes the IR diff changed on this compile's graphs of `stage`, when it is a diff's head.
absl::flat_hash_set<std::string> ChangedNodes(const v1::AnalysisReport& report,
                                              const v1::Compile& c) {
  absl::flat_hash_set<std::string> changed;
  const v1::IrDiffSection& diff = report.ir_diff();
  bool head = false;
  for (const v1::IrDiffFrame& f : diff.frames()) head |= f.head_compile() == c.id();
  if (!head) return changed;
  for (const v1::NodeChange& n : diff.added()) changed.insert(n.node());
  for (const v1::NodeChange& n : diff.modified()) changed.insert(n.node());
  return changed;
}

// The node an FX text line defines: "add_1: \"f32[4]\" = …" or "add_1 = …" -> "add_1".
absl::string_view DefinedNode(absl::string_view line) {
  line = absl::StripLeadingAsciiWhitespace(line);
  size_t end = 0;
  while (end < line.size() && (absl::ascii_isalnum(line[end]) || line[end] == '_')) ++end;
  if (end == 0) return {};
  const absl::string_view rest = line.substr(end);
  if (absl::StartsWith(rest, ": ") || absl::StartsWith(rest, " = ")) return line.substr(0, end);
  return {};
}

void WriteGraphText(absl::string_view text, const absl::flat_hash_set<std::string>& changed,
                    HtmlWriter& w) {
  w.Tag("<pre class=\"code\">");
  if (changed.empty()) {
    w.Text(text);
  } else {
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      const absl::string_view node = DefinedNode(line);
      const bool mark = !node.empty() && changed.contains(node);
      w.Tag(mark ? Markup("<mark>") : Markup("")).Text(line);
      w.Tag(mark ? Markup("</mark>\n") : Markup("\n"));
    }
  }
  w.Tag("</pre>\n");
}

// One record shown in place: a heading, its download, its text folded.
void WriteRecordBody(const v1::Record& record, const std::string& file, bool open,
                     const absl::flat_hash_set<std::string>& changed, HtmlWriter& w) {
  w.Tag(open ? Markup("<details open class=\"record\">") : Markup("<details class=\"record\">"));
  w.Tag("<summary><code>").Text(record.name().empty() ? record.kind() : record.name());
  w.Tag("</code> <span class=\"muted\">line ").Text(absl::StrCat(record.line())).Tag(" · ");
  w.Text(FormatBytes(record.bytes())).Tag("</span>");
  if (!file.empty()) {
    w.Tag(" <a download href=\"").Text(RelativeToPage(file)).Tag("\">download</a>");
  }
  w.Tag("</summary>\n");
  if (record.text().empty()) {
    w.Tag("<p class=\"muted\">Not kept in this capture");
    if (record.truncated()) w.Tag(" (its text budget was spent)");
    w.Tag(".</p>\n");
  } else {
    WriteGraphText(record.text(), changed, w);
    if (record.truncated())
      w.Tag("<p class=\"warn\">Cut: the capture kept only its beginning.</p>\n");
  }
  w.Tag("</details>\n");
}

void WriteKernels(const v1::SessionCapture& capture, const v1::AnalysisReport& report,
                  const v1::Compile& c, HtmlWriter& w) {
  const absl::flat_hash_set<absl::string_view> graphs(c.graph_ids().begin(), c.graph_ids().end());
  std::vector<const v1::Kernel*> kernels;
  for (const v1::Kernel& k : capture.kernels()) {
    if (graphs.contains(k.graph_id())) kernels.push_back(&k);
  }
  if (kernels.empty()) return;
  OpenSection("kernels", "Kernels", w);
  w.BeginTable({"Kernel", "Op", "FLOPs", "Bytes", "Time", "Bound", "Achieved / attainable"});
  for (const v1::Kernel* k : kernels) {
    const v1::RooflineKernel* row = nullptr;
    for (const v1::RooflineKernel& r : report.roofline().kernels()) {
      if (r.name() == k->name()) row = &r;
    }
    w.Tag("<tr><td><code>").Text(k->name()).Tag("</code></td>");
    if (row == nullptr) {
      w.Tag("<td>—</td><td>—</td><td>—</td><td>");
      w.Text(k->estimated_us() > 0 ? absl::StrCat(FormatFixed(k->estimated_us(), 1), " µs (est.)")
                                   : "—");
      w.Tag("</td><td>—</td><td>—</td></tr>\n");
      continue;
    }
    w.Tag("<td><code>").Text(OrDash(row->op())).Tag("</code></td><td>");
    w.Text(FormatSi(row->flops(), "FLOP")).Tag("</td><td>").Text(FormatBytes(row->bytes()));
    w.Tag("</td><td>")
        .Text(row->time_us() > 0 ? absl::StrCat(FormatFixed(row->time_us(), 1), " µs") : "—");
    w.Tag("</td><td>")
        .Text(row->bound() == v1::RooflineKernel::MEMORY    ? "memory"
              : row->bound() == v1::RooflineKernel::COMPUTE ? "compute"
                                                            : "—");
    w.Tag("</td><td>");
    if (row->attainable() > 0 && row->achieved() > 0) {
      w.Text(FormatPercent(row->achieved() / row->attainable()));
    } else {
      w.Text("—");
    }
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
  w.Tag(
      "<p class=\"muted\">The roofline rows of the session are in <a "
      "href=\"../index.html#roofline\">Roofline</a>.</p>\n");
  CloseSection(w);
}

void WriteCaches(const v1::SessionCapture& capture, const v1::Compile& c,
                 const SiteModel::CompileEntry& entry, const std::vector<std::string>& files,
                 HtmlWriter& w) {
  OpenSection("caches", "Caches", w);
  if (c.cache_events().empty()) {
    w.Tag("<p class=\"muted\">The log records no cache lookup for this compile.</p>\n");
  } else {
    w.BeginTable({"Cache", "Outcome", "Key", "Bypass reason"});
    for (const v1::CacheEvent& e : c.cache_events()) {
      // The outcome's class names it for a reader of the markup (and the corpus test): only
      // torch's three words, never capture text.
      const Markup cls = e.status() == "hit"      ? Markup(" class=\"cache-hit\"")
                         : e.status() == "miss"   ? Markup(" class=\"cache-miss\"")
                         : e.status() == "bypass" ? Markup(" class=\"cache-bypass\"")
                                                  : Markup("");
      w.Tag("<tr><td>").Text(e.cache()).Tag("</td><td").Tag(cls).Tag(">").Text(e.status());
      w.Tag("</td><td><code>").Text(OrDash(e.key())).Tag("</code></td><td>");
      w.Text(OrDash(e.reason())).Tag("</td></tr>\n");
    }
    w.EndTable();
  }
  for (size_t k = 0; k < entry.records.size(); ++k) {
    const v1::Record& r = capture.records(entry.records[k]);
    if (IsCacheRecord(r)) WriteRecordBody(r, files[k], false, {}, w);
  }
  CloseSection(w);
}

void WriteCustomOps(const v1::Compile& c, HtmlWriter& w) {
  const google::protobuf::Value* ok = Metric(c, "compliant_custom_ops");
  const google::protobuf::Value* bad = Metric(c, "non_compliant_ops");
  const auto listed = [](const google::protobuf::Value* v) {
    return v != nullptr && v->has_list_value() && v->list_value().values_size() > 0;
  };
  if (!listed(ok) && !listed(bad)) return;
  OpenSection("custom-ops", "Custom ops", w);
  w.Tag("<dl class=\"meta\">");
  if (listed(ok)) w.Tag("<dt>compliant</dt><dd><code>").Text(ValueText(*ok)).Tag("</code></dd>");
  if (listed(bad))
    w.Tag("<dt>non-compliant</dt><dd><code>").Text(ValueText(*bad)).Tag("</code></dd>");
  w.Tag("</dl>\n");
  CloseSection(w);
}

void WriteMetrics(const v1::Compile& c, HtmlWriter& w) {
  OpenFoldedSection("metrics", "Compilation metrics", w);
  if (c.metrics().fields().empty()) {
    w.Tag("<p class=\"muted\">The log has no compilation_metrics for this compile.</p>\n");
    CloseSection(w);
    return;
  }
  std::vector<std::string> keys;
  for (const auto& [key, value] : c.metrics().fields()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  w.BeginTable({"Field", "Value"});
  for (const std::string& key : keys) {
    w.Tag("<tr><td><code>").Text(key).Tag("</code></td><td><code>");
    w.Text(ValueText(*Metric(c, key))).Tag("</code></td></tr>\n");
  }
  w.EndTable();
  CloseSection(w);
}

void WriteRecordList(const v1::SessionCapture& capture, const SiteModel::CompileEntry& entry,
                     const std::vector<std::string>& files, HtmlWriter& w) {
  OpenFoldedSection("records", "Every record of this compile", w);
  w.BeginTable({"Line", "Record", "Bytes", "Text"});
  for (size_t k = 0; k < entry.records.size(); ++k) {
    const v1::Record& r = capture.records(entry.records[k]);
    w.Tag("<tr><td>").Text(absl::StrCat(r.line())).Tag("</td><td><code>").Text(r.kind());
    if (!r.name().empty()) w.Tag(" ").Text(r.name());
    w.Tag("</code></td><td>").Text(FormatBytes(r.bytes())).Tag("</td><td>");
    if (files[k].empty()) {
      w.Text("—");
    } else {
      w.Tag("<a href=\"").Text(RelativeToPage(files[k])).Tag("\">view</a>");
    }
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
  CloseSection(w);
}

}  // namespace

absl::Status WriteCompilePage(const v1::SessionCapture& capture, const v1::AnalysisReport& report,
                              const SiteModel& model, int index, SiteSink& sink) {
  const v1::Compile& c = capture.compiles(index);
  const SiteModel::CompileEntry& entry = model.compiles[index];
  // Each record with text as a file of its own or in the bundle, first, so that the page can link
  // them.
  std::vector<std::string> files(entry.records.size());
  const std::string bundle_file = BundleFile(entry);
  HtmlWriter bundle;
  size_t bundled_bytes = 0;
  for (size_t k = 0; k < entry.records.size(); ++k) {
    const v1::Record& r = capture.records(entry.records[k]);
    if (r.text().empty()) continue;
    if (Bundled(r) && bundled_bytes + r.text().size() <= kMaxBundleBytes) {
      if (bundled_bytes == 0) {
        WritePageHead(absl::StrCat("compile ", c.id(), " records · compile-lens"), bundle);
        bundle.Tag("<body>\n<main>\n<p><a href=\"../").Text(RelativeToPage(entry.page));
        bundle.Tag("\">compile ").Text(c.id()).Tag("</a>: its small records</p>\n");
      }
      bundled_bytes += r.text().size() + 1;  // an empty text is not bundled: no zero-size bundle
      const std::string anchor = absl::StrCat("r", entry.records[k]);
      files[k] = absl::StrCat(bundle_file, "#", anchor);
      bundle.Tag("<section id=\"").Text(anchor).Tag("\"><h3><code>").Text(r.kind());
      if (!r.name().empty()) bundle.Tag(" ").Text(r.name());
      bundle.Tag("</code> <span class=\"muted\">line ").Text(absl::StrCat(r.line()));
      bundle.Tag("</span></h3>\n<pre>").Text(r.text()).Tag("</pre>");
      if (r.truncated())
        bundle.Tag("<p class=\"warn\">Cut: the capture kept only its beginning.</p>");
      bundle.Tag("</section>\n");
      continue;
    }
    files[k] = RecordFile(entry, r, entry.records[k]);
    if (absl::Status s = sink.Write(files[k], r.text()); !s.ok()) return s;
  }
  if (bundled_bytes > 0) {
    bundle.Tag("</main>\n</body>\n</html>\n");
    if (absl::Status s = sink.Write(bundle_file, bundle.Release()); !s.ok()) return s;
  }

  HtmlWriter w;
  WritePageHead(absl::StrCat("compile ", c.id(), " · compile-lens"), w);
  w.Tag("<body>\n");
  WriteHeader(capture, c, entry, w);
  w.Tag("<main>\n");
  OpenSection("stack", "Stack", w);
  WriteStack(c.stack(), model, w);
  CloseSection(w);
  WriteTimes(c, entry, w);
  WriteOutcome(capture, c, model, entry, w);
  WriteRecompiles(capture, c, model, entry, w);
  WriteGuards(capture, c, entry, w);
  WriteDynamicShapes(c, model, w);

  const absl::flat_hash_set<std::string> changed = ChangedNodes(report, c);
  bool graphs = false, code = false;
  for (size_t k = 0; k < entry.records.size(); ++k) {
    const v1::Record& r = capture.records(entry.records[k]);
    if (!IsGraphRecord(r) || IsCodeRecord(r)) continue;
    if (!graphs) OpenSection("graphs", "Graphs", w);
    graphs = true;
    WriteRecordBody(r, files[k], false, changed, w);
  }
  if (graphs) {
    if (!changed.empty())
      w.Tag(
          "<p class=\"muted\">Marked: the nodes the <a href=\"../index.html#ir-diff\">IR "
          "diff</a> found added or changed against the base.</p>\n");
    CloseSection(w);
  }
  for (size_t k = 0; k < entry.records.size(); ++k) {
    const v1::Record& r = capture.records(entry.records[k]);
    if (!IsCodeRecord(r)) continue;
    if (!code) OpenSection("output-code", "Output code and repro scripts", w);
    code = true;
    WriteRecordBody(r, files[k], false, {}, w);
  }
  if (code) CloseSection(w);
  WriteKernels(capture, report, c, w);
  WriteCustomOps(c, w);
  WriteCaches(capture, c, entry, files, w);
  WriteMetrics(c, w);
  WriteRecordList(capture, entry, files, w);
  w.Tag("</main>\n</body>\n</html>\n");
  return sink.Write(entry.page, w.Release());
}

}  // namespace cl

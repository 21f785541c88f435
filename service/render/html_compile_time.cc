// Compile time: the session's compile seconds by cause (adding up to the total), what each cache
// did, why head graphs missed against a base, then the seconds by frame and by compile, and the
// remedies.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/number_format.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {
namespace {

std::string Seconds(double s) { return absl::StrFormat("%.2f s", s); }

std::string Share(double part, double total) {
  return total > 0 ? FormatPercent(part / total) : "—";
}

// The phases a compile row shows, outermost first, as torch names them.
constexpr absl::string_view kRowPhases[] = {"backend_compile", "inductor_compile", "code_gen",
                                            "cpp_triton_compile"};

void WriteLedger(const v1::CompileTimeSection& section, HtmlWriter& w) {
  w.Tag("<h3>Where the seconds went</h3>\n");
  w.BeginTable({"cause", "seconds", "share", "compiles", "what", "where"});
  for (const v1::CompileCost& cost : section.ledger()) {
    w.Tag("<tr><td>").Text(CauseWords(cost.cause())).Tag("</td><td>");
    w.Text(Seconds(cost.seconds())).Tag("</td><td>").Text(Share(cost.seconds(), section.total_s()));
    w.Tag("</td><td>").Text(absl::StrCat(cost.count())).Tag("</td><td>").Text(cost.detail());
    w.Tag("</td><td>");
    if (!cost.location().file().empty()) WriteCodeLocation(cost.location(), w);
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
}

void WriteCaches(const v1::CompileTimeSection& section, HtmlWriter& w) {
  if (section.caches().empty()) return;
  w.Tag("<h3>Caches</h3>\n");
  w.BeginTable({"cache", "hits", "misses", "bypasses", "hit ratio", "saved by hits"});
  for (const v1::CacheOutcomes& c : section.caches()) {
    w.Tag("<tr><td>").Text(c.cache()).Tag("</td><td>").Text(absl::StrCat(c.hits()));
    w.Tag("</td><td>").Text(absl::StrCat(c.misses())).Tag("</td><td>");
    w.Text(absl::StrCat(c.bypasses())).Tag("</td><td>");
    w.Text(FormatPercent(c.hit_ratio())).Tag("</td><td>");
    w.Text(c.hits() > 0 ? Seconds(c.saved_s()) : "—").Tag("</td></tr>\n");
  }
  w.EndTable();
  for (const v1::CacheOutcomes& c : section.caches()) {
    for (const v1::BypassCount& b : c.bypass_reasons()) {
      w.Tag("<p>").Text(absl::StrCat(c.cache(), " bypassed ", b.count(), "×, ", b.reason_class()));
      w.Tag(": </p><pre class=\"reason\">").Text(OrDash(b.reason())).Tag("</pre>\n");
    }
  }
}

void WriteKeyDiffs(const v1::CompileTimeSection& section, HtmlWriter& w) {
  if (section.key_diffs().empty()) return;
  w.Tag("<h3>Why the cache missed (against the base)</h3>\n");
  w.BeginTable({"compile", "base", "frame", "cache", "what changed in the key", "seconds lost"});
  const int shown = ShownRows(section.key_diffs().size());
  for (int i = 0; i < shown; ++i) {
    const v1::CacheKeyDiff& d = section.key_diffs(i);
    w.Tag("<tr><td><code>").Text(d.compile_id()).Tag("</code></td><td><code>");
    w.Text(d.base_compile_id()).Tag("</code></td><td><code>").Text(OrDash(d.frame()));
    w.Tag("</code></td><td>").Text(d.cache()).Tag("</td><td>");
    if (d.base_hit_or_miss_same_key()) {
      w.Text("nothing: the base had this very key, so the cache was empty here");
    } else if (d.changed().empty()) {
      w.Text("— (the base logged no key parts to compare)");
    } else {
      std::vector<std::string> parts;
      for (const v1::KeyComponentChange& ch : d.changed()) {
        if (ch.change() == "changed") {
          parts.push_back(absl::StrCat(ch.name(), ": ", ch.base_value(), " → ", ch.head_value()));
        } else {
          parts.push_back(absl::StrCat(ch.name(), " ", ch.change()));
        }
      }
      w.Tag("<code>").Text(absl::StrJoin(parts, "; ")).Tag("</code>");
    }
    w.Tag("</td><td>").Text(Seconds(d.seconds_lost())).Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(section.key_diffs().size(), w);
}

void WriteFrames(const v1::CompileTimeSection& section, HtmlWriter& w) {
  w.Tag("<h3>By frame</h3>\n");
  w.BeginTable({"frame", "location", "compiles", "seconds", "share"});
  const int shown = ShownRows(section.frames().size());
  for (int i = 0; i < shown; ++i) {
    const v1::FrameCompileTime& f = section.frames(i);
    w.Tag("<tr><td><code>").Text(OrDash(f.frame())).Tag("</code></td><td>");
    WriteCodeLocation(f.location(), w);
    w.Tag("</td><td>").Text(absl::StrCat(f.compiles())).Tag("</td><td>");
    w.Text(Seconds(f.seconds())).Tag("</td><td>").Text(Share(f.seconds(), section.total_s()));
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(section.frames().size(), w);
}

void WriteCompiles(const v1::CompileTimeSection& section, HtmlWriter& w) {
  w.Tag("<details><summary>By compile (").Text(absl::StrCat(section.compiles().size()));
  w.Tag(")</summary>\n");
  w.BeginTable({"compile", "frame", "seconds", "cause", "AOT + Inductor", "Inductor", "code gen",
                "C++/Triton compile", "caches"});
  const int shown = ShownRows(section.compiles().size());
  for (int i = 0; i < shown; ++i) {
    const v1::CompileTime& c = section.compiles(i);
    w.Tag("<tr><td><code>").Text(c.id()).Tag("</code></td><td><code>").Text(OrDash(c.frame()));
    w.Tag("</code></td><td>").Text(Seconds(c.seconds())).Tag("</td><td>");
    w.Text(CauseWords(c.cause())).Tag("</td>");
    for (absl::string_view phase : kRowPhases) {
      auto it = c.phases().find(std::string(phase));
      w.Tag("<td>").Text(it == c.phases().end() ? "—" : Seconds(it->second)).Tag("</td>");
    }
    std::vector<std::string> caches;
    for (const v1::CompileCacheLookup& l : c.caches()) {
      if (l.cache() != "triton") caches.push_back(absl::StrCat(l.cache(), " ", l.outcome()));
    }
    w.Tag("<td>").Text(OrDash(absl::StrJoin(caches, ", "))).Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(section.compiles().size(), w);
  w.Tag("</details>\n");
}

}  // namespace

void WriteCompileTimeBody(const v1::CompileTimeSection& section, HtmlWriter& w) {
  w.Tag("<p>").Text("Compile time: ").Tag("<strong>").Text(Seconds(section.total_s()));
  w.Tag("</strong> ")
      .Text(absl::StrCat("over ", FormatCount(section.compiles().size(), "compile", "compiles"),
                         " of ", FormatCount(section.frames().size(), "frame", "frames"), " (from ",
                         section.source(), ")."))
      .Tag("</p>\n");
  WriteLedger(section, w);
  WriteCaches(section, w);
  WriteKeyDiffs(section, w);
  WriteFrames(section, w);
  WriteCompiles(section, w);
  WriteSuggestions(section.suggestions(), w);
}

}  // namespace cl

// Ranks (multi-rank session): whether the ranks agree on what torch.compile did, the ways the odd
// ones out differ, and what each rank's log shows. html_report.cc writes this section only when
// the pass ran on a multi-rank session, so a single-rank page is exactly the seed's.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "service/render/html_fragments.h"
#include "service/render/html_sections.h"

namespace cl {
namespace {

// Rank lists in a cell stop here; the JSON report has every rank.
constexpr int kMaxRanksInCell = 16;

std::string RankList(const google::protobuf::RepeatedField<int32_t>& ranks) {
  const int shown = std::min(ranks.size(), kMaxRanksInCell);
  std::string out = absl::StrJoin(ranks.begin(), ranks.begin() + shown, ", ");
  if (ranks.size() > shown) absl::StrAppend(&out, ", … (", ranks.size() - shown, " more)");
  return out;
}

void WriteDivergences(const v1::CrossRankSection& section, HtmlWriter& w) {
  const auto& divergences = section.divergences();
  w.Tag("<h3>Divergences (").Text(absl::StrCat(divergences.size())).Tag(")</h3>\n");
  w.BeginTable({"kind", "ranks", "detail"});
  for (int i = 0; i < ShownRows(divergences.size()); ++i) {
    const v1::RankDivergence& d = divergences[i];
    w.Tag("<tr><td><code>").Text(OrDash(d.kind())).Tag("</code></td><td class=\"warn\">");
    w.Text(RankList(d.ranks())).Tag("</td><td>").Text(OrDash(d.detail())).Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(divergences.size(), w);
}

void WriteRankRows(const v1::CrossRankSection& section, const std::set<int32_t>& odd,
                   HtmlWriter& w) {
  const auto& rows = section.ranks();
  w.Tag("<h3>Per rank</h3>\n");
  w.BeginTable({"rank", "log", "compiles", "recompiles", "failed", "graph breaks",
                "cache hit / miss / bypass"});
  for (int i = 0; i < ShownRows(rows.size()); ++i) {
    const v1::RankRow& row = rows[i];
    // The ranks that diverge stand out in the list of all ranks too.
    if (odd.contains(row.rank())) {
      w.Tag("<tr><td class=\"warn\">");
    } else {
      w.Tag("<tr><td>");
    }
    w.Text(absl::StrCat(row.rank())).Tag("</td><td><code>").Text(OrDash(row.source()));
    w.Tag("</code></td><td>").Text(absl::StrCat(row.compiles()));
    w.Tag("</td><td>").Text(absl::StrCat(row.recompiles()));
    w.Tag("</td><td>").Text(absl::StrCat(row.failed()));
    w.Tag("</td><td>").Text(absl::StrCat(row.graph_breaks()));
    const std::string cache =
        absl::StrCat(row.cache_hits(), " / ", row.cache_misses(), " / ", row.cache_bypasses());
    w.Tag("</td><td>").Text(cache);
    w.Tag("</td></tr>\n");
  }
  w.EndTable();
  WriteOmittedRows(rows.size(), w);
}

}  // namespace

void WriteRanksBody(const v1::CrossRankSection& section, HtmlWriter& w) {
  std::set<int32_t> odd;
  for (const v1::RankDivergence& d : section.divergences()) {
    odd.insert(d.ranks().begin(), d.ranks().end());
  }
  const std::string world = absl::StrCat(section.world_size(), " ranks; ");
  if (section.divergences().empty()) {
    w.Tag("<p class=\"good\">")
        .Text(world)
        .Tag("all agree on compiles, cache events and recompiles.</p>\n");
  } else {
    w.Tag("<p class=\"warn\">").Text(world).Text(absl::StrCat(odd.size()));
    if (odd.size() == 1) {
      w.Tag(" rank diverges from the others.</p>\n");
    } else {
      w.Tag(" ranks diverge from the others.</p>\n");
    }
    WriteDivergences(section, w);
  }
  WriteRankRows(section, odd, w);
}

}  // namespace cl

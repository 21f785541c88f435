#include "analyzers/ranks/cross_rank.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/utf8.h"
#include "re2/re2.h"

namespace cl {
namespace {

// A detail is one line of a report: its lists stop after a few items. The divergence's `ranks`
// and the rank rows still carry every rank.
constexpr size_t kMaxNamedRanks = 8;
constexpr size_t kMaxNamedIds = 3;
// Compile ids and cache events are capture strings; a hostile one must not swell the detail.
constexpr size_t kMaxQuotedBytes = 64;

using Sequence = std::vector<std::string>;

std::string Clip(absl::string_view s) { return ClipUtf8(s, kMaxQuotedBytes); }

// "a, b, c, … (12 more)".
std::string ListOf(const std::vector<std::string>& items, size_t max) {
  if (items.size() <= max) return absl::StrJoin(items, ", ");
  return absl::StrCat(absl::StrJoin(items.begin(), items.begin() + max, ", "), ", … (",
                      items.size() - max, " more)");
}

// "rank 1" or "ranks 0, 2, 3".
std::string Who(const std::vector<int32_t>& ranks) {
  std::vector<std::string> names;
  names.reserve(ranks.size());
  for (int32_t r : ranks) names.push_back(absl::StrCat(r));
  return absl::StrCat(ranks.size() == 1 ? "rank " : "ranks ", ListOf(names, kMaxNamedRanks));
}

// "once", "twice", "15 times".
std::string Times(size_t n) {
  if (n == 1) return "once";
  if (n == 2) return "twice";
  return absl::StrCat(n, " times");
}

// "no graph break", "1 graph break", "3 graph breaks".
std::string Count(size_t n, absl::string_view one, absl::string_view many) {
  if (n == 0) return absl::StrCat("no ", one);
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

struct CacheTally {
  uint32_t hits = 0;
  uint32_t misses = 0;
  uint32_t bypasses = 0;
};

// Counts "fx_graph:hit", "aot_autograd:miss", ... by the status after the last colon.
template <typename Events>
CacheTally TallyOf(const Events& events) {
  CacheTally t;
  for (const std::string& event : events) {
    const size_t colon = event.rfind(':');
    const absl::string_view status = colon == std::string::npos
                                         ? absl::string_view(event)
                                         : absl::string_view(event).substr(colon + 1);
    if (status == "hit") ++t.hits;
    if (status == "miss") ++t.misses;
    if (status == "bypass") ++t.bypasses;
  }
  return t;
}

// Ranks that reported the same value, in rank order.
template <typename Value>
struct Group {
  Value value;
  std::vector<int32_t> ranks;
};

// The digests' ranks grouped by `value_of`. The digests come sorted by rank, so the groups are in
// order of their lowest rank.
template <typename Value, typename ValueOf>
std::vector<Group<Value>> GroupRanks(const std::vector<const v1::RankDigest*>& digests,
                                     ValueOf value_of) {
  std::vector<Group<Value>> groups;
  std::map<Value, size_t> index;  // ordered: a Sequence has no hash, and groups are few
  for (const v1::RankDigest* d : digests) {
    Value value = value_of(*d);
    auto [it, inserted] = index.try_emplace(value, groups.size());
    if (inserted) groups.push_back({std::move(value), {}});
    groups[it->second].ranks.push_back(d->rank());
  }
  return groups;
}

// The norm is what most ranks did. On a tie the group with the lowest rank wins, so the result
// does not depend on anything but the ranks themselves: it comes first among equals.
template <typename Value>
size_t NormIndex(const std::vector<Group<Value>>& groups) {
  size_t norm = 0;
  for (size_t i = 1; i < groups.size(); ++i) {
    if (groups[i].ranks.size() > groups[norm].ranks.size()) norm = i;
  }
  return norm;
}

// Adds one divergence of `kind` per group that is not the norm. `describe(odd, norm, others)`
// writes its detail; `others` names the norm's ranks, or is "the others" when the norm holds
// every rank but the odd group's.
template <typename Value, typename ValueOf, typename Describe>
void Compare(absl::string_view kind, const std::vector<const v1::RankDigest*>& digests,
             ValueOf value_of, Describe describe, v1::CrossRankSection* section) {
  const std::vector<Group<Value>> groups = GroupRanks<Value>(digests, value_of);
  if (groups.size() < 2) return;
  const Group<Value>& norm = groups[NormIndex(groups)];
  const std::string others = groups.size() == 2 ? "the others" : Who(norm.ranks);
  for (const Group<Value>& odd : groups) {
    if (&odd == &norm) continue;
    v1::RankDivergence* d = section->add_divergences();
    d->set_kind(std::string(kind));
    d->mutable_ranks()->Add(odd.ranks.begin(), odd.ranks.end());
    d->set_detail(describe(odd, norm, others));
  }
}

// --- The details ---------------------------------------------------------------------------

// "compiled 15 times (0/0 … 0/14)", "compiled once (0/0)", "compiled nothing".
std::string Compiled(const Sequence& ids) {
  if (ids.empty()) return "compiled nothing";
  std::string span = Clip(ids.front());
  if (ids.size() == 2) absl::StrAppend(&span, ", ", Clip(ids.back()));
  if (ids.size() > 2) absl::StrAppend(&span, " … ", Clip(ids.back()));
  return absl::StrCat("compiled ", Times(ids.size()), " (", span, ")");
}

// The ids of `ids` that are not in `other`, each once, in order of appearance.
std::vector<std::string> IdsNotIn(const Sequence& ids, const Sequence& other) {
  const std::set<absl::string_view> exclude(other.begin(), other.end());
  std::set<absl::string_view> listed;
  std::vector<std::string> out;
  for (const std::string& id : ids) {
    if (!exclude.contains(id) && listed.insert(id).second) out.push_back(Clip(id));
  }
  return out;
}

// "rank 1 compiled 15 times (0/0 … 0/14); ranks 0, 2 compiled once (0/0); only on rank 1: 0/1,
// 0/2, 0/3, … (11 more)".
std::string DescribeCompileIds(const Group<Sequence>& odd, const Group<Sequence>& norm,
                               absl::string_view /*others*/) {
  const std::string who = Who(odd.ranks);
  std::string detail =
      absl::StrCat(who, " ", Compiled(odd.value), "; ", Who(norm.ranks), " ", Compiled(norm.value));
  const std::vector<std::string> only = IdsNotIn(odd.value, norm.value);
  const std::vector<std::string> missing = IdsNotIn(norm.value, odd.value);
  if (!only.empty()) absl::StrAppend(&detail, "; only on ", who, ": ", ListOf(only, kMaxNamedIds));
  if (!missing.empty()) {
    absl::StrAppend(&detail, "; missing on ", who, ": ", ListOf(missing, kMaxNamedIds));
  }
  if (only.empty() && missing.empty() && odd.value.size() == norm.value.size()) {
    // The same ids, so the order is what differs: the frames compiled in another sequence.
    const auto [a, b] = std::mismatch(odd.value.begin(), odd.value.end(), norm.value.begin());
    absl::StrAppend(&detail, "; the same ids in another order, from position ",
                    a - odd.value.begin() + 1, ": ", Clip(*a), " against ", Clip(*b));
  }
  return detail;
}

// "20 hits, 10 misses"; empty for no events.
std::string TallyText(const Sequence& events) {
  const CacheTally t = TallyOf(events);
  std::vector<std::string> parts;
  if (t.hits > 0) parts.push_back(Count(t.hits, "hit", "hits"));
  if (t.misses > 0) parts.push_back(Count(t.misses, "miss", "misses"));
  if (t.bypasses > 0) parts.push_back(Count(t.bypasses, "bypass", "bypasses"));
  return absl::StrJoin(parts, ", ");
}

// "rank 2's cache sequence differs at event 3: fx_graph:miss against fx_graph:hit on the others",
// or, when one sequence runs on past the other, how long each is and the first event that one
// of them lacks.
std::string DescribeCacheSequence(const Group<Sequence>& odd, const Group<Sequence>& norm,
                                  absl::string_view others) {
  const Sequence& a = odd.value;
  const Sequence& b = norm.value;
  const size_t common = std::min(a.size(), b.size());
  const size_t i = std::mismatch(a.begin(), a.begin() + common, b.begin()).first - a.begin();
  const std::string who = Who(odd.ranks);
  if (i < common) {
    const std::string whose = odd.ranks.size() == 1
                                  ? absl::StrCat(who, "'s cache sequence differs")
                                  : absl::StrCat("the cache sequence of ", who, " differs");
    return absl::StrCat(whose, " at event ", i + 1, ": ", Clip(a[i]), " against ", Clip(b[i]),
                        " on ", others);
  }
  // One sequence is a prefix of the other (they differ, so not both whole).
  std::string detail = absl::StrCat(who, " had ", Count(a.size(), "cache event", "cache events"));
  if (const std::string tally = TallyText(a); !tally.empty()) {
    absl::StrAppend(&detail, " (", tally, ")");
  }
  absl::StrAppend(&detail, " against ", b.empty() ? std::string("none") : absl::StrCat(b.size()),
                  " on ", others);
  if (a.size() > b.size()) {
    absl::StrAppend(&detail, "; the first extra is event ", b.size() + 1, ": ", Clip(a[b.size()]));
  } else {
    absl::StrAppend(&detail, "; the first missing is event ", a.size() + 1, ": ",
                    Clip(b[a.size()]));
  }
  return detail;
}

// A recompile reason without what differs between processes for the same code: object and type
// ids (`___check_obj_id(fn, 139696444471168)`), storage pointers and addresses (`at 0x7f…`).
// Sizes and values stay, however large.
std::string SameInEveryProcess(absl::string_view reason) {
  std::string out(reason);
  static const LazyRE2 kAddress = {R"re(0x[0-9a-fA-F]+)re"};
  static const LazyRE2 kId = {R"re((___check_(?:obj|type)_id\(.+?, |data_ptr\(\) == )\d+)re"};
  RE2::GlobalReplace(&out, *kAddress, "0x…");
  RE2::GlobalReplace(&out, *kId, "\\1…");
  return out;
}

// Where `a` and `b` first differ, with a little of what comes before: the end of a guard
// ("… expected 16, actual 1") is what tells two ranks' reasons apart.
std::string AroundDifference(absl::string_view a, absl::string_view b) {
  const size_t common = std::min(a.size(), b.size());
  const size_t i = std::mismatch(a.begin(), a.begin() + common, b.begin()).first - a.begin();
  constexpr size_t kBefore = 64, kMax = 120;
  if (i <= kBefore) return ClipUtf8(a, kMax);
  // Not inside a UTF-8 sequence: back up to a lead byte.
  size_t from = i - kBefore;
  while (from > 0 && (static_cast<unsigned char>(a[from]) & 0xC0) == 0x80) --from;
  return absl::StrCat("…", ClipUtf8(a.substr(from), kMax));
}

// "rank 1 recompiled for other reasons: at its 1st recompile, 0/1: `… expected 16, actual 1`
// against `… expected 16, actual 2` on the others".
std::string DescribeRecompileReasons(const Group<Sequence>& odd, const Group<Sequence>& norm,
                                     absl::string_view others) {
  const Sequence& a = odd.value;
  const Sequence& b = norm.value;
  const size_t i = std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin();
  std::string detail = absl::StrCat(Who(odd.ranks), " recompiled for other reasons");
  if (i < a.size() && i < b.size()) {
    absl::StrAppend(&detail, ": at recompile ", i + 1, ", `", AroundDifference(a[i], b[i]),
                    "` against `", AroundDifference(b[i], a[i]), "` on ", others,
                    " (a graph of its own: a size of 0 or 1, a value, a dtype that differs by "
                    "rank; graphs that differ by rank can desynchronise collectives)");
  }
  return detail;
}

// A detail for a per-rank count: "rank 1 recompiled 14 times; ranks 0, 2 did not recompile".
template <typename Phrase>
auto CountDetail(Phrase phrase) {
  return [phrase](const Group<uint32_t>& odd, const Group<uint32_t>& norm, absl::string_view) {
    return absl::StrCat(Who(odd.ranks), " ", phrase(odd.value), "; ", Who(norm.ranks), " ",
                        phrase(norm.value));
  };
}

std::string Recompiled(uint32_t n) {
  return n == 0 ? std::string("did not recompile") : absl::StrCat("recompiled ", Times(n));
}
std::string Failed(uint32_t n) {
  return absl::StrCat("had ", Count(n, "failed compile", "failed compiles"));
}
std::string Broke(uint32_t n) {
  return absl::StrCat("hit ", Count(n, "graph break", "graph breaks"));
}

void AddRow(const v1::RankDigest& d, v1::CrossRankSection* section) {
  v1::RankRow* row = section->add_ranks();
  row->set_rank(d.rank());
  row->set_source(d.source());
  row->set_compiles(d.compiles());
  row->set_recompiles(d.recompiles());
  row->set_failed(d.failed());
  row->set_graph_breaks(d.graph_breaks());
  const CacheTally t = TallyOf(d.cache_sequence());
  row->set_cache_hits(t.hits);
  row->set_cache_misses(t.misses);
  row->set_cache_bypasses(t.bypasses);
}

}  // namespace

absl::Status CrossRankPass::Run(const PassInput& in, v1::AnalysisReport* out) const {
  v1::CrossRankSection* section = out->mutable_ranks();
  if (in.head.ranks_size() < 2) {
    section->set_status(v1::SKIPPED);
    section->set_reason("single-rank session");
    return absl::OkStatus();
  }
  std::vector<const v1::RankDigest*> digests;
  for (const v1::RankDigest& d : in.head.ranks()) digests.push_back(&d);
  std::stable_sort(
      digests.begin(), digests.end(),
      [](const v1::RankDigest* a, const v1::RankDigest* b) { return a->rank() < b->rank(); });

  section->set_world_size(static_cast<uint32_t>(digests.size()));
  for (size_t i = 0; i < digests.size(); ++i) {
    if (in.Cancelled()) return absl::CancelledError("ranks pass cancelled");
    AddRow(*digests[i], section);
    // Two logs claiming one rank is an import oddity: both are compared, and the report says so.
    if (i > 0 && digests[i]->rank() == digests[i - 1]->rank()) {
      v1::Diagnostic* diag = out->add_diagnostics();
      diag->set_severity(v1::Diagnostic::WARNING);
      diag->set_where("pass ranks");
      diag->set_message(absl::StrCat("rank ", digests[i]->rank(), " has more than one log (",
                                     digests[i - 1]->source(), ", ", digests[i]->source(),
                                     "); each is compared as a rank of its own"));
    }
  }

  const auto ids = [](const v1::RankDigest& d) {
    return Sequence(d.compile_ids().begin(), d.compile_ids().end());
  };
  const auto cache = [](const v1::RankDigest& d) {
    return Sequence(d.cache_sequence().begin(), d.cache_sequence().end());
  };
  Compare<Sequence>("compile_ids", digests, ids, DescribeCompileIds, section);
  if (in.Cancelled()) return absl::CancelledError("ranks pass cancelled");
  Compare<Sequence>("cache_sequence", digests, cache, DescribeCacheSequence, section);
  if (in.Cancelled()) return absl::CancelledError("ranks pass cancelled");
  const int before_recompiles = section->divergences_size();
  Compare<uint32_t>(
      "recompiles", digests, [](const v1::RankDigest& d) { return d.recompiles(); },
      CountDetail(Recompiled), section);
  // Ranks that recompiled as often but for other reasons compiled other graphs (rank 1's last
  // batch of one row is specialised, rank 0's of two made dynamic). Compared only where the counts
  // agree: otherwise the recompiles divergence above already says the ranks differ.
  if (section->divergences_size() == before_recompiles) {
    const auto reasons = [](const v1::RankDigest& d) {
      Sequence out;
      for (const std::string& reason : d.recompile_reasons())
        out.push_back(SameInEveryProcess(reason));
      return out;
    };
    Compare<Sequence>("recompile_reasons", digests, reasons, DescribeRecompileReasons, section);
  }
  Compare<uint32_t>(
      "failed", digests, [](const v1::RankDigest& d) { return d.failed(); }, CountDetail(Failed),
      section);
  Compare<uint32_t>(
      "graph_breaks", digests, [](const v1::RankDigest& d) { return d.graph_breaks(); },
      CountDetail(Broke), section);
  section->set_status(v1::OK);
  return absl::OkStatus();
}

}  // namespace cl

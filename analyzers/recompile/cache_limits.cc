#include "analyzers/recompile/cache_limits.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "analyzers/common/location.h"
#include "analyzers/common/named_list.h"
#include "analyzers/recompile/reason.h"
#include "capture/validate.h"
#include "common/number_format.h"

namespace cl {
namespace {

struct LimitHits {
  std::vector<v1::CacheLimitHit> hits;
  // (frame id, or the function a message names when no frame is known; limit) → hits[i]. By id:
  // two frames may share a name (every module's `forward`).
  using Key = std::tuple<std::optional<uint32_t>, std::string, std::string>;
  std::map<Key, size_t> index;

  void Add(const FrameStats* frame, const std::string& function, const std::string& limit,
           std::optional<uint64_t> value, const std::string& evidence, const v1::Session& session) {
    const std::string name = frame != nullptr ? frame->name : function;
    const Key key = frame != nullptr ? Key{frame->id, "", limit} : Key{std::nullopt, name, limit};
    auto [it, inserted] = index.try_emplace(key, hits.size());
    if (inserted) {
      v1::CacheLimitHit& hit = hits.emplace_back();
      hit.set_frame(name);
      hit.set_limit(limit);
      if (frame != nullptr && !frame->file.empty()) {
        *hit.mutable_location() = MakeLocation(session, frame->file, frame->line);
      }
    }
    v1::CacheLimitHit& hit = hits[it->second];
    if (value) hit.set_value(static_cast<uint32_t>(std::min<uint64_t>(*value, UINT32_MAX)));
    hit.set_evidence(hit.evidence().empty() ? evidence
                                            : absl::StrCat(hit.evidence(), "; ", evidence));
  }
};

// Extra records torch writes whole from its own data (trace events, tensor descriptions, generated
// code, graph dumps): they never carry dynamo's log text, and they are most of a capture's extras
// (all 234 KB of the hero head's), which the limit scan would otherwise search four times over.
bool IsGeneratedRecord(absl::string_view kind) {
  static constexpr absl::string_view kGenerated[] = {"chromium_event",
                                                     "describe_storage",
                                                     "describe_tensor",
                                                     "describe_source",
                                                     "inductor_output_code",
                                                     "artifact:fx_graph_runnable",
                                                     "artifact:aot_forward_graph_fw_metadata",
                                                     "artifact:before_pre_grad_graph",
                                                     "artifact:after_pre_grad_graph",
                                                     "artifact:before_post_grad_graph",
                                                     "artifact:after_post_grad_graph"};
  return std::find(std::begin(kGenerated), std::end(kGenerated), kind) != std::end(kGenerated);
}

}  // namespace

std::vector<v1::CacheLimitHit> FindCacheLimitHits(const v1::SessionCapture& capture,
                                                  const std::map<uint32_t, FrameStats>& frames) {
  LimitHits out;
  // The frame a message is about: the one of the compile it was logged in, unless the message
  // names another; then the frame whose name, file and first line match the message's (as far as
  // it gives them), or failing the line (a frame read from a stack has its current line), whose
  // name and file do. Names alone do not tell frames apart: every module's `forward` shares one.
  auto frame_for = [&](const CacheLimitMessage& msg,
                       std::optional<uint32_t> frame_id) -> const FrameStats* {
    const FrameStats* own = nullptr;
    if (frame_id) {
      auto it = frames.find(*frame_id);
      if (it != frames.end()) own = &it->second;
    }
    if (msg.function.empty()) return own;
    const auto named = [&msg](const FrameStats& f, bool by_line) {
      return f.name == msg.function && (msg.file.empty() || f.file == msg.file) &&
             (!by_line || msg.line == 0 || f.line == msg.line);
    };
    for (const bool by_line : {true, false}) {
      if (own != nullptr && named(*own, by_line)) return own;
      for (const auto& [id, stats] : frames) {
        if (named(stats, by_line)) return &stats;
      }
    }
    return own;
  };
  // `where` names the text in the evidence; it is built only for a text that holds a message (most
  // hold none, and there is one scan per compile field and per extra record).
  auto scan = [&](absl::string_view text, std::optional<uint32_t> frame_id, auto where_fn) {
    std::optional<CacheLimitMessage> msg = ParseCacheLimitMessage(text);
    if (!msg) return;
    const std::string where = where_fn();
    const FrameStats* frame = frame_for(*msg, frame_id);
    std::optional<uint64_t> value = msg->value;
    if (!value && frame != nullptr) value = frame->config.limit;
    std::string evidence = absl::StrCat("torch reported hitting ", msg->limit);
    if (msg->value) absl::StrAppend(&evidence, " (", *msg->value, ")");
    absl::StrAppend(&evidence, " in ", where);
    if (!msg->last_reason.empty()) absl::StrAppend(&evidence, "; last reason: ", msg->last_reason);
    out.Add(frame, msg->function, msg->limit, value, evidence, capture.session());
  };
  for (const v1::Compile& compile : capture.compiles()) {
    const auto in_compile = [&](absl::string_view field) {
      return [&compile, field] {
        return absl::StrCat("compile ", compile.id().empty() ? "?" : compile.id(), " ", field);
      };
    };
    scan(compile.fail_type(), compile.frame_id(), in_compile("fail_type"));
    scan(compile.fail_reason(), compile.frame_id(), in_compile("fail_reason"));
    for (const std::string& reason : compile.restart_reasons()) {
      scan(reason, compile.frame_id(), in_compile("restart reason"));
    }
    for (const v1::GraphBreak& gb : compile.graph_breaks()) {
      scan(gb.reason(), compile.frame_id(), in_compile("graph break"));
    }
  }
  absl::flat_hash_map<absl::string_view, uint32_t> frame_of_compile;
  for (const v1::Compile& compile : capture.compiles()) {
    frame_of_compile.try_emplace(compile.id(), compile.frame_id());
  }
  for (const v1::Extra& extra : capture.extras()) {
    if (IsGeneratedRecord(extra.kind())) continue;
    std::optional<uint32_t> frame_id;
    if (auto it = frame_of_compile.find(extra.compile_id()); it != frame_of_compile.end()) {
      frame_id = it->second;
    }
    scan(extra.payload(), frame_id,
         [&extra] { return absl::StrCat("a `", extra.kind(), "` record"); });
  }
  for (const auto& [id, frame] : frames) {
    const size_t entries = frame.entries.size();
    const std::string source =
        frame.config.limit_from_capture ? "dynamo_config" : "torch's default";
    for (const auto& [name, limit] :
         {std::make_pair(frame.config.limit_name, frame.config.limit),
          std::make_pair(frame.config.accumulated_name, frame.config.accumulated_limit)}) {
      const size_t refused = frame.refused.size();
      const size_t compiled = entries - std::min(entries, refused);
      if (compiled < limit) continue;
      std::string evidence = absl::StrCat("`", frame.name, "` compiled ",
                                          FormatCount(compiled, "cache entry", "cache entries"),
                                          ", reaching ", name, " = ", limit, " (", source, ")");
      // What torch does next depends on the mode: a frame compiled with fullgraph=True raises
      // RecompileLimitExceeded on every later guard failure (one refusal each call); otherwise
      // the first refusal marks the frame to run eagerly and later calls leave no record.
      if (refused > 1) {
        absl::StrAppend(&evidence, "; torch refused ", refused, " more compiles (",
                        NamedList(frame.refused),
                        "), each raising RecompileLimitExceeded to its caller, as under "
                        "fullgraph=True: those calls did not run at all, compiled or eager");
      } else if (refused == 1) {
        absl::StrAppend(&evidence, "; torch refused the next compile (", frame.refused[0],
                        "): from then on the frame runs eagerly (under fullgraph=True that call "
                        "raised RecompileLimitExceeded instead)");
      } else {
        absl::StrAppend(&evidence,
                        "; further guard failures run the frame eagerly (or raise "
                        "RecompileLimitExceeded under fullgraph=True)");
      }
      out.Add(&frame, frame.name, name, limit, evidence, capture.session());
    }
  }
  return std::move(out.hits);
}

}  // namespace cl

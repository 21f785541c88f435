#include "capture/torch_trace/lens_records.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/digest.h"
#include "common/utf8.h"
#include "google/protobuf/util/json_util.h"

namespace cl {
namespace {

absl::string_view NameOf(LensRecord kind) {
  switch (kind) {
    case LensRecord::kIteration:
      return "compile_lens_iteration";
    case LensRecord::kDivergence:
      return "compile_lens_divergence";
    case LensRecord::kSource:
      return "compile_lens_source";
  }
  return "compile_lens_record";
}

absl::Status NotValid(LensRecord kind, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(NameOf(kind), " payload is not valid: ", why));
}

absl::Status Parse(LensRecord kind, absl::string_view payload, google::protobuf::Message* out) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // a misspelt field is an error, as in a .cls.json
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(payload.data(), payload.size()), out, options);
  if (!status.ok()) {
    // protobuf's message may go on with an excerpt of the payload on further lines: keep the line
    // that says what is wrong.
    absl::string_view why(status.message().data(), status.message().size());
    why = absl::StripAsciiWhitespace(why.substr(0, why.find('\n')));
    return NotValid(kind, why);
  }
  return absl::OkStatus();
}

// Quotes a user string for an error message, escaping anything unprintable and capping its length.
std::string Quote(absl::string_view s) { return absl::StrCat("\"", EscapedExcerpt(s, 80), "\""); }

}  // namespace

std::optional<LensRecord> LensRecordOf(absl::string_view artifact_name) {
  for (LensRecord kind : {LensRecord::kIteration, LensRecord::kDivergence, LensRecord::kSource}) {
    if (artifact_name == NameOf(kind)) return kind;
  }
  return std::nullopt;
}

absl::Status MergeLensRecord(LensRecord kind, absl::string_view payload,
                             v1::SessionCapture* capture, std::vector<std::string>* warnings) {
  switch (kind) {
    case LensRecord::kIteration: {
      v1::Iteration iteration;
      if (absl::Status s = Parse(kind, payload, &iteration); !s.ok()) return s;
      *capture->add_iterations() = std::move(iteration);
      return absl::OkStatus();
    }
    case LensRecord::kDivergence: {
      v1::Divergence divergence;
      if (absl::Status s = Parse(kind, payload, &divergence); !s.ok()) return s;
      for (int i = 0; i < divergence.layers_size(); ++i) {
        if (divergence.layers(i).name().empty())
          return NotValid(kind, absl::StrCat("layers[", i, "].name is empty"));
      }
      if (capture->has_divergence()) {
        warnings->push_back("a second compile_lens_divergence record replaces the first");
      }
      *capture->mutable_divergence() = std::move(divergence);
      return absl::OkStatus();
    }
    case LensRecord::kSource: {
      v1::SourceFile source;
      if (absl::Status s = Parse(kind, payload, &source); !s.ok()) return s;
      if (source.path().empty()) return NotValid(kind, "path is empty");
      const std::string hash = Sha256Hex(source.text());
      if (!source.sha256().empty() && !absl::EqualsIgnoreCase(source.sha256(), hash)) {
        warnings->push_back(
            absl::StrCat("compile_lens_source ", Quote(source.path()),
                         ": sha256 does not match the text (kept the text, with its own hash)"));
      }
      source.set_sha256(hash);
      for (v1::SourceFile& existing : *capture->mutable_sources()) {
        if (existing.path() == source.path()) {
          existing = std::move(source);
          return absl::OkStatus();
        }
      }
      *capture->add_sources() = std::move(source);
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown compile_lens record kind");
}

}  // namespace cl

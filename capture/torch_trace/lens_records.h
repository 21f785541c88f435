// The records the compile_lens Python package writes into a TORCH_TRACE log, as `artifact`
// records with JSON encoding: what torch itself does not log, but the passes need.
//
//   compile_lens_iteration   an Iteration (one call of a compiled frame)  → capture.iterations
//   compile_lens_divergence  the Divergence check (layers, bisect)        → capture.divergence
//   compile_lens_source      a SourceFile (a user file, embedded)         → capture.sources
//
// Each payload is its message's proto3 JSON (original or lowerCamel field names; an unknown field
// is an error, as in a .cls.json). Merging is the parser's only contact with these messages, so
// the rules live here: a later divergence replaces an earlier one, a source replaces one of the
// same path, and a source's sha256 is always the hash of the text kept.
#ifndef CAPTURE_TORCH_TRACE_LENS_RECORDS_H_
#define CAPTURE_TORCH_TRACE_LENS_RECORDS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compile_lens/v1/capture.pb.h"

namespace cl {

namespace v1 = ::compile_lens::v1;

enum class LensRecord { kIteration, kDivergence, kSource };

// The record an artifact name is, if it is one of ours.
std::optional<LensRecord> LensRecordOf(absl::string_view artifact_name);

// Parses `payload` and merges it into `capture`. A payload that is not valid leaves `capture`
// unchanged and comes back as INVALID_ARGUMENT whose message reads
// "compile_lens_iteration payload is not valid: <why>". What was merged with a caveat (a second
// divergence, a wrong sha256) is appended to `warnings`.
absl::Status MergeLensRecord(LensRecord kind, absl::string_view payload,
                             v1::SessionCapture* capture, std::vector<std::string>* warnings);

}  // namespace cl

#endif  // CAPTURE_TORCH_TRACE_LENS_RECORDS_H_

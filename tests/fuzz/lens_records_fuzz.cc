// Any bytes as a compile_lens record payload (the first byte picks iteration, divergence or
// source; the rest is the payload's JSON), merged into a capture that already holds a source and a
// divergence. An error leaves the capture exactly as it was and says which record was invalid; a
// merge keeps source paths distinct, every source's sha256 the hash of its text and every
// divergence layer named, and merging the same payload again changes no source count.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "capture/torch_trace/lens_records.h"
#include "common/digest.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace v1 = ::compile_lens::v1;

void CheckMerged(const v1::SessionCapture& c) {
  std::set<std::string> paths;
  for (const v1::SourceFile& s : c.sources()) {
    CL_FUZZ_CHECK(!s.path().empty() && paths.insert(s.path()).second);
    CL_FUZZ_CHECK(s.sha256() == cl::Sha256Hex(s.text()));
  }
  for (const auto& layer : c.divergence().layers()) CL_FUZZ_CHECK(!layer.name().empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const cl::LensRecord kind = data[0] == 'i'   ? cl::LensRecord::kIteration
                              : data[0] == 'd' ? cl::LensRecord::kDivergence
                                               : cl::LensRecord::kSource;
  const absl::string_view payload(reinterpret_cast<const char*>(data) + 1, size - 1);

  v1::SessionCapture capture;
  v1::SourceFile* source = capture.add_sources();
  source->set_path("/p/a.py");
  source->set_text("x = 1\n");
  source->set_sha256(cl::Sha256Hex(source->text()));
  capture.mutable_divergence()->add_layers()->set_name("fc");
  const std::string before = capture.SerializeAsString();

  std::vector<std::string> warnings;
  const absl::Status status = cl::MergeLensRecord(kind, payload, &capture, &warnings);
  if (!status.ok()) {
    CL_FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CL_FUZZ_CHECK(absl::StartsWith(status.message(), "compile_lens_"));
    CL_FUZZ_CHECK(capture.SerializeAsString() == before);
    CL_FUZZ_CHECK(warnings.empty());
    return 0;
  }
  CheckMerged(capture);
  const int sources = capture.sources_size();
  CL_FUZZ_CHECK(cl::MergeLensRecord(kind, payload, &capture, &warnings).ok());
  CheckMerged(capture);
  CL_FUZZ_CHECK(kind != cl::LensRecord::kSource || capture.sources_size() == sources);
  return 0;
}

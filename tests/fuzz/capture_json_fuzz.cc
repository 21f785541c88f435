// Any bytes as a .cls.json: an error or a validated capture, never a crash. A capture that loads
// writes back as JSON that loads again into the same capture, and writing that one gives the same
// bytes (JSON → capture → JSON is stable after one trip).
#include <cstddef>
#include <cstdint>

#include "capture/capture_io.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto capture = cl::LoadCapture({reinterpret_cast<const char*>(data), size}, cl::CaptureFormat::kJson, "fuzz");
  if (!capture.ok()) {
    CL_FUZZ_CHECK(!capture.status().message().empty());
    return 0;
  }
  auto json = cl::CaptureToJson(*capture);
  CL_FUZZ_CHECK(json.ok());
  auto again = cl::LoadCapture(*json, cl::CaptureFormat::kJson, "fuzz");
  CL_FUZZ_CHECK(again.ok());
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  std::string report;
  differencer.ReportDifferencesToString(&report);
  const bool same = differencer.Compare(*capture, *again);
  if (!same) std::fprintf(stderr, "captures differ:\n%s\n", report.substr(0, 4000).c_str());
  CL_FUZZ_CHECK(same);
  auto json_again = cl::CaptureToJson(*again);
  CL_FUZZ_CHECK(json_again.ok() && *json_again == *json);
  return 0;
}

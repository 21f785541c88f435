// examples/hero/{base,head}.cls.json are the importer's output for examples/hero/traces/*.log
// with the session facts scripts/hero_captures.sh gives. This keeps them in sync: a change to the
// importer that changes them fails here until the captures are regenerated with that script.
#include <string>

#include "capture/capture_io.h"
#include "client/inputs.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

InputOptions HeroOptions(const std::string& variant) {
  // Keep in step with scripts/hero_captures.sh.
  InputOptions in;
  in.import.project_root = "/mnt/project";
  in.import.keep_record_texts = true;  // import-trace keeps every record's text, for the site
  in.import.path_map = {{"/mnt/project/examples", CL_SOURCE_DIR "/examples/hero"}};
  in.overrides.project_root = "/mnt/project";
  in.overrides.gpu = "A100-SXM-80GB";
  in.overrides.torch_version = "2.6.0+debian";
  in.overrides.host = "torch-sandbox";
  in.overrides.labels = {
      {"cluster", "dev"}, {"model", "hero-scene"}, {"variant", variant}, {"device", "cpu"}};
  return in;
}

TEST(HeroCaptureSyncTest, CapturesAreTheImportersOutput) {
  for (const std::string variant : {"base", "head"}) {
    SCOPED_TRACE(variant);
    absl::StatusOr<v1::SessionCapture> imported = LoadSession(
        CL_SOURCE_DIR "/examples/hero/traces/" + variant + ".log", HeroOptions(variant));
    ASSERT_TRUE(imported.ok()) << imported.status();
    absl::StatusOr<v1::SessionCapture> committed =
        ReadCaptureFile(CL_SOURCE_DIR "/examples/hero/" + variant + ".cls.json");
    ASSERT_TRUE(committed.ok()) << committed.status();
    std::string diff;
    google::protobuf::util::MessageDifferencer differ;
    differ.ReportDifferencesToString(&diff);
    EXPECT_TRUE(differ.Compare(*committed, *imported))
        << "examples/hero/" << variant << ".cls.json is stale; run scripts/hero_captures.sh\n"
        << diff.substr(0, 4000);
    // The facts the seed report is built on.
    EXPECT_EQ(imported->frames(0).line(), 86u);
    EXPECT_EQ(imported->compiles_size(), 4);
    ASSERT_EQ(imported->sources_size(), 1);
    EXPECT_EQ(imported->sources(0).path(), "/mnt/project/examples/hero_scene.py");
  }
}

}  // namespace
}  // namespace cl

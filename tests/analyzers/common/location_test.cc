#include "analyzers/common/location.h"

#include "gtest/gtest.h"

namespace cl {
namespace {

TEST(RelativeToProjectRootTest, FileUnderRootBecomesRelative) {
  EXPECT_EQ(RelativeToProjectRoot("/mnt/project", "/mnt/project/examples/hero_scene.py"),
            "examples/hero_scene.py");
  EXPECT_EQ(RelativeToProjectRoot("/mnt/project/", "/mnt/project/a.py"), "a.py");
  EXPECT_EQ(RelativeToProjectRoot("/mnt/project", "/mnt/project//a.py"), "a.py");
}

TEST(PackagePathTest, AnInstalledPackagesFileFromThePackageOn) {
  EXPECT_EQ(PackagePath("/usr/lib/python3/dist-packages/torch/optim/optimizer.py"),
            "torch/optim/optimizer.py");
  EXPECT_EQ(PackagePath("/home/u/.venv/lib/python3.11/site-packages/transformers/a.py"),
            "transformers/a.py");
  EXPECT_EQ(PackagePath("/opt/x/site-packages/nested/site-packages/p/a.py"), "p/a.py");
  EXPECT_EQ(PackagePath("/mnt/project/a.py"), "/mnt/project/a.py");
  EXPECT_EQ(PackagePath("/usr/lib/python3.11/functools.py"), "/usr/lib/python3.11/functools.py");
}

TEST(RelativeToProjectRootTest, OtherFilesStayAsTheyAre) {
  // A sibling directory that shares the root's prefix is not under it.
  EXPECT_EQ(RelativeToProjectRoot("/mnt/project", "/mnt/projectX/a.py"), "/mnt/projectX/a.py");
  EXPECT_EQ(RelativeToProjectRoot("/mnt/project", "/usr/lib/torch/a.py"), "/usr/lib/torch/a.py");
  EXPECT_EQ(RelativeToProjectRoot("/mnt/project", "/mnt/project"), "/mnt/project");
  EXPECT_EQ(RelativeToProjectRoot("", "/mnt/project/a.py"), "/mnt/project/a.py");
  EXPECT_EQ(RelativeToProjectRoot("/", "/a.py"), "/a.py");
  EXPECT_EQ(RelativeToProjectRoot("/mnt/project", "examples/a.py"), "examples/a.py");
}

TEST(MakeLocationTest, UsesTheSessionProjectRoot) {
  compile_lens::v1::Session session;
  session.set_project_root("/mnt/project");
  compile_lens::v1::Location location =
      MakeLocation(session, "/mnt/project/examples/hero_scene.py", 86);
  EXPECT_EQ(location.file(), "examples/hero_scene.py");
  EXPECT_EQ(location.line(), 86u);
}

}  // namespace
}  // namespace cl

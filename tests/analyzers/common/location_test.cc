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

// Torch's traceback frame lines, as its "from user code:" and "User code traceback:" blocks print
// them; the last `", line ` ends the path, and anything else is no frame.
TEST(ParseTracebackFrameTest, ReadsTorchsFrameLinesAndNothingElse) {
  std::optional<compile_lens::v1::StackFrame> f =
      ParseTracebackFrame("   File \"/mnt/project/custom_op.py\", line 18, in f");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->file(), "/mnt/project/custom_op.py");
  EXPECT_EQ(f->line(), 18u);
  EXPECT_EQ(f->name(), "f");
  f = ParseTracebackFrame(R"(File "/a/odd", line 2, in b.py", line 7, in <lambda>)");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->file(), R"(/a/odd", line 2, in b.py)");
  EXPECT_EQ(f->line(), 7u);
  EXPECT_EQ(f->name(), "<lambda>");
  for (const char* other :
       {"    return scaled_clip(x.sin(), 0.5).cos()", "File \"a.py\", line x, in f",
        "File \"a.py\", line 3", "File \"a.py\", line 3, in ", ""}) {
    EXPECT_FALSE(ParseTracebackFrame(other).has_value()) << other;
  }
}

TEST(InnermostUserFrameTest, TheLastFrameOutsideInstalledPackages) {
  google::protobuf::RepeatedPtrField<compile_lens::v1::StackFrame> stack;
  for (const char* file : {"/mnt/project/train.py", "/mnt/project/model.py",
                           "/usr/lib/python3/dist-packages/torch/nn/modules/module.py"}) {
    stack.Add()->set_file(file);
  }
  ASSERT_NE(InnermostUserFrame(stack), nullptr);
  EXPECT_EQ(InnermostUserFrame(stack)->file(), "/mnt/project/model.py");
  stack.DeleteSubrange(0, 2);
  EXPECT_EQ(InnermostUserFrame(stack), nullptr);
}

// torch run from its source tree (pip install -e, a fbcode xar) is torch's too; a user's own
// folder called torch, and the checkout's tests and scripts, are the user's.
// A folder named torch is torch's only where the file under it is named as one of torch's modules;
// so a user's own `torch/utils.py` reads as torch's (the rule's known limit).
TEST(IsLibraryFileTest, ATorchSourceTreeIsTorchsOtherFilesInAFolderNamedTorchAreNot) {
  for (const char* torch :
       {"/data/users/me/pytorch/torch/_dynamo/external_utils.py",
        "/home/me/pytorch/torch/nn/modules/module.py", "/home/me/pytorch/torch/__init__.py",
        "/Users/me/Desktop/pytorch/torch/_tensor.py",
        "/mnt/xarfuse/uid-1/abc/torch/fx/graph_module.py",
        "/usr/lib/python3/dist-packages/torch/optim/adam.py", "<frozen runpy>"}) {
    EXPECT_TRUE(IsLibraryFile(torch)) << torch;
  }
  for (const char* user : {"/home/me/pytorch/test2.py", "/home/me/pytorch/test/dynamo/test_misc.py",
                           "/w/proj/torch/model.py", "/w/torch/train.py",
                           "/w/proj/torchvision_ext.py", "/mnt/project/torch_scene.py"}) {
    EXPECT_FALSE(IsLibraryFile(user)) << user;
  }
  EXPECT_TRUE(IsLibraryFile("/w/proj/torch/utils.py"));
}

// Torch's own files as its guard comments name them, relative to its package; a user's file there
// is written from the root, less the prefix it shares with torch's directory.
TEST(IsTorchPackagePathTest, TorchsModulesPrivateOrPublic) {
  for (const char* torch : {"nn/modules/conv.py", "_meta_registrations.py:3878 in bmm", "_ops.py",
                            "random.py", "functional.py:10", "cuda/graphs.py"}) {
    EXPECT_TRUE(IsTorchPackagePath(torch)) << torch;
  }
  for (const char* user : {"nt/project/model.py", "model.py", "", "/abs/nn/x.py"}) {
    EXPECT_FALSE(IsTorchPackagePath(user)) << user;
  }
}

}  // namespace
}  // namespace cl

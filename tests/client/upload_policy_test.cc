// What upload and spool flush do with each kind of failure, without a server: a failure of the
// client's own setup must never set a spooled capture aside as "rejected".
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/upload.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/captures.h"

namespace cl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(UploadPolicyTest, OnlyTheServerRefusingTheCaptureIsARejection) {
  EXPECT_TRUE(IsRefusedCapture(absl::InvalidArgumentError("graphs[0]: ...")));
  for (const absl::Status& s :
       {absl::FailedPreconditionError("token"), absl::UnauthenticatedError("no token"),
        absl::UnimplementedError("not a cl-server"), absl::UnavailableError("down")}) {
    EXPECT_FALSE(IsRefusedCapture(s)) << s;
  }
}

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/spool_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    v1::SessionCapture hero = testing::LoadHero("head.cls.json");
    for (const char* id : {"a", "b", "c"}) {
      hero.mutable_session()->set_id(id);
      ASSERT_TRUE(SpoolCapture(dir_, hero).ok());
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

// A token file that does not read fails before any call: the flush stops at the first session and
// leaves all three where they were (it used to move every one to .rejected, never to be sent).
TEST_F(SpoolTest, ASetupErrorStopsTheFlushAndKeepsEveryFile) {
  RemoteOptions remote;
  remote.target = "127.0.0.1:1";
  remote.security.token_file = dir_ + "/no-such-token";
  RetryPolicy policy;
  policy.deadline = absl::Seconds(5);
  const FlushResult r = FlushSpool(dir_, {}, remote, policy);
  EXPECT_EQ(r.delivered, 0);
  EXPECT_EQ(r.remaining, 3);
  ASSERT_THAT(r.errors, SizeIs(1));
  EXPECT_THAT(r.errors[0], HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(r.errors[0], HasSubstr("flush stopped"));
  EXPECT_THAT(Names(), ElementsAre("a.cls.pb", "b.cls.pb", "c.cls.pb"));
}

// A spool file that does not read as a capture is set aside; the others are still tried.
TEST_F(SpoolTest, AFileThatDoesNotReadIsSetAside) {
  ASSERT_TRUE(WriteFile(dir_ + "/b.cls.pb", "\xff\xff\xff\xff not a capture").ok());
  RemoteOptions remote;
  remote.target = "127.0.0.1:1";  // nothing listens: UNAVAILABLE, retried until the deadline
  RetryPolicy policy;
  policy.deadline = absl::Milliseconds(300);
  const FlushResult r = FlushSpool(dir_, {}, remote, policy);
  EXPECT_EQ(r.remaining, 3);
  EXPECT_THAT(r.errors, SizeIs(3));
  EXPECT_THAT(Names(), ElementsAre("a.cls.pb", "b.cls.pb.rejected", "c.cls.pb"));
}

}  // namespace
}  // namespace cl

namespace cl {
namespace {

class SpoolNameTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/spool_names";
    std::filesystem::remove_all(dir_);
    hero_ = testing::LoadHero("head.cls.json");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Spool(const v1::SessionCapture& c) {
    absl::StatusOr<std::string> path = SpoolCapture(dir_, c);
    EXPECT_TRUE(path.ok()) << path.status();
    return path.ok() ? std::filesystem::path(*path).filename().string() : "";
  }

  std::string dir_;
  v1::SessionCapture hero_;
};

TEST_F(SpoolNameTest, OneSessionOneFileTwoSessionsTwo) {
  hero_.mutable_session()->set_id("job-7");
  hero_.mutable_session()->set_world_size(1);
  hero_.mutable_session()->set_rank(0);
  EXPECT_EQ(Spool(hero_), "job-7.cls.pb");
  EXPECT_EQ(Spool(hero_), "job-7.cls.pb");  // spooled again: the same file
  // Each rank of the job (one session id) is a file of its own.
  hero_.mutable_session()->set_world_size(2);
  EXPECT_EQ(Spool(hero_), "job-7.rank0.cls.pb");
  hero_.mutable_session()->set_rank(1);
  EXPECT_EQ(Spool(hero_), "job-7.rank1.cls.pb");
  // Ids the name cannot spell apart are told apart by a digest of the id.
  hero_.mutable_session()->set_world_size(1);
  hero_.mutable_session()->set_rank(0);
  hero_.mutable_session()->set_id("a/b");
  const std::string slash = Spool(hero_);
  hero_.mutable_session()->set_id("a:b");
  const std::string colon = Spool(hero_);
  EXPECT_NE(slash, colon);
  EXPECT_TRUE(absl::StartsWith(slash, "a_b-")) << slash;
  // With no id at all, by a digest of the capture: two captures, two files; one capture, one.
  hero_.mutable_session()->clear_id();
  const std::string first = Spool(hero_);
  EXPECT_EQ(Spool(hero_), first);
  hero_.mutable_frames(0)->set_name("other");
  EXPECT_NE(Spool(hero_), first);
  EXPECT_TRUE(absl::StartsWith(first, "session-")) << first;
}

}  // namespace
}  // namespace cl

// ReadFile and WriteFile: whole files, and errors that name the path.
#include "common/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = (std::filesystem::temp_directory_path() / "file_io_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      names.push_back(e.path().filename());
    return names;
  }

  std::filesystem::path dir_;
};

TEST_F(FileIoTest, WritesAndReadsBackEveryByte) {
  std::string bytes(300'000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131);
  ASSERT_TRUE(WriteFile(Path("f"), bytes).ok());
  absl::StatusOr<std::string> read = ReadFile(Path("f"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, bytes);
  EXPECT_THAT(Entries(), ::testing::ElementsAre("f"));  // no temporary left behind
}

TEST_F(FileIoTest, AStreamedWriteThatFailsLeavesNoFile) {
  ASSERT_TRUE(WriteFile(Path("f"), "old").ok());
  const absl::Status failed = WriteFileWith(Path("f"), [](int fd) {
    EXPECT_EQ(::write(fd, "half", 4), 4);
    return absl::DataLossError("the writer gave up");
  });
  EXPECT_EQ(failed, absl::DataLossError("the writer gave up"));
  EXPECT_EQ(*ReadFile(Path("f")), "old");  // untouched, and no temporary left behind
  EXPECT_THAT(Entries(), ::testing::ElementsAre("f"));
  ASSERT_TRUE(WriteFileWith(Path("f"), [](int fd) {
                EXPECT_EQ(::write(fd, "new", 3), 3);
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(*ReadFile(Path("f")), "new");
}

TEST_F(FileIoTest, AMissingFileIsNotFound) {
  absl::StatusOr<std::string> read = ReadFile(Path("nope"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), HasSubstr(Path("nope")));
}

TEST_F(FileIoTest, ADirectoryIsRefusedNotReadAsEmpty) {
  absl::StatusOr<std::string> read = ReadFile(dir_.string());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read.status().message(), HasSubstr("is a directory"));
}

TEST_F(FileIoTest, AFileOfNoBytesReadsAsEmpty) {
  ASSERT_TRUE(WriteFile(Path("empty"), "").ok());
  absl::StatusOr<std::string> read = ReadFile(Path("empty"));
  ASSERT_TRUE(read.ok());
  EXPECT_THAT(*read, IsEmpty());
}

TEST_F(FileIoTest, AWriteIntoAMissingDirectoryNamesThePath) {
  absl::Status s = WriteFile(Path("no/such/dir/f"), "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(Path("no/such/dir/f")));
  EXPECT_THAT(Entries(), IsEmpty());
}

TEST_F(FileIoTest, TheNewFileHonoursTheUmask) {
  ASSERT_TRUE(WriteFile(Path("f"), "x").ok());
  struct stat st;
  ASSERT_EQ(::stat(Path("f").c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

// Writers of one path at once each leave a whole file: the last rename wins, never a mix.
TEST_F(FileIoTest, ConcurrentWritersOfOnePathNeverMix) {
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w) {
    writers.emplace_back([&, w] {
      const std::string mine(200'000, static_cast<char>('a' + w));
      for (int i = 0; i < 20; ++i) EXPECT_TRUE(WriteFile(Path("shared"), mine).ok());
    });
  }
  for (std::thread& t : writers) t.join();
  absl::StatusOr<std::string> read = ReadFile(Path("shared"));
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->size(), 200'000u);
  EXPECT_EQ(read->find_first_not_of((*read)[0]), std::string::npos);
  EXPECT_THAT(Entries(), ::testing::ElementsAre("shared"));
}

// `--json /dev/null` or `--html /dev/stdout` writes through the device or the link; renaming a
// temporary over them replaced /dev/null itself with a plain file (as root), breaking every other
// program's redirections.
// (A FIFO stands in for the device here, so that a regression cannot break the machine's.)
TEST_F(FileIoTest, DevicesAndSymlinksAreWrittenThroughNotReplaced) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  // The reading end opens first (non-blocking, so without a writer yet); what WriteFile writes
  // waits in the pipe. Had it renamed a file over the FIFO, this end reads nothing.
  const int reader = ::open(Path("fifo").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_TRUE(WriteFile(Path("fifo"), "through the pipe").ok());
  char buffer[64];
  const ssize_t n = ::read(reader, buffer, sizeof buffer);
  ::close(reader);
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0), "through the pipe");
  struct stat st;
  ASSERT_EQ(::lstat(Path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a file";

  ASSERT_TRUE(WriteFile(Path("target"), "old").ok());
  std::filesystem::create_symlink(Path("target"), Path("link"));
  ASSERT_TRUE(WriteFile(Path("link"), "new").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(Path("link")));
  EXPECT_EQ(ReadFile(Path("target")).value_or(""), "new");
}

}  // namespace
}  // namespace cl

// Md5Batch against OpenSSL's MD5 (common/digest), on both builds of the lanes: every padding
// boundary, one message alone, batches far wider than the eight lanes with lengths that finish
// lanes at different blocks, and the empty batch.
#include "common/md5_batch.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "common/digest.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

std::string Hex(const Md5Digest& d) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

class Md5BatchTest : public ::testing::TestWithParam<Md5Kernel> {
 protected:
  // Each message's digest from the batch equals OpenSSL's.
  void ExpectMatchesOpenSsl(const std::vector<std::string>& messages) {
    const std::vector<absl::string_view> views(messages.begin(), messages.end());
    std::vector<Md5Digest> digests(messages.size());
    Md5Batch(views, absl::MakeSpan(digests), GetParam());
    for (size_t i = 0; i < messages.size(); ++i) {
      ASSERT_EQ(Hex(digests[i]), Md5Hex(messages[i]))
          << "message " << i << " of " << messages.size() << ", " << messages[i].size() << " bytes";
    }
  }
};

std::string Bytes(size_t n, std::mt19937& rng) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST_P(Md5BatchTest, KnownAnswers) {
  // RFC 1321's test suite.
  const std::vector<std::string> m = {
      "",
      "a",
      "abc",
      "message digest",
      "abcdefghijklmnopqrstuvwxyz",
      "12345678901234567890123456789012345678901234567890123456789012345678901234567890"};
  std::vector<Md5Digest> d(m.size());
  const std::vector<absl::string_view> views(m.begin(), m.end());
  Md5Batch(views, absl::MakeSpan(d), GetParam());
  EXPECT_EQ(Hex(d[0]), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Hex(d[1]), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(Hex(d[2]), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Hex(d[3]), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(Hex(d[4]), "c3fcd3d76192e4007dfb496cca67e13b");
  EXPECT_EQ(Hex(d[5]), "57edf4a22be3c955ac49da2e2107b67a");
}

TEST_P(Md5BatchTest, EveryLengthAroundThePaddingBoundaries) {
  std::mt19937 rng(1);
  std::vector<std::string> m;
  for (size_t n = 0; n <= 260; ++n) m.push_back(Bytes(n, rng));
  ExpectMatchesOpenSsl(m);
}

TEST_P(Md5BatchTest, OneMessageAlone) {
  std::mt19937 rng(2);
  for (size_t n : {0, 55, 56, 64, 1000, 100000}) ExpectMatchesOpenSsl({Bytes(n, rng)});
}

TEST_P(Md5BatchTest, MixedLengthsRefillTheLanes) {
  std::mt19937 rng(3);
  for (int batch = 0; batch < 20; ++batch) {
    std::vector<std::string> m;
    const int count = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < count; ++i) {
      // Mostly short, sometimes long: lanes finish at very different blocks.
      const size_t n = rng() % 4 == 0 ? rng() % 300000 : rng() % 2000;
      m.push_back(Bytes(n, rng));
    }
    ExpectMatchesOpenSsl(m);
  }
}

TEST_P(Md5BatchTest, TheSameBytesTwice) {
  const std::string s(5000, 'x');
  ExpectMatchesOpenSsl({s, s, s.substr(1), s, ""});
}

// An empty batch reads no input and writes no digest: the output it is given stays as it was
// (and under ASan, nothing is read past either span).
TEST_P(Md5BatchTest, EmptyBatch) {
  Md5Digest marked;
  marked.fill(0xAB);
  std::array<Md5Digest, 1> untouched{marked};
  Md5Batch({}, absl::MakeSpan(untouched.data(), 0), GetParam());
  EXPECT_EQ(untouched[0], marked);
}

INSTANTIATE_TEST_SUITE_P(Kernels, Md5BatchTest,
                         ::testing::Values(Md5Kernel::kBest, Md5Kernel::kGeneric),
                         [](const ::testing::TestParamInfo<Md5Kernel>& info) {
                           return info.param == Md5Kernel::kBest ? std::string("Best")
                                                                 : std::string("Generic");
                         });

}  // namespace
}  // namespace cl

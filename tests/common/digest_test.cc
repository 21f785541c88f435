// common/digest: known answers (RFC 1321, FIPS 180-2), and an md5 fed in pieces equals the
// one-shot.
#include "common/digest.h"

#include <algorithm>
#include <random>
#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace cl {
namespace {

TEST(DigestTest, KnownAnswers) {
  EXPECT_EQ(Md5Hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Md5Hex("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(DigestTest, StreamInPiecesEqualsOneShot) {
  std::mt19937 rng(3);
  Md5Stream stream;
  for (int round = 0; round < 50; ++round) {
    std::string message(rng() % 5000, '\0');
    for (char& c : message) c = static_cast<char>(rng());
    stream.Reset();
    for (size_t at = 0; at < message.size();) {
      const size_t piece = std::min<size_t>(rng() % 300, message.size() - at);
      stream.Update(absl::string_view(message).substr(at, piece));
      at += piece;
    }
    EXPECT_EQ(stream.HexDigest(), Md5Hex(message)) << message.size() << " bytes";
  }
}

}  // namespace
}  // namespace cl

#include "common/stream_hash.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace cl {
namespace {

uint64_t HashInPieces(const std::string& bytes, std::mt19937* rng, size_t max_piece) {
  StreamHash h;
  std::uniform_int_distribution<size_t> piece(0, max_piece);
  for (size_t at = 0; at < bytes.size();) {
    const size_t n = std::min(piece(*rng), bytes.size() - at);
    h.Add(absl::string_view(bytes).substr(at, n));
    at += n;
  }
  return h.Finish();
}

TEST(StreamHashTest, HowTheBytesAreCutDoesNotMatter) {
  std::mt19937 rng(7);
  std::string bytes(50'000, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  StreamHash whole;
  whole.Add(bytes);
  for (size_t max_piece : {1, 3, 4095, 4096, 4097, 10'000}) {
    EXPECT_EQ(HashInPieces(bytes, &rng, max_piece), whole.Finish())
        << "pieces of up to " << max_piece;
  }
}

TEST(StreamHashTest, DifferentBytesHashApart) {
  std::string bytes(20'000, 'x');
  StreamHash a;
  a.Add(bytes);
  for (size_t at : {size_t{0}, size_t{4095}, size_t{4096}, size_t{19'999}}) {
    std::string other = bytes;
    other[at] = 'y';
    StreamHash b;
    b.Add(other);
    EXPECT_NE(a.Finish(), b.Finish()) << "a byte changed at " << at;
  }
  // A stream and its prefix: the carried tail differs in length only.
  StreamHash shorter;
  shorter.Add(absl::string_view(bytes).substr(0, bytes.size() - 1));
  EXPECT_NE(a.Finish(), shorter.Finish());
  StreamHash empty, zeros;
  zeros.Add(std::string(4096, '\0'));
  EXPECT_NE(empty.Finish(), zeros.Finish());
}

}  // namespace
}  // namespace cl

// A 64-bit hash of a byte stream that does not depend on how the stream was cut into pieces: the
// same bytes in one piece or in a thousand hash alike. For keys within one process (absl's hash is
// seeded per process), not for anything stored or sent.
#ifndef COMMON_STREAM_HASH_H_
#define COMMON_STREAM_HASH_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace cl {

class StreamHash {
 public:
  void Add(absl::string_view bytes);
  uint64_t Finish() const;  // of everything added so far; more may be added after

 private:
  static constexpr size_t kBlock = 4096;  // hashed whole; a piece's tail waits in carry_
  void HashBlock(absl::string_view block);

  uint64_t state_ = 0;
  uint64_t length_ = 0;
  std::array<char, kBlock> carry_;
  size_t carried_ = 0;
};

}  // namespace cl

#endif  // COMMON_STREAM_HASH_H_

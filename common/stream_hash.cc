#include "common/stream_hash.h"

#include <algorithm>
#include <cstring>

#include "absl/hash/hash.h"

namespace cl {

void StreamHash::HashBlock(absl::string_view block) { state_ = absl::HashOf(state_, block); }

void StreamHash::Add(absl::string_view bytes) {
  length_ += bytes.size();
  if (carried_ > 0) {
    const size_t take = std::min(kBlock - carried_, bytes.size());
    std::memcpy(carry_.data() + carried_, bytes.data(), take);
    carried_ += take;
    bytes.remove_prefix(take);
    if (carried_ < kBlock) return;
    HashBlock(absl::string_view(carry_.data(), kBlock));
    carried_ = 0;
  }
  for (; bytes.size() >= kBlock; bytes.remove_prefix(kBlock)) HashBlock(bytes.substr(0, kBlock));
  std::memcpy(carry_.data(), bytes.data(), bytes.size());
  carried_ = bytes.size();
}

uint64_t StreamHash::Finish() const {
  return absl::HashOf(state_, absl::string_view(carry_.data(), carried_), length_);
}

}  // namespace cl

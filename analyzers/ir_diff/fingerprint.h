// Deterministic 64-bit fingerprints for the graph analyses.
//
// absl::Hash is seeded per process, so anything ordered or tie-broken by it could change from run
// to run; a report must not. These fingerprints are plain functions of their input: a
// multiply-xorshift over 8-byte words, and a splitmix64-style finalizer to combine values. They
// identify, they do not protect against adversarial collisions: a collision can only make two nodes
// look alike to the matcher.
#ifndef ANALYZERS_IR_DIFF_FINGERPRINT_H_
#define ANALYZERS_IR_DIFF_FINGERPRINT_H_

#include <cstdint>
#include <cstring>

#include "absl/strings/string_view.h"

namespace cl {

// Scrambles the bits of `x` so that nearby inputs give unrelated outputs.
inline uint64_t MixBits(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// An order-dependent combination: Combine(Combine(s, a), b) differs from Combine(Combine(s, b), a).
inline uint64_t Combine(uint64_t seed, uint64_t value) { return MixBits(seed ^ MixBits(value)); }

// Eight bytes at a time (a graph has a few strings per node, and a large one 100k nodes); the
// length goes in first, so that a string and its zero-padded extension differ.
inline uint64_t FingerprintString(absl::string_view s) {
  uint64_t h = MixBits(s.size());
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    h = (h ^ word) * 0x9ddfea08eb382d69ULL;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  return MixBits(h ^ tail);
}

}  // namespace cl

#endif  // ANALYZERS_IR_DIFF_FINGERPRINT_H_

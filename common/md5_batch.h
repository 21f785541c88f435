// MD5 of many messages at once, eight at a time in SIMD lanes.
//
// One MD5 is a single chain of dependent 32-bit steps: OpenSSL's runs no faster however wide the
// core is. A TORCH_TRACE log carries an md5 for every payload, and checking them one at a time was
// a large part of an import (bench/README.md has the figures). Independent messages can share the
// core instead: each 32-bit lane of an 8 x 32-bit vector runs the same step for a different
// message, and a lane that finishes takes the next message, so messages of any mix of lengths keep
// the lanes busy until the last few.
// AVX2 where the CPU has it (checked once at run time), the same code on SSE2 vectors otherwise.
#ifndef COMMON_MD5_BATCH_H_
#define COMMON_MD5_BATCH_H_

#include <array>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace cl {

using Md5Digest = std::array<uint8_t, 16>;

enum class Md5Kernel {
  kBest,     // AVX2 when the CPU has it, else SSE2
  kGeneric,  // the SSE2 build of the same lanes, whatever the CPU (for tests)
};

// digests[i] = MD5(messages[i]); the two spans have the same size.
void Md5Batch(absl::Span<const absl::string_view> messages, absl::Span<Md5Digest> digests,
              Md5Kernel kernel = Md5Kernel::kBest);

}  // namespace cl

#endif  // COMMON_MD5_BATCH_H_

#include "common/md5_batch.h"

#include <cstddef>
#include <cstring>
#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace cl {
namespace {

// RFC 1321: the per-step additive constants, rotations and message word order.
constexpr uint32_t kSine[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
constexpr int kRotate[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};
constexpr uint32_t kInit[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};

constexpr int Word(int step) {
  switch (step / 16) {
    case 0:
      return step;
    case 1:
      return (5 * step + 1) % 16;
    case 2:
      return (3 * step + 5) % 16;
    default:
      return (7 * step) % 16;
  }
}

// Eight 32-bit lanes. GCC and clang lower the operators to AVX2 or, without it, to pairs of SSE2
// instructions; the same templates below also run on a plain uint32_t for one message alone.
using U32x8 = uint32_t __attribute__((vector_size(32)));
constexpr int kLanes = 8;

template <typename T>
struct State {
  T a, b, c, d;
};

template <int kStep, typename T>
[[gnu::always_inline]] inline void Step(State<T>& s, const T* x) {
  constexpr int kRound = kStep / 16;
  T f;
  if constexpr (kRound == 0) {
    f = s.d ^ (s.b & (s.c ^ s.d));
  } else if constexpr (kRound == 1) {
    f = s.c ^ (s.d & (s.b ^ s.c));
  } else if constexpr (kRound == 2) {
    f = s.b ^ s.c ^ s.d;
  } else {
    f = s.c ^ (s.b | ~s.d);
  }
  constexpr int r = kRotate[kRound][kStep % 4];
  const T t = s.a + f + kSine[kStep] + x[Word(kStep)];
  s.a = s.d;
  s.d = s.c;
  s.c = s.b;
  s.b = s.b + ((t << r) | (t >> (32 - r)));
}

template <typename T, size_t... kStep>
[[gnu::always_inline]] inline void Steps(State<T>& s, const T* x, std::index_sequence<kStep...>) {
  (Step<kStep>(s, x), ...);
}

// One 64-byte block, x its sixteen words.
template <typename T>
[[gnu::always_inline]] inline void Compress(State<T>& s, const T* x) {
  const State<T> in = s;
  Steps(s, x, std::make_index_sequence<64>());
  s.a += in.a;
  s.b += in.b;
  s.c += in.c;
  s.d += in.d;
}

uint32_t LoadLittle(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // x86 and arm64 are little-endian, as MD5's words are
  return v;
}

// One message in a lane: its whole blocks straight from the caller's bytes, then the one or two
// padded blocks (the rest, 0x80, zeros, the bit length) from `tail`.
struct Lane {
  size_t message = 0;
  bool busy = false;
  const char* data = nullptr;
  size_t whole = 0;  // blocks read from data
  size_t total = 0;  // whole + tail blocks
  size_t next = 0;
  char tail[128];

  void Start(size_t index, absl::string_view m) {
    message = index;
    busy = true;
    data = m.data();
    whole = m.size() / 64;
    next = 0;
    const size_t rest = m.size() % 64;
    const size_t tail_blocks = rest + 9 <= 64 ? 1 : 2;
    total = whole + tail_blocks;
    std::memset(tail, 0, sizeof(tail));
    if (rest > 0) std::memcpy(tail, m.data() + whole * 64, rest);
    tail[rest] = static_cast<char>(0x80);
    const uint64_t bits = static_cast<uint64_t>(m.size()) * 8;
    std::memcpy(tail + tail_blocks * 64 - 8, &bits, 8);
  }
  const char* Block() const { return next < whole ? data + next * 64 : tail + (next - whole) * 64; }
};

void WriteDigest(uint32_t a, uint32_t b, uint32_t c, uint32_t d, Md5Digest& out) {
  const uint32_t words[4] = {a, b, c, d};
  std::memcpy(out.data(), words, 16);
}

// The rest of a lane's message on scalar words: cheaper than a vector step for one lane.
void FinishAlone(Lane& lane, State<uint32_t> s, Md5Digest& out) {
  uint32_t x[16];
  for (; lane.next < lane.total; ++lane.next) {
    const char* block = lane.Block();
    for (int w = 0; w < 16; ++w) x[w] = LoadLittle(block + 4 * w);
    Compress(s, x);
  }
  WriteDigest(s.a, s.b, s.c, s.d, out);
  lane.busy = false;
}

[[gnu::always_inline]] inline void RunLanes(absl::Span<const absl::string_view> messages,
                                            absl::Span<Md5Digest> digests) {
  static constexpr char kIdle[64] = {};
  Lane lanes[kLanes];
  State<U32x8> s{};
  alignas(32) uint32_t words[16][kLanes];
  size_t next_message = 0;
  for (;;) {
    int busy = 0;
    for (int l = 0; l < kLanes; ++l) {
      if (!lanes[l].busy && next_message < messages.size()) {
        lanes[l].Start(next_message, messages[next_message]);
        ++next_message;
        s.a[l] = kInit[0];
        s.b[l] = kInit[1];
        s.c[l] = kInit[2];
        s.d[l] = kInit[3];
      }
      busy += lanes[l].busy;
    }
    if (busy == 0) return;
    if (busy == 1 && next_message == messages.size()) {
      for (int l = 0; l < kLanes; ++l) {
        if (lanes[l].busy)
          FinishAlone(lanes[l], {s.a[l], s.b[l], s.c[l], s.d[l]}, digests[lanes[l].message]);
      }
      return;
    }
    for (int l = 0; l < kLanes; ++l) {
      const char* block = lanes[l].busy ? lanes[l].Block() : kIdle;
      for (int w = 0; w < 16; ++w) words[w][l] = LoadLittle(block + 4 * w);
    }
    U32x8 x[16];
    for (int w = 0; w < 16; ++w) std::memcpy(&x[w], words[w], sizeof(U32x8));
    Compress(s, x);
    for (int l = 0; l < kLanes; ++l) {
      Lane& lane = lanes[l];
      if (lane.busy && ++lane.next == lane.total) {
        WriteDigest(s.a[l], s.b[l], s.c[l], s.d[l], digests[lane.message]);
        lane.busy = false;
      }
    }
  }
}

void RunGeneric(absl::Span<const absl::string_view> messages, absl::Span<Md5Digest> digests) {
  RunLanes(messages, digests);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void RunAvx2(absl::Span<const absl::string_view> messages,
                                             absl::Span<Md5Digest> digests) {
  RunLanes(messages, digests);
}

// CPUID read here, on the first batch, rather than by __builtin_cpu_supports: that links
// libgcc's CPU model, whose static initializer runs a dozen CPUIDs in every cl-client start, and
// under a hypervisor each one is a VM exit (about 8 us on the machine bench/README.md measured).
bool HasAvx2() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
    constexpr unsigned kOsxsave = 1u << 27, kAvx = 1u << 28;
    if ((ecx & kOsxsave) == 0 || (ecx & kAvx) == 0) return false;
    // The OS saves the SSE and AVX registers (XCR0 bits 1 and 2).
    unsigned xcr0_low = 0, xcr0_high = 0;
    __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
    if ((xcr0_low & 0x6u) != 0x6u) return false;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
    return (ebx & (1u << 5)) != 0;  // AVX2
  }();
  return has;
}
#endif

}  // namespace

void Md5Batch(absl::Span<const absl::string_view> messages, absl::Span<Md5Digest> digests,
              Md5Kernel kernel) {
#if defined(__x86_64__)
  if (kernel == Md5Kernel::kBest && HasAvx2()) {
    RunAvx2(messages, digests);
    return;
  }
#endif
  RunGeneric(messages, digests);
}

}  // namespace cl

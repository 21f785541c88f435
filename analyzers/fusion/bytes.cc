#include "analyzers/fusion/bytes.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cl {
namespace {

// The compulsory traffic of one GEMM [m,k]x[k,n]: both operands and the output, in elements.
uint64_t Gemm(uint64_t m, uint64_t n, uint64_t k) { return m * k + k * n + m * n; }

// "84 KiB", "1.5 KiB", "512 B".
std::string Size(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  const double kib = bytes / 1024.0;
  if (bytes < 1024 * 1024) {
    return bytes % 1024 == 0 ? absl::StrCat(bytes / 1024, " KiB")
                             : absl::StrFormat("%.1f KiB", kib);
  }
  return absl::StrFormat("%.1f MiB", kib / 1024);
}

// The kernels of one variant, each with its traffic in elements (or bytes, for fixed-size
// parts), summed and spelled out.
class Ledger {
 public:
  explicit Ledger(uint64_t s) : s_(s) {}
  Ledger& Elements(const char* kernel, uint64_t elements) { return Bytes(kernel, elements * s_); }
  Ledger& Bytes(const char* kernel, uint64_t bytes) {
    parts_.emplace_back(kernel, bytes);
    total_ += bytes;
    return *this;
  }
  uint64_t total() const { return total_; }
  std::string Text() const {
    std::string out;
    for (const auto& [kernel, bytes] : parts_) {
      absl::StrAppend(&out, out.empty() ? "" : " + ", kernel, " ", Size(bytes));
    }
    return absl::StrCat(out, " = ", Size(total_));
  }

 private:
  uint64_t s_;
  uint64_t total_ = 0;
  std::vector<std::pair<const char*, uint64_t>> parts_;
};

HbmBytes Result(const Ledger& before, const Ledger& after, uint64_t s) {
  return {before.total(), after.total(),
          absl::StrCat("unfused: ", before.Text(), "; fused: ", after.Text(), " (", s,
                       " B per element)")};
}

}  // namespace

HbmBytes GemmResidRmsNormGemmBytes(uint64_t m, uint64_t n, uint64_t k0, uint64_t k1, uint64_t s) {
  const uint64_t mn = m * n;
  const uint64_t gemm2 = mn + n * k1 + m * k1;
  Ledger before(s), after(s);
  before.Elements("GEMM1", Gemm(m, n, k0))
      .Elements("add", 3 * mn)
      .Elements("norm", 3 * mn)
      .Elements("GEMM2", gemm2);
  // GEMM1 reads x, W1 and resid and writes h once; GEMM2 reads h and scales its rows by 1/rms.
  after.Elements("GEMM1 + resid epilogue", m * k0 + n * k0 + 2 * mn)
      .Elements("GEMM2 + 1/rms epilogue", gemm2);
  return Result(before, after, s);
}

HbmBytes GemmBiasActivationBytes(uint64_t m, uint64_t n, uint64_t k, bool bias, uint64_t s) {
  const uint64_t b = bias ? n : 0;
  Ledger before(s), after(s);
  before.Elements("GEMM", Gemm(m, n, k)).Elements("bias + activation", 2 * m * n + b);
  after.Elements("GEMM + epilogue", Gemm(m, n, k) + b);
  return Result(before, after, s);
}

HbmBytes SwiGluBytes(uint64_t m, uint64_t f, uint64_t k, uint64_t k1, bool separate, uint64_t s) {
  const uint64_t down = m * f + f * k1 + m * k1;
  Ledger before(s), after(s);
  before
      .Elements(separate ? "gate and up GEMMs" : "gate/up GEMM",
                (separate ? 2 * m * k : m * k) + k * 2 * f + 2 * m * f)
      .Elements("silu·mul", 3 * m * f)
      .Elements("down GEMM", down);
  after.Elements("gate/up GEMM + SwiGLU epilogue", m * k + k * 2 * f + m * f)
      .Elements("down GEMM", down);
  return Result(before, after, s);
}

HbmBytes LayerNormGemmBytes(uint64_t m, uint64_t d, uint64_t k1, uint64_t s) {
  const uint64_t gemm = d * k1 + m * k1;
  Ledger before(s), after(s);
  before.Elements("LayerNorm", 2 * m * d).Elements("GEMM", m * d + gemm);
  after.Elements("GEMM + mean/scale epilogue", m * d + gemm);
  return Result(before, after, s);
}

HbmBytes RopeGemmBytes(uint64_t m, uint64_t n, uint64_t k, uint64_t rotated, bool qk_norm,
                       uint64_t s) {
  Ledger before(s), after(s);
  before.Elements("QKV GEMM", Gemm(m, n, k));
  if (qk_norm) before.Elements("QK-norm", 2 * rotated);
  before.Elements("RoPE", 2 * rotated);
  after.Elements(qk_norm ? "QKV GEMM + QK-norm/RoPE epilogue" : "QKV GEMM + RoPE epilogue",
                 Gemm(m, n, k));
  return Result(before, after, s);
}

HbmBytes LmHeadCrossEntropyBytes(uint64_t m, uint64_t v, uint64_t k, uint64_t s, uint64_t s_logit) {
  Ledger before(s), after(s);
  before.Elements("LM head GEMM", m * k + k * v)
      .Bytes("logits written", m * v * s_logit)
      .Bytes("cross-entropy", m * v * s_logit);
  after.Elements("fused linear-cross-entropy", m * k + k * v).Bytes("loss", 4 * m);
  return Result(before, after, s);
}

HbmBytes AttentionBytes(uint64_t bh, uint64_t sq, uint64_t sk, uint64_t d, uint64_t dv,
                        uint64_t s) {
  const uint64_t scores = bh * sq * sk;
  Ledger before(s), after(s);
  before.Elements("Q·Kᵀ", bh * (sq * d + sk * d) + scores)
      .Elements("softmax", 2 * scores)
      .Elements("P·V", scores + bh * (sk * dv + sq * dv));
  after.Elements("SDPA", bh * (sq * d + sk * d + sk * dv + sq * dv))
      .Bytes("logsumexp", 4 * bh * sq);
  return Result(before, after, s);
}

}  // namespace cl

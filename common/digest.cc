#include "common/digest.h"

// The low-level functions are deprecated in OpenSSL 3 (digest.h says why they are used).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/md5.h>
#include <openssl/sha.h>

#include "absl/strings/escaping.h"

namespace cl {
namespace {

std::string Hex(const unsigned char* digest, size_t len) {
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), len));
}

// One message through a low-level digest's init, update and final.
template <typename Context, size_t kLength>
std::string OneShot(absl::string_view data, int (*init)(Context*),
                    int (*update)(Context*, const void*, size_t),
                    int (*finish)(unsigned char*, Context*)) {
  unsigned char digest[kLength];
  Context ctx;
  init(&ctx);
  update(&ctx, data.data(), data.size());
  finish(digest, &ctx);
  return Hex(digest, kLength);
}

}  // namespace

std::string Md5Hex(absl::string_view data) {
  return OneShot<MD5_CTX, MD5_DIGEST_LENGTH>(data, MD5_Init, MD5_Update, MD5_Final);
}

std::string Sha256Hex(absl::string_view data) {
  return OneShot<SHA256_CTX, SHA256_DIGEST_LENGTH>(data, SHA256_Init, SHA256_Update, SHA256_Final);
}

struct Md5Stream::State {
  MD5_CTX ctx;
};

Md5Stream::Md5Stream() : state_(std::make_unique<State>()) { Reset(); }
Md5Stream::~Md5Stream() = default;

void Md5Stream::Reset() { MD5_Init(&state_->ctx); }

void Md5Stream::Update(absl::string_view data) {
  MD5_Update(&state_->ctx, data.data(), data.size());
}

std::string Md5Stream::HexDigest() {
  unsigned char digest[MD5_DIGEST_LENGTH];
  MD5_Final(digest, &state_->ctx);
  return Hex(digest, sizeof(digest));
}

}  // namespace cl

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

}  // namespace

std::string Md5Hex(absl::string_view data) {
  unsigned char digest[MD5_DIGEST_LENGTH];
  MD5_CTX ctx;
  MD5_Init(&ctx);
  MD5_Update(&ctx, data.data(), data.size());
  MD5_Final(digest, &ctx);
  return Hex(digest, sizeof(digest));
}

std::string Sha256Hex(absl::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data.data(), data.size());
  SHA256_Final(digest, &ctx);
  return Hex(digest, sizeof(digest));
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

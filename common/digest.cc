#include "common/digest.h"

#include <openssl/evp.h>

#include "absl/strings/escaping.h"

namespace cl {
namespace {

std::string HexDigest(absl::string_view data, const EVP_MD* md) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, md, nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), len));
}

}  // namespace

std::string Md5Hex(absl::string_view data) { return HexDigest(data, EVP_md5()); }
std::string Sha256Hex(absl::string_view data) { return HexDigest(data, EVP_sha256()); }

}  // namespace cl

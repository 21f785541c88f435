// One-shot message digests as lowercase hex (OpenSSL EVP; OpenSSL 3 deprecates the MD5_*/SHA*_
// functions).
#ifndef COMMON_DIGEST_H_
#define COMMON_DIGEST_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cl {

std::string Md5Hex(absl::string_view data);
std::string Sha256Hex(absl::string_view data);

}  // namespace cl

#endif  // COMMON_DIGEST_H_

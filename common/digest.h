// Message digests as lowercase hex, with OpenSSL's low-level digest functions rather than EVP: in
// OpenSSL 3 the first EVP digest of a process loads the configuration file and registers every
// cipher's and digest's name, an eighth of a 1 KB log's whole analysis (bench/README.md, "Against
// tlparse"). These compute the same bytes and touch nothing global.
// OpenSSL 3 deprecates them, and ships them.
#ifndef COMMON_DIGEST_H_
#define COMMON_DIGEST_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"

namespace cl {

std::string Md5Hex(absl::string_view data);
std::string Sha256Hex(absl::string_view data);

// An md5 fed piece by piece (a payload too large to hold whole).
class Md5Stream {
 public:
  Md5Stream();
  ~Md5Stream();
  Md5Stream(const Md5Stream&) = delete;
  Md5Stream& operator=(const Md5Stream&) = delete;

  void Reset();  // an empty message
  void Update(absl::string_view data);
  std::string HexDigest();  // of what was fed since Reset; Reset before feeding another

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cl

#endif  // COMMON_DIGEST_H_

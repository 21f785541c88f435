// cl-server's transport security: TLS (optionally requiring client certificates, mTLS) and bearer
// tokens.
//
// Without a certificate the server listens in plaintext (loopback, or behind a mesh that brings
// its own TLS). The token, when configured, is required on every CompileLens call as
// `authorization: Bearer <token>` and compared in constant time; gRPC health (probes) and the
// metrics endpoint (its own port) are exempt. Every file is read at start-up, and a missing or
// unreadable one is an error that names the flag and the path.
#ifndef SERVICE_SERVER_SECURITY_H_
#define SERVICE_SERVER_SECURITY_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace cl {

struct ServerSecurity {
  std::string cert_file;       // PEM certificate chain: TLS when set (with key_file)
  std::string key_file;        // PEM private key
  std::string client_ca_file;  // PEM roots: require and verify client certificates (mTLS)
  std::string token_file;      // a bearer token every Analyze call must carry
};

// Plaintext, TLS or mTLS credentials for the listening port.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerSecurity& security);

// The bearer-token check. An empty token (no --token_file) lets every call through.
class TokenAuth {
 public:
  static absl::StatusOr<TokenAuth> FromFile(const std::string& path);  // "" → no token required
  TokenAuth() = default;

  // OK, or UNAUTHENTICATED saying what was wrong (never echoing what the caller sent).
  absl::Status Check(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) const;
  bool required() const { return !token_.empty(); }

 private:
  explicit TokenAuth(std::string token) : token_(std::move(token)) {}
  std::string token_;
};

}  // namespace cl

#endif  // SERVICE_SERVER_SECURITY_H_

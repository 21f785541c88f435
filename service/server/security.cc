#include "service/server/security.h"

#include <openssl/crypto.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"

namespace cl {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok())
    return absl::FailedPreconditionError(absl::StrCat("--", flag, ": ", text.status().message()));
  if (!absl::StrContains(*text, "-----BEGIN ")) {
    return absl::FailedPreconditionError(absl::StrCat("--", flag, ": ", path, " is not PEM"));
  }
  return text;
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerSecurity& security) {
  if (security.cert_file.empty() && security.key_file.empty()) {
    if (!security.client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca needs --tls_cert and --tls_key (mTLS is TLS first)");
    }
    return grpc::InsecureServerCredentials();
  }
  if (security.cert_file.empty() || security.key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  grpc::SslServerCredentialsOptions ssl(
      security.client_ca_file.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                      : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  absl::StatusOr<std::string> cert = ReadPem(security.cert_file, "tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(security.key_file, "tls_key");
  if (!key.ok()) return key.status();
  pair.cert_chain = *std::move(cert);
  pair.private_key = *std::move(key);
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!security.client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(security.client_ca_file, "tls_client_ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca);
  }
  return grpc::SslServerCredentials(ssl);
}

absl::StatusOr<TokenAuth> TokenAuth::FromFile(const std::string& path) {
  if (path.empty()) return TokenAuth();
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok())
    return absl::FailedPreconditionError(absl::StrCat("--token_file: ", text.status().message()));
  std::string token(absl::StripAsciiWhitespace(*text));
  if (token.empty())
    return absl::FailedPreconditionError(absl::StrCat("--token_file: ", path, " is empty"));
  return TokenAuth(std::move(token));
}

absl::Status TokenAuth::Check(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) const {
  if (token_.empty()) return absl::OkStatus();
  auto it = metadata.find("authorization");
  if (it == metadata.end())
    return absl::UnauthenticatedError("this server needs `authorization: Bearer <token>`");
  const absl::string_view value(it->second.data(), it->second.size());
  constexpr absl::string_view kBearer = "Bearer ";
  if (!absl::StartsWith(value, kBearer))
    return absl::UnauthenticatedError("the authorization is not a bearer token");
  const absl::string_view given = value.substr(kBearer.size());
  // Constant time in the token's content; only its length can show, which reveals nothing useful.
  if (given.size() != token_.size() ||
      CRYPTO_memcmp(given.data(), token_.data(), token_.size()) != 0) {
    return absl::UnauthenticatedError("wrong bearer token");
  }
  return absl::OkStatus();
}

}  // namespace cl

// cl-server's TLS, mTLS and bearer tokens, in-process on loopback, with certificates made at test
// time by Debian's openssl: the right credentials get a report, every wrong one is refused (and
// says why), gRPC health needs no token, and unreadable certificates stop the start-up with an
// error naming the flag and the file.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/analyze_client.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/server/server.h"
#include "tests/service/metrics_reader.h"
#include "tests/testing/captures.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/subprocess.h"

namespace cl {
namespace {

using ::cl::testing::IsOk;
using ::cl::testing::RunCommand;
using ::testing::HasSubstr;

std::string Dir() { return ::testing::TempDir() + "/security"; }
std::string File(const std::string& name) { return absl::StrCat(Dir(), "/", name); }

void Openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  const testing::RunResult r = RunCommand(argv);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
}

// A CA and a certificate it signs for `name` (localhost and 127.0.0.1 as subject alt names).
void MakeCa(const std::string& ca) {
  Openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-days", "1", "-subj", absl::StrCat("/CN=", ca), "-keyout", File(ca + ".key"), "-out",
           File(ca + ".pem")});
}
void MakeCert(const std::string& ca, const std::string& name) {
  Openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
           absl::StrCat("/CN=", name), "-keyout", File(name + ".key"), "-out",
           File(name + ".csr")});
  Openssl({"x509", "-req", "-days", "1", "-in", File(name + ".csr"), "-CA", File(ca + ".pem"),
           "-CAkey", File(ca + ".key"), "-CAcreateserial", "-extfile", File("san.ext"), "-out",
           File(name + ".pem")});
}

class SecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::filesystem::create_directories(Dir());
    ASSERT_TRUE(WriteFile(File("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n").ok());
    MakeCa("ca");
    MakeCa("rogue-ca");
    MakeCert("ca", "server");
    MakeCert("ca", "client");
    MakeCert("rogue-ca", "rogue-client");
    ASSERT_TRUE(WriteFile(File("token"), "s3cret-token\n").ok());
    ASSERT_TRUE(WriteFile(File("wrong-token"), "not-the-token\n").ok());
  }

  void Start(ServerSecurity security) {
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.analysis_threads = 2;
    options.security = std::move(security);
    absl::StatusOr<std::unique_ptr<AnalysisServer>> server = AnalysisServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  RemoteOptions Remote(ChannelSecurity security) const {
    RemoteOptions remote;
    remote.target = absl::StrCat("localhost:", server_->port());
    remote.deadline = absl::Seconds(20);
    remote.security = std::move(security);
    return remote;
  }

  absl::Status Analyze(ChannelSecurity security) const {
    return AnalyzeRemote({testing::LoadHero("head.cls.json"), std::nullopt}, {},
                         Remote(std::move(security)))
        .status();
  }

  std::unique_ptr<AnalysisServer> server_;
};

TEST_F(SecurityTest, TlsServesClientsThatTrustItsCaAndNoOneInPlaintext) {
  Start({File("server.pem"), File("server.key"), "", ""});
  EXPECT_THAT(Analyze({File("ca.pem"), "", "", ""}), IsOk());
  EXPECT_FALSE(Analyze({}).ok());                                  // plaintext against TLS
  EXPECT_FALSE(Analyze({File("rogue-ca.pem"), "", "", ""}).ok());  // a server it cannot verify
}

TEST_F(SecurityTest, MtlsNeedsAClientCertificateFromTheTrustedCa) {
  Start({File("server.pem"), File("server.key"), File("ca.pem"), ""});
  EXPECT_THAT(Analyze({File("ca.pem"), File("client.pem"), File("client.key"), ""}), IsOk());
  EXPECT_FALSE(Analyze({File("ca.pem"), "", "", ""}).ok());
  EXPECT_FALSE(
      Analyze({File("ca.pem"), File("rogue-client.pem"), File("rogue-client.key"), ""}).ok());
}

TEST_F(SecurityTest, TheBearerTokenIsRequiredAndCheckedButHealthIsExempt) {
  Start({"", "", "", File("token")});
  const absl::Status none = Analyze({});
  EXPECT_EQ(none.code(), absl::StatusCode::kUnauthenticated) << none;
  EXPECT_THAT(none.message(), HasSubstr("authorization: Bearer"));
  const absl::Status wrong = Analyze({"", "", "", File("wrong-token")});
  EXPECT_EQ(wrong.code(), absl::StatusCode::kUnauthenticated) << wrong;
  EXPECT_THAT(wrong.message(), ::testing::Not(HasSubstr("not-the-token")));
  EXPECT_THAT(Analyze({"", "", "", File("token")}), IsOk());
  EXPECT_THAT(CheckHealth(Remote({}), ""), IsOk());
  // The refused calls are counted like any other (the interceptor sees the status sent).
  const auto handled = [&](const std::string& code) {
    return testing::MetricsReader(server_->metrics().Collect())
        .Get("grpc_server_handled_total", {{"grpc_type", "client_stream"},
                                           {"grpc_service", "compile_lens.v1.CompileLens"},
                                           {"grpc_method", "Analyze"},
                                           {"grpc_code", code}});
  };
  const absl::Time until =
      absl::Now() + absl::Seconds(5);  // the interceptor records after the status is sent
  while (handled("Unauthenticated") != 2.0 && absl::Now() < until)
    absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(handled("Unauthenticated"), 2.0);
  EXPECT_EQ(handled("OK"), 1.0);
}

TEST_F(SecurityTest, TokenOverTls) {
  Start({File("server.pem"), File("server.key"), "", File("token")});
  EXPECT_THAT(Analyze({File("ca.pem"), "", "", File("token")}), IsOk());
  EXPECT_EQ(Analyze({File("ca.pem"), "", "", ""}).code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(SecurityTest, BadCredentialFilesStopTheStartWithAnErrorNamingThem) {
  const auto start = [](ServerSecurity security) {
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.security = std::move(security);
    return AnalysisServer::Start(options).status();
  };
  absl::Status s = start({File("missing.pem"), File("server.key"), "", ""});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("--tls_cert"));
  EXPECT_THAT(s.message(), HasSubstr("missing.pem"));
  s = start({File("server.pem"), File("san.ext"), "", ""});
  EXPECT_THAT(s.message(), HasSubstr("--tls_key"));
  EXPECT_THAT(s.message(), HasSubstr("is not PEM"));
  s = start({File("server.pem"), "", "", ""});
  EXPECT_THAT(s.message(), HasSubstr("go together"));
  s = start({"", "", File("ca.pem"), ""});
  EXPECT_THAT(s.message(), HasSubstr("--tls_client_ca needs"));
  s = start({"", "", "", File("missing-token")});
  EXPECT_THAT(s.message(), HasSubstr("--token_file"));
  ASSERT_TRUE(WriteFile(File("empty-token"), "\n").ok());
  s = start({"", "", "", File("empty-token")});
  EXPECT_THAT(s.message(), HasSubstr("is empty"));
}

TEST_F(SecurityTest, ClientSideCredentialErrorsAreClear) {
  Start({});
  EXPECT_THAT(Analyze({File("missing-ca.pem"), "", "", ""}).message(), HasSubstr("--tls_ca"));
  EXPECT_THAT(Analyze({"", File("client.pem"), File("client.key"), ""}).message(),
              HasSubstr("needs --tls_ca"));
  EXPECT_THAT(Analyze({"", "", "", File("missing-token")}).message(), HasSubstr("--token_file"));
}

}  // namespace
}  // namespace cl

// cl-client: analyze a session capture in-process or on a cl-server; check a server's health.
// Flags are read here and nowhere else.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "capture/capture_io.h"
#include "client/analyze_client.h"
#include "client/exit_codes.h"
#include "common/file_io.h"
#include "service/render/render.h"

ABSL_FLAG(std::string, base, "", "a base capture (the same model at an earlier commit or torch version) to diff against");
ABSL_FLAG(std::string, server, "", "analyze on this cl-server (HOST:PORT or a gRPC target) instead of in-process");
ABSL_FLAG(std::string, html, "", "write the self-contained HTML report here");
ABSL_FLAG(std::string, json, "", "write the JSON report here");
ABSL_FLAG(std::vector<std::string>, passes, {}, "run only these passes (comma-separated); default: all");
ABSL_FLAG(std::string, gpu, "", "GPU to model for the roofline (overrides the capture's session.gpu)");
ABSL_FLAG(std::string, db, "", "a correctness.toml to rate lint findings with");
ABSL_FLAG(absl::Duration, deadline, absl::Seconds(120), "give up on the server after this long");
ABSL_FLAG(int, threads, 0, "in-process analysis threads; 0 = one per hardware thread");
ABSL_FLAG(std::string, color, "auto", "colour the summary: auto (on a terminal), always, never");
ABSL_FLAG(bool, quiet, false, "print no summary");

namespace {

constexpr char kUsage[] = R"(compile-lens client: explain a torch.compile session.

Usage:
  cl-client analyze HEAD.cls.json [--base BASE.cls.json] [--server HOST:PORT] [--html F] [--json F]
                    [--passes recompile,...] [--gpu NAME] [--db correctness.toml] [--deadline 120s]
  cl-client health --server HOST:PORT

With no --server the analysis runs in-process; with one, the capture is streamed to cl-server.
Either way the report is the same. Captures are .cls.json (proto3 JSON) or .cls.pb (binary).

Examples:
  cl-client analyze examples/hero/head.cls.json --base examples/hero/base.cls.json \
      --html hero.html --json hero.report.json
  cl-client analyze s.cls.json --server 127.0.0.1:50051 --passes recompile
  cl-client health --server 127.0.0.1:50051

Exit codes:
  0  the analysis ran (the report says what it found)
  1  internal error
  2  usage error
  3  the input was refused (unreadable file, malformed capture, unknown pass); the message says why
  4  the server was unavailable, overloaded or too slow (UNAVAILABLE, RESOURCE_EXHAUSTED,
     DEADLINE_EXCEEDED); safe to retry

Flags:)";

int Fail(const absl::Status& status) {
  std::cerr << "cl-client: " << absl::StatusCodeToString(status.code()) << ": " << status.message() << "\n";
  return cl::ExitCodeFor(status);
}

int Usage(const std::string& why) {
  std::cerr << "cl-client: " << why << "\nRun 'cl-client --help' for usage.\n";
  return cl::kExitUsage;
}

bool UseColor() {
  const std::string mode = absl::GetFlag(FLAGS_color);
  if (mode == "always") return true;
  if (mode == "never") return false;
  return isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr;
}

int Analyze(const std::string& head_path) {
  cl::AssembledCaptures captures;
  absl::StatusOr<cl::v1::SessionCapture> head = cl::ReadCaptureFile(head_path);
  if (!head.ok()) return Fail(head.status());
  captures.head = std::move(*head);
  if (const std::string base_path = absl::GetFlag(FLAGS_base); !base_path.empty()) {
    absl::StatusOr<cl::v1::SessionCapture> base = cl::ReadCaptureFile(base_path);
    if (!base.ok()) return Fail(base.status());
    captures.base = std::move(*base);
  }

  cl::v1::AnalyzeOptions options;
  for (const std::string& pass : absl::GetFlag(FLAGS_passes)) options.add_passes(pass);
  options.set_gpu(absl::GetFlag(FLAGS_gpu));
  options.set_render_html(!absl::GetFlag(FLAGS_html).empty());
  if (const std::string db = absl::GetFlag(FLAGS_db); !db.empty()) {
    absl::StatusOr<std::string> text = cl::ReadFile(db);
    if (!text.ok()) return Fail(text.status());
    options.set_correctness_db(*text);
  }

  const std::string server = absl::GetFlag(FLAGS_server);
  absl::StatusOr<cl::v1::AnalyzeResponse> response =
      server.empty() ? cl::AnalyzeInProcess(captures, options, absl::GetFlag(FLAGS_threads))
                     : cl::AnalyzeRemote(captures, options, {server, absl::GetFlag(FLAGS_deadline)});
  if (!response.ok()) return Fail(response.status());

  if (const std::string html = absl::GetFlag(FLAGS_html); !html.empty()) {
    if (absl::Status s = cl::WriteFile(html, response->html()); !s.ok()) return Fail(s);
  }
  if (const std::string json = absl::GetFlag(FLAGS_json); !json.empty()) {
    absl::StatusOr<std::string> text = cl::RenderJson(response->report());
    if (!text.ok()) return Fail(text.status());
    if (absl::Status s = cl::WriteFile(json, *text); !s.ok()) return Fail(s);
  }
  if (!absl::GetFlag(FLAGS_quiet)) std::cout << cl::RenderText(response->report(), UseColor());
  return cl::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) return Usage("no command (analyze, health)");
  const std::string command = args[1];
  if (command == "analyze") {
    if (args.size() != 3) return Usage("analyze takes one capture file");
    return Analyze(args[2]);
  }
  if (command == "health") {
    if (args.size() != 2) return Usage("health takes no arguments");
    const std::string server = absl::GetFlag(FLAGS_server);
    if (server.empty()) return Usage("health needs --server HOST:PORT");
    const absl::Status s = cl::CheckHealth(server, "", absl::GetFlag(FLAGS_deadline));
    if (!s.ok()) return Fail(s);
    std::cout << server << ": SERVING\n";
    return cl::kExitOk;
  }
  return Usage("unknown command \"" + command + "\" (analyze, health)");
}

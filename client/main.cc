// cl-client: analyze a session capture in-process or on a cl-server, upload sessions (with a spool
// for when the server is away), check a server's health.
// Flags are read here and nowhere else.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "capture/capture_io.h"
#include "capture/schema.h"
#include "capture/torch_trace/importer.h"
#include "client/analyze_client.h"
#include "client/command_line.h"
#include "client/exit_codes.h"
#include "client/inputs.h"
#include "client/upload.h"
#include "common/file_io.h"
#include "service/render/render.h"

ABSL_FLAG(std::string, base, "",
          "a base capture (the same model at an earlier commit or torch version) to diff against");
ABSL_FLAG(std::string, server, "",
          "analyze on this cl-server (HOST:PORT or a gRPC target) instead of in-process");
ABSL_FLAG(std::string, html, "", "write the self-contained HTML report here");
ABSL_FLAG(std::string, json, "", "write the JSON report here");
ABSL_FLAG(std::vector<std::string>, passes, {},
          "run only these passes (comma-separated); default: all");
ABSL_FLAG(std::string, gpu, "",
          "GPU to model for the roofline (overrides the capture's session.gpu)");
ABSL_FLAG(
    std::string, db, "",
    "a correctness.toml (lint/correctness.toml ships with compile-lens) that rates the lint "
    "findings: "
    "severity, remedy, issue links; an invalid one is refused (exit 3) with the line it fails on");
ABSL_FLAG(absl::Duration, deadline, absl::Seconds(120), "give up on the server after this long");
ABSL_FLAG(int, threads, 0, "in-process analysis threads; 0 = one per hardware thread");
ABSL_FLAG(std::string, color, "auto", "colour the summary: auto (on a terminal), always, never");
ABSL_FLAG(bool, quiet, false, "print no summary");
// Reading TORCH_TRACE logs.
ABSL_FLAG(std::string, o, "",
          "import-trace: the capture to write (.cls.json, or .cls.pb for binary)");
ABSL_FLAG(bool, latest, false, "a directory holding several non-rank logs: take the newest");
ABSL_FLAG(bool, sources, true, "read the user source files the trace names (--no-sources to skip)");
ABSL_FLAG(std::vector<std::string>, path_map, {},
          "FROM=TO[,FROM=TO...]: a trace path prefix and where those files are here, for reading "
          "sources");
ABSL_FLAG(int, rank, -1,
          "a multi-rank directory: the rank to analyze or write (default: the lowest)");
ABSL_FLAG(bool, all_ranks, false,
          "a multi-rank directory: analyze every rank (outputs get .rank<N> before the extension)");
ABSL_FLAG(bool, raw, false,
          "with --server and a log: send the raw log and let the server import it");
// Session facts a log does not record.
ABSL_FLAG(std::vector<std::string>, label, {},
          "KEY=VALUE[,KEY=VALUE...] fleet labels for the session (cluster, model, ...)");
ABSL_FLAG(std::string, torch_version, "", "the session's torch version");
ABSL_FLAG(std::string, host, "", "the session's host");
ABSL_FLAG(std::string, project_root, "",
          "the project root the trace's paths are under; locations are reported relative to it");
ABSL_FLAG(std::string, session_id, "", "the session id (default: one derived from the log)");
// Transport security (cl-server --tls_cert/--tls_key/--tls_client_ca/--token_file).
ABSL_FLAG(std::string, tls_ca, "", "PEM roots for the server's certificate: connect with TLS");
ABSL_FLAG(std::string, tls_cert, "",
          "this client's PEM certificate, for servers that require mTLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "this client's PEM private key (with --tls_cert)");
ABSL_FLAG(std::string, token_file, "", "a file holding the bearer token the server expects");
// Uploads.
ABSL_FLAG(std::string, spool, "",
          "upload / spool: where undeliverable sessions wait (default $CL_SPOOL_DIR, else "
          "~/.cache/compile-lens/spool)");

namespace {

constexpr char kUsage[] = R"(compile-lens client: explain a torch.compile session.

Usage:
  cl-client analyze HEAD [--base BASE] [--server HOST:PORT [--raw]] [--html F] [--json F] [--all-ranks]
                    [--passes recompile,...] [--gpu NAME] [--db correctness.toml] [--deadline 120s]
  cl-client import-trace LOG|DIR -o s.cls.json [--latest] [--rank N] [--no-sources] [--path-map FROM=TO]
  cl-client upload CAPTURE|LOG|DIR --server HOST:PORT [--deadline 120s] [--spool DIR] [--label K=V,...]
  cl-client spool flush --server HOST:PORT [--spool DIR] [--deadline 120s]
  cl-client spool list [--spool DIR]
  cl-client health --server HOST:PORT

HEAD and BASE are captures (.cls.json, .cls.pb) or TORCH_TRACE logs (.log, .log.gz, or a directory:
its rank logs dedicated_log_torch_trace_rank_<N>_*.log, or its one log, or --latest). With no
--server the analysis runs in-process; with one, the capture is streamed to cl-server (with --raw
the log itself is streamed and imported server-side). Either way the report is the same. Session
facts a log does not record can be given: --gpu, --label K=V,K=V, --torch-version, --host,
--project-root, --session-id. Flags may be written with dashes or underscores.

upload is for a job's teardown: it retries UNAVAILABLE, RESOURCE_EXHAUSTED, ABORTED (the same
session is being analyzed), CANCELLED and DEADLINE_EXCEEDED with backoff until --deadline (all
attempts together), and if the server still has not taken the session, writes it to the spool and
exits 4 straight away; nothing is lost (a setup error, such as a token file that does not read or
credentials the server refuses, spools it too). `spool flush` sends what waits there and removes
each session once the server analyzed it; it stops, leaving every file, at a setup error. A session
the server refuses as bad input (INVALID_ARGUMENT) is not spooled (exit 3). List flags (--label,
--passes, --path-map) may be given more than once: every occurrence counts.

Examples:
  cl-client analyze examples/hero/head.cls.json --base examples/hero/base.cls.json \
      --html hero.html --json hero.report.json
  cl-client analyze /tmp/trace_dir --gpu H100-SXM --label cluster=a,model=llama
  cl-client import-trace run.log.gz -o run.cls.json --project-root /workspace
  cl-client analyze s.cls.json --server 127.0.0.1:50051 --passes recompile
  cl-client analyze examples/hero/head.cls.json --db lint/correctness.toml --html hero.html
  cl-client upload /tmp/trace_dir --server dns:///compile-lens:50051 --deadline 30s --label model=llama
  cl-client spool flush --server dns:///compile-lens:50051
  cl-client health --server 127.0.0.1:50051

Exit codes:
  0  the analysis ran (the report says what it found)
  1  internal error
  2  usage error
  3  the input was refused (unreadable or corrupt file, malformed capture, unknown pass, invalid
     correctness DB, credentials the server refused); the message says why (for a DB: "correctness
     DB line N: ...")
  4  the server was unavailable, overloaded or too slow (UNAVAILABLE, RESOURCE_EXHAUSTED,
     DEADLINE_EXCEEDED); safe to retry. upload: the session is in the spool; spool flush: some
     sessions are still there

Flags:)";

int Fail(const absl::Status& status) {
  std::cerr << "cl-client: " << absl::StatusCodeToString(status.code()) << ": " << status.message()
            << "\n";
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

// --server and the transport flags.
cl::RemoteOptions Remote() {
  cl::RemoteOptions remote;
  remote.target = absl::GetFlag(FLAGS_server);
  remote.deadline = absl::GetFlag(FLAGS_deadline);
  remote.security = {absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
                     absl::GetFlag(FLAGS_tls_key), absl::GetFlag(FLAGS_token_file)};
  return remote;
}

// The import and session flags, read once.
absl::StatusOr<cl::InputOptions> ReadInputOptions() {
  cl::InputOptions in;
  in.import.latest = absl::GetFlag(FLAGS_latest);
  in.import.read_sources = absl::GetFlag(FLAGS_sources);
  for (const std::string& m : absl::GetFlag(FLAGS_path_map)) {
    absl::StatusOr<std::pair<std::string, std::string>> kv = cl::SplitAssignment(m, "path-map");
    if (!kv.ok()) return kv.status();
    in.import.path_map.push_back(*kv);
  }
  if (const int rank = absl::GetFlag(FLAGS_rank); rank >= 0) in.rank = rank;
  cl::SessionOverrides& o = in.overrides;
  for (const std::string& l : absl::GetFlag(FLAGS_label)) {
    absl::StatusOr<std::pair<std::string, std::string>> kv = cl::SplitAssignment(l, "label");
    if (!kv.ok()) return kv.status();
    o.labels[kv->first] = kv->second;
  }
  o.id = absl::GetFlag(FLAGS_session_id);
  o.gpu = absl::GetFlag(FLAGS_gpu);
  o.torch_version = absl::GetFlag(FLAGS_torch_version);
  o.host = absl::GetFlag(FLAGS_host);
  o.project_root = absl::GetFlag(FLAGS_project_root);
  in.import.project_root = o.project_root;
  return in;
}

int ImportTrace(const std::string& path) {
  const std::string out = absl::GetFlag(FLAGS_o);
  if (out.empty()) return Usage("import-trace needs -o OUT.cls.json");
  absl::StatusOr<cl::InputOptions> in = ReadInputOptions();
  if (!in.ok()) return Fail(in.status());
  absl::StatusOr<cl::v1::SessionCapture> capture = cl::LoadSession(path, *in);
  if (!capture.ok()) return Fail(capture.status());
  if (absl::Status s = cl::WriteCaptureFile(out, *capture); !s.ok()) return Fail(s);
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::cout << out << ": " << capture->frames_size() << " frame(s), " << capture->compiles_size()
              << " compile(s), " << capture->graphs_size() << " graph(s), "
              << capture->kernels_size() << " kernel(s), " << capture->sources_size()
              << " source file(s), " << capture->diagnostics_size() << " diagnostic(s)\n";
  }
  return cl::kExitOk;
}

// "out/hero.html" for rank 3 -> "out/hero.rank3.html".
std::string ForRank(const std::string& path, std::optional<int> rank) {
  if (!rank || path.empty()) return path;
  const std::filesystem::path p(path);
  return (p.parent_path() /
          (p.stem().string() + ".rank" + std::to_string(*rank) + p.extension().string()))
      .string();
}

// Writes what the flags ask for: the HTML and JSON reports and the summary.
int Deliver(const cl::v1::AnalyzeResponse& response, std::optional<int> rank) {
  if (const std::string html = ForRank(absl::GetFlag(FLAGS_html), rank); !html.empty()) {
    if (absl::Status s = cl::WriteFile(html, response.html()); !s.ok()) return Fail(s);
  }
  if (const std::string json = ForRank(absl::GetFlag(FLAGS_json), rank); !json.empty()) {
    absl::StatusOr<std::string> text = cl::RenderJson(response.report());
    if (!text.ok()) return Fail(text.status());
    if (absl::Status s = cl::WriteFile(json, *text); !s.ok()) return Fail(s);
  }
  if (!absl::GetFlag(FLAGS_quiet)) std::cout << cl::RenderText(response.report(), UseColor());
  return cl::kExitOk;
}

absl::StatusOr<cl::v1::AnalyzeResponse> Run(const cl::AssembledCaptures& captures,
                                            const cl::v1::AnalyzeOptions& options) {
  const std::string server = absl::GetFlag(FLAGS_server);
  if (server.empty()) return cl::AnalyzeInProcess(captures, options, absl::GetFlag(FLAGS_threads));
  return cl::AnalyzeRemote(captures, options, Remote());
}

// A multi-rank directory, every rank: one report each (rank N's files get ".rankN").
int AnalyzeAllRanks(const std::string& dir, const cl::InputOptions& in,
                    const cl::v1::AnalyzeOptions& options) {
  absl::StatusOr<std::vector<cl::v1::SessionCapture>> ranks = cl::ImportTrace(dir, in.import);
  if (!ranks.ok()) return Fail(ranks.status());
  for (cl::v1::SessionCapture& capture : *ranks) {
    cl::ApplyOverrides(in.overrides, &capture);
    const int rank = capture.session().rank();
    absl::StatusOr<cl::v1::AnalyzeResponse> response =
        Run({std::move(capture), std::nullopt}, options);
    if (!response.ok()) return Fail(response.status());
    if (const int code = Deliver(*response, rank); code != cl::kExitOk) return code;
  }
  return cl::kExitOk;
}

int Analyze(const std::string& head_path) {
  absl::StatusOr<cl::InputOptions> in = ReadInputOptions();
  if (!in.ok()) return Fail(in.status());
  cl::v1::AnalyzeOptions options;
  for (const std::string& pass : absl::GetFlag(FLAGS_passes)) options.add_passes(pass);
  options.set_render_html(!absl::GetFlag(FLAGS_html).empty());
  if (const std::string db = absl::GetFlag(FLAGS_db); !db.empty()) {
    absl::StatusOr<std::string> text = cl::ReadFile(db);
    if (!text.ok()) return Fail(text.status());
    options.set_correctness_db(*text);
  }
  const bool raw = absl::GetFlag(FLAGS_raw);
  const std::string base_path = absl::GetFlag(FLAGS_base);
  const std::string server = absl::GetFlag(FLAGS_server);

  if (absl::GetFlag(FLAGS_all_ranks)) {
    if (!std::filesystem::is_directory(head_path))
      return Usage("--all-ranks takes a directory of rank logs");
    if (raw || !base_path.empty()) return Usage("--all-ranks takes no --raw or --base");
    return AnalyzeAllRanks(head_path, *in, options);
  }

  if (raw) {
    if (server.empty()) return Usage("--raw needs --server");
    if (!base_path.empty()) return Usage("--raw streams one log; it takes no --base");
    if (!cl::IsTraceInput(head_path) || std::filesystem::is_directory(head_path)) {
      return Usage("--raw streams one TORCH_TRACE log file (.log or .log.gz)");
    }
    // The session facts given on the command line travel as a header the server applies.
    cl::v1::CaptureHeader header;
    cl::v1::SessionCapture facts;
    cl::ApplyOverrides(in->overrides, &facts);
    header.set_schema(cl::SchemaVersion());
    header.set_source_name(std::filesystem::path(head_path).filename().string());
    if (facts.has_session()) *header.mutable_session() = facts.session();
    absl::StatusOr<cl::v1::AnalyzeResponse> response =
        cl::AnalyzeRemoteTrace(head_path, header, options, Remote());
    if (!response.ok()) return Fail(response.status());
    return Deliver(*response, std::nullopt);
  }

  cl::AssembledCaptures captures;
  absl::StatusOr<cl::v1::SessionCapture> head = cl::LoadSession(head_path, *in);
  if (!head.ok()) return Fail(head.status());
  captures.head = std::move(*head);
  if (!base_path.empty()) {
    absl::StatusOr<cl::v1::SessionCapture> base = cl::LoadSession(base_path, *in);
    if (!base.ok()) return Fail(base.status());
    captures.base = std::move(*base);
  }
  absl::StatusOr<cl::v1::AnalyzeResponse> response = Run(captures, options);
  if (!response.ok()) return Fail(response.status());
  return Deliver(*response, std::nullopt);
}

cl::RetryPolicy UploadPolicy() {
  cl::RetryPolicy policy;
  policy.deadline = absl::GetFlag(FLAGS_deadline);
  return policy;
}

// upload: the session to the server, retried until --deadline, else into the spool.
int Upload(const std::string& path) {
  const std::string server = absl::GetFlag(FLAGS_server);
  if (server.empty()) return Usage("upload needs --server HOST:PORT");
  absl::StatusOr<cl::InputOptions> in = ReadInputOptions();
  if (!in.ok()) return Fail(in.status());
  absl::StatusOr<cl::v1::SessionCapture> capture = cl::LoadSession(path, *in);
  if (!capture.ok()) return Fail(capture.status());
  cl::v1::AnalyzeOptions options;
  cl::UploadOutcome outcome =
      cl::AnalyzeWithRetry({*capture, std::nullopt}, options, Remote(), UploadPolicy());
  if (outcome.response.ok()) {
    if (!absl::GetFlag(FLAGS_quiet)) {
      std::cout << "cl-client: uploaded session " << capture->session().id() << " to " << server
                << " (" << outcome.attempts << " attempt(s))\n";
    }
    return cl::kExitOk;
  }
  const absl::Status failure = outcome.response.status();
  if (cl::IsRefusedCapture(failure)) return Fail(failure);  // it would be refused again
  const std::string dir = cl::SpoolDir(absl::GetFlag(FLAGS_spool));
  absl::StatusOr<std::string> spooled = cl::SpoolCapture(dir, *capture);
  if (!spooled.ok()) {
    std::cerr << "cl-client: the session could not be delivered (" << failure.message()
              << ") nor spooled: " << spooled.status().message() << "\n";
    return cl::kExitInternal;
  }
  std::cerr << "cl-client: " << server << " did not take the session after " << outcome.attempts
            << " attempt(s) (" << absl::StatusCodeToString(failure.code()) << ": "
            << failure.message() << "); spooled to " << *spooled
            << " — send it later with: cl-client spool flush --server " << server << "\n";
  return cl::kExitUnavailable;
}

// spool flush | spool list.
int Spool(const std::string& action) {
  const std::string dir = cl::SpoolDir(absl::GetFlag(FLAGS_spool));
  if (action == "list") {
    absl::StatusOr<std::vector<std::string>> files = cl::SpooledFiles(dir);
    if (!files.ok()) return Fail(files.status());
    for (const std::string& f : *files) std::cout << f << "\n";
    return cl::kExitOk;
  }
  if (action != "flush") return Usage("spool takes flush or list");
  const std::string server = absl::GetFlag(FLAGS_server);
  if (server.empty()) return Usage("spool flush needs --server HOST:PORT");
  const cl::FlushResult result = cl::FlushSpool(dir, {}, Remote(), UploadPolicy());
  for (const std::string& e : result.errors) std::cerr << "cl-client: " << e << "\n";
  if (!absl::GetFlag(FLAGS_quiet)) {
    std::cout << "cl-client: " << result.delivered << " session(s) delivered, " << result.remaining
              << " left in " << dir << "\n";
  }
  return result.remaining == 0 ? cl::kExitOk : cl::kExitUnavailable;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  // --help lists this file's flags: absl's default looks for <program>.cc, and ours is main.cc.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "client/main.cc");
  };
  usage_config.contains_helpshort_flags = usage_config.contains_help_flags;
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<std::string> normalized =
      cl::NormalizeCommandLine(std::vector<std::string>(argv, argv + argc));
  std::vector<char*> normalized_argv;
  for (std::string& a : normalized) normalized_argv.push_back(a.data());
  std::vector<char*> args =
      absl::ParseCommandLine(static_cast<int>(normalized_argv.size()), normalized_argv.data());
  if (args.size() < 2) return Usage("no command (analyze, import-trace, upload, spool, health)");
  const std::string command = args[1];
  if (command == "analyze") {
    if (args.size() != 3) return Usage("analyze takes one capture file");
    return Analyze(args[2]);
  }
  if (command == "import-trace") {
    if (args.size() != 3) return Usage("import-trace takes one log file or directory");
    return ImportTrace(args[2]);
  }
  if (command == "upload") {
    if (args.size() != 3) return Usage("upload takes one capture, log or directory");
    return Upload(args[2]);
  }
  if (command == "spool") {
    if (args.size() != 3) return Usage("spool takes flush or list");
    return Spool(args[2]);
  }
  if (command == "health") {
    if (args.size() != 2) return Usage("health takes no arguments");
    const std::string server = absl::GetFlag(FLAGS_server);
    if (server.empty()) return Usage("health needs --server HOST:PORT");
    const absl::Status s = cl::CheckHealth(Remote(), "");
    if (!s.ok()) return Fail(s);
    std::cout << server << ": SERVING\n";
    return cl::kExitOk;
  }
  return Usage("unknown command \"" + command +
               "\" (analyze, import-trace, upload, spool, health)");
}
